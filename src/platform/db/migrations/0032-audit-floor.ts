import type { MigrationContext } from "./context";

/**
 * Issue 34, item 4: the audit log's recording and search at the floor.
 *
 * The chain sequencer (audit_chain_pending, migration 0007) linked its batch one event at a time: per
 * event a DELETE of its queue entry, an INSERT of its link into the partitioned audit_chain, each a
 * statement of its own, and then the application read every linked event again to publish it. With
 * eight concurrent writers on two cores that work competed with the writers' own inserts and record()
 * reached 0.60x of plain INSERTs. Now a run takes its batch off the queue in one DELETE … RETURNING,
 * reads the events in the same statement, computes the hashes in order (the chain stays one line:
 * each hash covers the previous one) and writes all its links with one INSERT. It returns each event
 * with its link, so the application publishes without reading the events again.
 *
 * What does not change: the advisory lock (one sequencer at a time across processes), the head row
 * locked and moved in the same transaction as the links, an entry leaving the queue exactly in the
 * transaction that links its event (an entry this snapshot cannot see yet stays), the hash function.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    DROP FUNCTION audit_chain_pending(int);

    -- Links up to max_links waiting events onto the chain, oldest recording first, and returns each new
    -- link with its event (as an audit_events row). Waits for a sequencer running elsewhere.
    CREATE FUNCTION audit_chain_pending(max_links int)
      RETURNS TABLE (event_id uuid, occurred_at timestamptz, seq bigint, prev_hash bytea, hash bytea, event audit_events)
      LANGUAGE plpgsql ROWS 100 AS $$
    DECLARE
      head_seq bigint;
      head_hash bytea;
      waiting record;
      seqs bigint[] := '{}';
      ids uuid[] := '{}';
      times timestamptz[] := '{}';
      prevs bytea[] := '{}';
      hashes bytea[] := '{}';
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('finance-gateway:audit-chain', 0));
      SELECT h.seq, h.hash INTO head_seq, head_hash FROM audit_chain_head h FOR UPDATE;
      FOR waiting IN
        -- Exactly the entries taken here leave the queue; one this snapshot cannot see yet (still committing) stays.
        WITH taken AS (
          DELETE FROM audit_unchained u
           WHERE u.position IN (SELECT q.position FROM audit_unchained q ORDER BY q.position LIMIT max_links)
          RETURNING u.position, u.event_id, u.occurred_at
        )
        -- Each entry looks its event up by key (LIMIT 1 keeps the planner from joining every event).
        SELECT t.position, (SELECT e FROM audit_events e WHERE e.occurred_at = t.occurred_at AND e.id = t.event_id LIMIT 1) AS row
          FROM taken t
         ORDER BY t.position
      LOOP
        -- Gone before it was linked (retention dropped its month): nothing left to chain.
        CONTINUE WHEN waiting.row IS NULL;
        event := waiting.row;
        event_id := event.id;
        occurred_at := event.occurred_at;
        seq := head_seq + 1;
        prev_hash := head_hash;
        hash := audit_event_hash(event.id, seq, event.occurred_at, event.event_type, event.severity, event.user_id,
          event.user_email, event.provider, event.action, event.resource_type, event.resource_id, event.resource_label,
          event.ip_address, event.user_agent, event.session_id, event.request_id, event.changes, event.error, prev_hash);
        seqs := seqs || seq;
        ids := ids || event_id;
        times := times || occurred_at;
        prevs := prevs || prev_hash;
        hashes := hashes || hash;
        head_seq := seq;
        head_hash := hash;
        RETURN NEXT;
      END LOOP;
      INSERT INTO audit_chain (seq, event_id, occurred_at, prev_hash, hash)
        SELECT * FROM unnest(seqs, ids, times, prevs, hashes);
      UPDATE audit_chain_head SET seq = head_seq, hash = head_hash;
    END
    $$;
  `);
}
