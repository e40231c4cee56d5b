import type { MigrationContext } from "./context";

/**
 * Issue 28: the audit product under abuse.
 *
 * 1. `audit_chain` is range-partitioned by month on occurred_at, like audit_events, with the same
 *    month bounds (UTC) and a default partition. Retention used to delete a dropped month's links row
 *    by row through the append-only trigger (about 13 s per million links); now the month's link
 *    partition is detached and dropped with its events, and a restored month gets an empty link
 *    partition that a release drops again. Partitioning needs the partition key in every unique
 *    constraint: the primary key becomes (seq, occurred_at) — seq stays unique because only the
 *    sequencer assigns it, one after the head, under its lock — and (occurred_at, event_id) stays
 *    unique. Existing links are copied into the new table, each into its month's partition; links of
 *    months with no event partition (detached months on their way out) land in the default partition,
 *    where retention's range delete still finds them.
 *    audit_create_month_partition creates both partitions of a month from now on.
 *
 * 2. Alert storms (docs/alerts.md, "Storm limits"): a rule may carry its own cool-down and firing cap
 *    (null = the instance's ALERT_COOLDOWN_SECONDS / ALERT_FIRING_CAP); alert_storms keeps, per rule, the
 *    current cap period, how many firings it let through and how many it held back, for the one digest
 *    sent when the period ends. A digest is a firing with `digest` true. A delivery a channel's send
 *    budget held back is kept as `suppressed`, with the reason.
 *
 * 3. Streaming destinations: a URL carrying credentials (user:password@, ?token=…) is kept sealed in
 *    `url_encrypted`; `url` holds the masked form shown to auditors and written into audit events.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    ALTER TABLE audit_chain RENAME TO audit_chain_unpartitioned;
    ALTER INDEX audit_chain_pkey RENAME TO audit_chain_unpartitioned_pkey;
    ALTER INDEX audit_chain_occurred_at_event_id_key RENAME TO audit_chain_unpartitioned_occurred_at_event_id_key;

    CREATE TABLE audit_chain (
      seq bigint NOT NULL,
      event_id uuid NOT NULL,
      -- The event's partition key: a link finds its event through the primary key (occurred_at, id).
      occurred_at timestamptz NOT NULL,
      prev_hash bytea,
      hash bytea NOT NULL
    ) PARTITION BY RANGE (occurred_at);
    CREATE TABLE audit_chain_default PARTITION OF audit_chain DEFAULT;

    -- The month's link partition unless it exists; false (and none created) when the default partition
    -- already holds links of that month.
    CREATE FUNCTION audit_create_chain_partition(month date) RETURNS boolean LANGUAGE plpgsql AS $$
    DECLARE
      first_day date := date_trunc('month', month)::date;
      lower_bound timestamptz := first_day::timestamp AT TIME ZONE 'UTC';
      upper_bound timestamptz := (first_day + interval '1 month')::timestamp AT TIME ZONE 'UTC';
      name text := format('audit_chain_y%sm%s', to_char(first_day, 'YYYY'), to_char(first_day, 'MM'));
      strays boolean;
    BEGIN
      IF to_regclass(name) IS NOT NULL THEN
        RETURN true;
      END IF;
      SELECT EXISTS (SELECT 1 FROM audit_chain_default WHERE occurred_at >= lower_bound AND occurred_at < upper_bound) INTO strays;
      IF strays THEN
        RETURN false;
      END IF;
      EXECUTE format('CREATE TABLE %I PARTITION OF audit_chain FOR VALUES FROM (%L) TO (%L)', name, lower_bound, upper_bound);
      RETURN true;
    END
    $$;

    -- One link partition per attached event month.
    SELECT audit_create_chain_partition(to_date(substr(c.relname, 15, 4) || substr(c.relname, 20, 2) || '01', 'YYYYMMDD'))
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'audit_events'::regclass AND c.relname ~ '^audit_events_y[0-9]{4}m[0-9]{2}$';

    INSERT INTO audit_chain (seq, event_id, occurred_at, prev_hash, hash)
      SELECT seq, event_id, occurred_at, prev_hash, hash FROM audit_chain_unpartitioned;
    DROP TABLE audit_chain_unpartitioned;

    ALTER TABLE audit_chain ADD PRIMARY KEY (seq, occurred_at), ADD UNIQUE (occurred_at, event_id);
    CREATE TRIGGER audit_chain_append_only BEFORE UPDATE OR DELETE ON audit_chain
      FOR EACH ROW EXECUTE FUNCTION audit_events_refuse_change();

    -- The trigger now fires on the partitions, under their own names.
    CREATE OR REPLACE FUNCTION audit_events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' AND (TG_TABLE_NAME = 'audit_chain' OR TG_TABLE_NAME LIKE 'audit\\_chain\\_%')
         AND TG_TABLE_NAME <> 'audit_chain_head'
         AND current_setting('finance_gateway.retention_drop', true) = 'on' THEN
        RETURN OLD;
      END IF;
      RAISE EXCEPTION 'audit events are append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
    END
    $$;

    -- A month's event partition and its link partition, created together from now on.
    CREATE OR REPLACE FUNCTION audit_create_month_partition(month date) RETURNS boolean LANGUAGE plpgsql AS $$
    DECLARE
      first_day date := date_trunc('month', month)::date;
      -- Months are UTC months whatever the session's TimeZone, so every process draws the same bounds.
      lower_bound timestamptz := first_day::timestamp AT TIME ZONE 'UTC';
      upper_bound timestamptz := (first_day + interval '1 month')::timestamp AT TIME ZONE 'UTC';
      name text := format('audit_events_y%sm%s', to_char(first_day, 'YYYY'), to_char(first_day, 'MM'));
      strays boolean;
    BEGIN
      -- Links go to the default partition when theirs cannot be made; the month still works.
      PERFORM audit_create_chain_partition(first_day);
      IF to_regclass(name) IS NOT NULL THEN
        RETURN true;
      END IF;
      SELECT EXISTS (SELECT 1 FROM audit_events_default WHERE occurred_at >= lower_bound AND occurred_at < upper_bound) INTO strays;
      IF strays THEN
        RETURN false;
      END IF;
      EXECUTE format('CREATE TABLE %I PARTITION OF audit_events FOR VALUES FROM (%L) TO (%L)', name, lower_bound, upper_bound);
      RETURN true;
    END
    $$;
    ANALYZE audit_chain;

    ALTER TABLE alert_rules
      ADD COLUMN cooldown_seconds integer CHECK (cooldown_seconds BETWEEN 0 AND 604800),
      ADD COLUMN firing_cap integer CHECK (firing_cap BETWEEN 1 AND 100000);

    CREATE TABLE alert_storms (
      rule_id uuid PRIMARY KEY REFERENCES alert_rules (id) ON DELETE CASCADE,
      -- The cap period: starts with the first firing after the previous one ended.
      period_start timestamptz NOT NULL,
      fired integer NOT NULL DEFAULT 0,
      -- Firings held back in this period (cool-down or cap) and the time of the first one, for the digest.
      suppressed integer NOT NULL DEFAULT 0,
      suppressed_since timestamptz,
      -- Which limit held the first one back: cooldown or cap.
      reason text,
      last_fired_at timestamptz,
      -- The chain position of the last event held back (the digest's seq).
      last_seq bigint
    );
    CREATE INDEX alert_storms_pending_idx ON alert_storms (period_start) WHERE suppressed > 0;

    ALTER TABLE alert_firings ADD COLUMN digest boolean NOT NULL DEFAULT false;
    ALTER TABLE alert_deliveries DROP CONSTRAINT alert_deliveries_status_check;
    ALTER TABLE alert_deliveries ADD CONSTRAINT alert_deliveries_status_check CHECK (status IN ('pending', 'sent', 'failed', 'suppressed'));
    CREATE INDEX alert_deliveries_channel_idx ON alert_deliveries (channel_id, created_at) WHERE NOT test;

    ALTER TABLE audit_stream_destinations ADD COLUMN url_encrypted text;
  `);
}
