import type { MigrationContext } from "./context";

/**
 * The chain sequencer no longer steps over the queue's deleted entries on every run.
 *
 * The sequencer takes its batch from the low end of audit_unchained's position index. Every entry it
 * ever took stays in that index, dead, until VACUUM removes it, and each run stepped over all of them
 * (and visited their heap rows) before reaching the first live one: with autovacuum away (off, busy, or
 * held back by any long transaction on the server) a run cost 4–10 ms after a few tens of thousands of
 * events instead of under 1 ms, which is most of what record() paid beyond a plain INSERT under a
 * steady load.
 *
 * Now the sequencer keeps a floor (audit_chain_head.queue_below, moved with the head in the same
 * UPDATE): a position at or below which no entry can exist any more, and starts its scan above it.
 *
 * The floor cannot simply follow the positions linked: a position is handed out when its entry is
 * inserted, and the transaction holding it may commit long after entries with higher positions were
 * linked. So a run marks the last position handed out (queue_mark) and, right after reading it, gives
 * its own transaction an id (queue_mark_bound). A position is handed out only once its transaction has
 * an id (the column's default, audit_queue_position()), and ids are handed out in order, so every
 * transaction that holds a position at or below the mark has an id below the bound. A later run finds
 * the mark settled once no transaction with an id below the bound is still running: then each entry up
 * to the mark is visible or gone for good, and a run that takes fewer entries than its batch size has
 * taken them all, so the floor moves up to the mark. A long transaction holds the floor where it is (the
 * scan starts lower, as before, and nothing is skipped). Once the floor lags FLOOR_LOOK_GAP positions
 * behind the mark, only this database's transactions count: one in another database of the server
 * cannot write this queue.
 *
 * Why a bound and not a snapshot taken after the mark (the first design, never released): a snapshot
 * lists as running only the ids below the newest id that has ended. A transaction that took a position
 * while no later transaction had ended yet is in no such list, so the mark looked settled while it was
 * still open, and its entry, committed later, was left below the floor, never linked.
 *
 * The bound must be an id handed out after the mark was read, so a run marks only when its transaction
 * had no id before (as the repository calls it: one statement of its own). The queue's positions come
 * from a plain sequence with CACHE 1 (its last value is the last position handed out, whichever session
 * took it), not an identity column, whose value is computed before the row's transaction has an id.
 * Entries must take the default: a position given explicitly could land below the floor.
 */
/** Positions between the floor and the mark past which only this database's transactions hold the floor. */
const FLOOR_LOOK_GAP = 10_000;

export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    DO $$
    DECLARE
      last_position bigint;
    BEGIN
      SELECT CASE WHEN s.is_called THEN s.last_value ELSE s.last_value - 1 END INTO last_position FROM audit_unchained_position_seq s;
      ALTER TABLE audit_unchained ALTER COLUMN position DROP IDENTITY;
      CREATE SEQUENCE audit_unchained_position_seq CACHE 1 OWNED BY audit_unchained.position;
      PERFORM setval('audit_unchained_position_seq', greatest(last_position, 1), last_position >= 1);
    END
    $$;

    -- The next queue position, handed out only once the transaction has its id (assigned here if it had
    -- none yet): the order the floor's bound relies on.
    CREATE FUNCTION audit_queue_position() RETURNS bigint LANGUAGE sql VOLATILE AS $$
      SELECT CASE WHEN pg_current_xact_id() IS NOT NULL THEN nextval('audit_unchained_position_seq') END
    $$;
    ALTER TABLE audit_unchained ALTER COLUMN position SET DEFAULT audit_queue_position();

    -- The sequencer's state beside the chain's head: every queue entry at or below queue_below has left
    -- the queue; queue_mark and queue_mark_bound are the candidate for the next floor (see above).
    ALTER TABLE audit_chain_head
      ADD COLUMN queue_below bigint NOT NULL DEFAULT 0,
      ADD COLUMN queue_mark bigint,
      ADD COLUMN queue_mark_bound xid8;

    DROP FUNCTION audit_chain_pending(int);

    -- Links up to max_links waiting events onto the chain, oldest recording first, and returns each new
    -- link with its event (as an audit_events row). Waits for a sequencer running elsewhere.
    CREATE FUNCTION audit_chain_pending(max_links int)
      RETURNS TABLE (event_id uuid, occurred_at timestamptz, seq bigint, prev_hash bytea, hash bytea, event audit_events)
      LANGUAGE plpgsql ROWS 100 AS $$
    DECLARE
      head_seq bigint;
      head_hash bytea;
      floor_below bigint;
      floor_mark bigint;
      floor_bound xid8;
      last_position bigint;
      fresh_bound xid8;
      now_snapshot pg_snapshot;
      mark_settled boolean := false;
      taken int := 0;
      waiting record;
      seqs bigint[] := '{}';
      ids uuid[] := '{}';
      times timestamptz[] := '{}';
      prevs bytea[] := '{}';
      hashes bytea[] := '{}';
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('finance-gateway:audit-chain', 0));
      -- The last position handed out; if this transaction has no id yet, it then takes one, which is above
      -- the id of every transaction holding a position up to that one: a new mark and its bound.
      SELECT CASE WHEN s.is_called THEN s.last_value ELSE s.last_value - 1 END INTO last_position FROM audit_unchained_position_seq s;
      IF pg_current_xact_id_if_assigned() IS NULL THEN
        fresh_bound := pg_current_xact_id();
      END IF;
      SELECT h.seq, h.hash, h.queue_below, h.queue_mark, h.queue_mark_bound
        INTO head_seq, head_hash, floor_below, floor_mark, floor_bound FROM audit_chain_head h FOR UPDATE;
      -- The stored mark is settled once no transaction with an id below its bound is running. A snapshot
      -- whose upper end is past the bound lists every such transaction still running (a bound from the
      -- future, in a database restored onto another server, never settles: it is dropped for a new mark).
      -- The batch below, read after this, then sees each entry up to the mark that committed.
      IF floor_bound IS NOT NULL THEN
        now_snapshot := pg_current_snapshot();
        IF pg_snapshot_xmax(now_snapshot) <= floor_bound AND floor_bound > fresh_bound THEN
          floor_mark := NULL;
          floor_bound := NULL;
        ELSIF pg_snapshot_xmax(now_snapshot) > floor_bound THEN
          mark_settled := NOT EXISTS (SELECT FROM pg_snapshot_xip(now_snapshot) AS x WHERE x < floor_bound);
          -- Far behind: a transaction of another database cannot hold an entry of this queue, so one the
          -- server names as another database's (a backend's or a prepared one) stops counting. One it does
          -- not name (ended since, or hidden from this role) still counts. Reading pg_stat_activity costs
          -- about what stepping over that many dead entries does (0.5 ms), so it is read only then, as of now.
          IF NOT mark_settled AND last_position - floor_below > ${FLOOR_LOOK_GAP} THEN
            PERFORM pg_stat_clear_snapshot();
            mark_settled := NOT EXISTS (
              SELECT FROM pg_snapshot_xip(now_snapshot) AS x
               WHERE x < floor_bound
                 AND NOT EXISTS (SELECT FROM pg_stat_activity a
                                  WHERE a.backend_xid = x::xid
                                    AND a.datid IS DISTINCT FROM (SELECT d.oid FROM pg_database d WHERE d.datname = current_database()))
                 AND NOT EXISTS (SELECT FROM pg_prepared_xacts p WHERE p.transaction = x::xid AND p.database <> current_database()));
          END IF;
        END IF;
      END IF;
      FOR waiting IN
        -- Exactly the entries taken here leave the queue; one this snapshot cannot see yet (still committing) stays.
        WITH taken AS (
          DELETE FROM audit_unchained u
           WHERE u.position IN (SELECT q.position FROM audit_unchained q WHERE q.position > floor_below ORDER BY q.position LIMIT max_links)
          RETURNING u.position, u.event_id, u.occurred_at
        )
        -- Each entry looks its event up by key (LIMIT 1 keeps the planner from joining every event).
        SELECT t.position, (SELECT e FROM audit_events e WHERE e.occurred_at = t.occurred_at AND e.id = t.event_id LIMIT 1) AS row
          FROM taken t
         ORDER BY t.position
      LOOP
        taken := taken + 1;
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
      -- A batch short of max_links took every visible entry above the floor: with the mark settled, that
      -- is every entry up to the mark. A full batch keeps the mark for the run that follows it.
      IF mark_settled AND taken < max_links THEN
        floor_below := greatest(floor_below, floor_mark);
        floor_mark := NULL;
        floor_bound := NULL;
      END IF;
      IF floor_bound IS NULL AND fresh_bound IS NOT NULL THEN
        floor_mark := last_position;
        floor_bound := fresh_bound;
      END IF;
      UPDATE audit_chain_head
         SET seq = head_seq, hash = head_hash, queue_below = floor_below, queue_mark = floor_mark, queue_mark_bound = floor_bound;
    END
    $$;
  `);
}
