import type { MigrationContext } from "./context";

/**
 * Takes the hash chain out of the recording transaction, and gives e-mail searches and address
 * prefixes indexes that stay fast at tens of millions of events.
 *
 * Before: each record() locked the chain head inside the caller's transaction, so every transaction
 * that recorded an event waited for the previous one to commit (a single lane through the commit's
 * disk flush). Now record() inserts the event and a row in audit_unchained, both in the caller's
 * transaction and without a shared lock, so an event still commits or rolls back with its change. A
 * sequencer (audit_chain_pending, run right after commits and on a schedule) chains committed events
 * into audit_chain in the order they are found, under an advisory lock so one sequencer runs at a time
 * across processes; it moves audit_chain_head with each batch. An event is either waiting in
 * audit_unchained or linked in audit_chain, never neither: the sequencer links and unqueues it in one
 * transaction. An event that is neither was inserted behind the application's back.
 *
 * The links the events carried so far move to audit_chain unchanged: a link's hash is still
 * audit_event_hash over the event's content, the link's seq and its prev_hash, so they verify as before.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE audit_chain (
      seq bigint NOT NULL,
      event_id uuid NOT NULL,
      -- The event's partition key: a link finds its event through the primary key (occurred_at, id).
      occurred_at timestamptz NOT NULL,
      prev_hash bytea,
      hash bytea NOT NULL
    );
    INSERT INTO audit_chain (seq, event_id, occurred_at, prev_hash, hash)
      SELECT seq, id, occurred_at, prev_hash, hash FROM audit_events ORDER BY seq;
    -- Keyed by the event's time first: links are made soon after their events, so new entries land on the
    -- index's last pages instead of a random page of a large index of random UUIDs.
    ALTER TABLE audit_chain ADD PRIMARY KEY (seq), ADD UNIQUE (occurred_at, event_id);
    CREATE TRIGGER audit_chain_append_only BEFORE UPDATE OR DELETE ON audit_chain
      FOR EACH ROW EXECUTE FUNCTION audit_events_refuse_change();

    ALTER TABLE audit_events DROP COLUMN seq, DROP COLUMN prev_hash, DROP COLUMN hash;

    CREATE TABLE audit_unchained (
      position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      event_id uuid NOT NULL UNIQUE,
      occurred_at timestamptz NOT NULL
    );

    -- Links up to max_links waiting events onto the chain, oldest recording first, and returns the new
    -- links. Waits for a sequencer running elsewhere: the advisory lock keeps the chain a single line.
    CREATE FUNCTION audit_chain_pending(max_links int)
      RETURNS TABLE (event_id uuid, occurred_at timestamptz, seq bigint, prev_hash bytea, hash bytea)
      LANGUAGE plpgsql ROWS 100 AS $$
    DECLARE
      head_seq bigint;
      head_hash bytea;
      waiting record;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('finance-gateway:audit-chain', 0));
      SELECT h.seq, h.hash INTO head_seq, head_hash FROM audit_chain_head h FOR UPDATE;
      FOR waiting IN
        -- Each entry looks its event up by key (LIMIT 1 keeps the planner from joining every event).
        SELECT u.position, e.* FROM (SELECT * FROM audit_unchained ORDER BY position LIMIT max_links) AS u
          LEFT JOIN LATERAL (SELECT * FROM audit_events e WHERE e.occurred_at = u.occurred_at AND e.id = u.event_id LIMIT 1) AS e ON true
         ORDER BY u.position
      LOOP
        -- Exactly the entries linked here leave the queue; one this snapshot cannot see yet (still committing) stays.
        DELETE FROM audit_unchained u WHERE u.position = waiting.position;
        -- Gone before it was linked (retention dropped its month): nothing left to chain.
        CONTINUE WHEN waiting.id IS NULL;
        event_id := waiting.id;
        occurred_at := waiting.occurred_at;
        seq := head_seq + 1;
        prev_hash := head_hash;
        hash := audit_event_hash(waiting.id, seq, waiting.occurred_at, waiting.event_type, waiting.severity, waiting.user_id,
          waiting.user_email, waiting.provider, waiting.action, waiting.resource_type, waiting.resource_id, waiting.resource_label,
          waiting.ip_address, waiting.user_agent, waiting.session_id, waiting.request_id, waiting.changes, waiting.error, prev_hash);
        INSERT INTO audit_chain (seq, event_id, occurred_at, prev_hash, hash) VALUES (seq, event_id, occurred_at, prev_hash, hash);
        head_seq := seq;
        head_hash := hash;
        RETURN NEXT;
      END LOOP;
      UPDATE audit_chain_head SET seq = head_seq, hash = head_hash;
    END
    $$;

    -- Whole e-mail addresses in an event's search text. A search word shaped like an address matches
    -- through this index: the trigram index cannot narrow such a word, whose trigrams (com, exa, …) are
    -- in nearly every row. The service's live matcher applies the same pattern.
    CREATE FUNCTION audit_email_terms(search_text text) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT coalesce(array_agg(DISTINCT m[1]), '{}')
        FROM regexp_matches(search_text, '([a-z0-9._%+-]+@[a-z0-9-]+(\\.[a-z0-9-]+)*\\.[a-z]{2,})', 'g') AS m
    $$;
    CREATE INDEX audit_events_email_idx ON audit_events USING gin (audit_email_terms(search_text));

    -- An address prefix (10.1.* is 10.1.0.0/16) is a range of a B-tree on the address, and the included
    -- columns answer the other filters and the ordering of a page from the index alone; the GiST index
    -- had to visit every row of the prefix in the table.
    DROP INDEX audit_events_ip_idx;
    CREATE INDEX audit_events_ip_idx ON audit_events (ip_address) INCLUDE (occurred_at, id, provider, severity, event_type);
    ANALYZE audit_events;
  `);
}
