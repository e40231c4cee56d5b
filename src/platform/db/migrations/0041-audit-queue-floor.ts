import type { MigrationContext } from "./context";

/**
 * Issue 34, item 4: the chain sequencer no longer walks the queue's deleted entries on every run.
 *
 * The sequencer takes its batch from the low end of audit_unchained's position index. Every entry it
 * ever took stays in that index, dead, until VACUUM removes it, and each run stepped over all of them
 * (and visited their heap rows) before reaching the first live one: with autovacuum away (off, busy,
 * or held back by any long transaction on the server) a run cost 4–10 ms after a few tens of thousands
 * of events instead of under 1 ms, per run, so per event most of what record() paid beyond a plain
 * INSERT under a steady load.
 *
 * Now the sequencer keeps a floor (audit_chain_head.queue_below, moved with the head in the same
 * UPDATE): a position at or below which no entry can exist any more, and starts its scan above it. The
 * floor cannot simply follow the positions linked: a position is handed out when the entry is
 * inserted, and the transaction holding it may commit long after entries with higher positions were
 * linked. So a run marks the last position handed out (`queue_mark`) and then the transactions still
 * running (`queue_marked`, a snapshot taken after reading the mark). A position is handed out only
 * after its transaction has an id (the column's default, audit_queue_position()), so any transaction
 * that can still add an entry at or below the mark is in the snapshot. Once every transaction of the
 * snapshot has ended, each entry up to the mark is either visible or gone for good; a run that then
 * finds fewer entries than its batch size has taken them all, and the floor moves up to the mark. A
 * long transaction holds the floor where it is: the scan then starts lower, as before, and nothing is
 * skipped. Once the floor lags FLOOR_LOOK_GAP positions behind the mark, only this database's
 * transactions count (pg_stat_activity and pg_prepared_xacts name each one's database; one elsewhere
 * on the server cannot write this queue).
 *
 * The queue's positions come from a plain sequence (CACHE 1: its last value is the last position
 * handed out) instead of an identity column, whose value is computed before the row's transaction is
 * given an id. Entries must take the default: a position given explicitly could land below the floor.
 */
/** Positions between the floor and a mark past which the sequencer looks which transactions belong to this database. */
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

    -- The next queue position, handed out only once the transaction has its id (assigned here if it
    -- had none yet): the order audit_chain_pending's floor relies on.
    CREATE FUNCTION audit_queue_position() RETURNS bigint LANGUAGE sql VOLATILE AS $$
      SELECT CASE WHEN pg_current_xact_id() IS NOT NULL THEN nextval('audit_unchained_position_seq') END
    $$;
    ALTER TABLE audit_unchained ALTER COLUMN position SET DEFAULT audit_queue_position();

    -- The sequencer's state beside the chain's head: every queue entry at or below queue_below has left
    -- the queue; queue_mark and queue_marked are the candidate for the next floor (see above).
    ALTER TABLE audit_chain_head
      ADD COLUMN queue_below bigint NOT NULL DEFAULT 0,
      ADD COLUMN queue_mark bigint,
      ADD COLUMN queue_marked pg_snapshot;

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
      floor_marked pg_snapshot;
      mark_settled boolean;
      taken int := 0;
      waiting record;
      seqs bigint[] := '{}';
      ids uuid[] := '{}';
      times timestamptz[] := '{}';
      prevs bytea[] := '{}';
      hashes bytea[] := '{}';
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtextextended('finance-gateway:audit-chain', 0));
      SELECT h.seq, h.hash, h.queue_below, h.queue_mark, h.queue_marked
        INTO head_seq, head_hash, floor_below, floor_mark, floor_marked FROM audit_chain_head h FOR UPDATE;
      -- Whether every transaction that could still add an entry at or below the mark has ended (the batch
      -- below, read after this, then sees each such entry that committed): first against this
      -- statement's snapshot, which names the running transactions of every database on the server.
      -- Only this database's, prepared ones included, can write its queue, so past a gap of
      -- FLOOR_LOOK_GAP positions a long transaction elsewhere does not hold the floor: reading
      -- pg_stat_activity costs about what stepping over that many dead entries does (0.5 ms), so it
      -- is read only then, as of now (not as first read in this transaction).
      mark_settled := floor_marked IS NOT NULL AND NOT EXISTS (
        SELECT FROM pg_snapshot_xip(floor_marked) AS x WHERE NOT pg_visible_in_snapshot(x, pg_current_snapshot()));
      IF floor_marked IS NOT NULL AND NOT mark_settled AND floor_mark - floor_below > ${FLOOR_LOOK_GAP} THEN
        PERFORM pg_stat_clear_snapshot();
        mark_settled := NOT EXISTS (
          SELECT FROM pg_snapshot_xip(floor_marked) AS x
           WHERE NOT pg_visible_in_snapshot(x, pg_current_snapshot())
             AND x::xid IN (SELECT a.backend_xid FROM pg_stat_activity a
                             WHERE a.datid = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
                            UNION ALL
                            SELECT p.transaction FROM pg_prepared_xacts p WHERE p.database = current_database()));
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
        floor_marked := NULL;
      END IF;
      -- A new mark when there is none, or when it names transactions this server has not started yet (a
      -- database restored from another server's backup): it would never settle. Only under READ
      -- COMMITTED, where the snapshot below is taken after the sequence is read (a REPEATABLE READ
      -- caller's snapshot is older than the read).
      IF (floor_marked IS NULL OR pg_snapshot_xmax(floor_marked) > pg_snapshot_xmax(pg_current_snapshot()))
         AND current_setting('transaction_isolation') = 'read committed' THEN
        SELECT CASE WHEN s.is_called THEN s.last_value ELSE s.last_value - 1 END INTO floor_mark FROM audit_unchained_position_seq s;
        SELECT pg_current_snapshot() INTO floor_marked; -- a statement of its own: a snapshot taken after the read above
      END IF;
      UPDATE audit_chain_head
         SET seq = head_seq, hash = head_hash, queue_below = floor_below, queue_mark = floor_mark, queue_marked = floor_marked;
    END
    $$;
  `);
}
