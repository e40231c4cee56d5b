import type { MigrationContext } from "./context";

/**
 * The audit log, local sign-in and sessions.
 *
 * audit_events is range-partitioned by month on occurred_at (the primary key includes it, as
 * partitioning requires); a default partition catches rows outside the created months. Events are
 * hash-chained in `seq` order: audit_chain_head holds the last link, and its row lock is what
 * serialises writers so concurrent transactions cannot fork the chain. A trigger refuses UPDATE and
 * DELETE of events; retention removes whole partitions, which the trigger does not see.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE EXTENSION IF NOT EXISTS pg_trgm;

    CREATE TABLE audit_events (
      id uuid NOT NULL,
      seq bigint NOT NULL,
      occurred_at timestamptz NOT NULL,
      event_type text NOT NULL,
      severity text NOT NULL CHECK (severity IN ('info', 'warning', 'error', 'critical')),
      user_id uuid,
      user_email text,
      provider text,
      action text,
      resource_type text,
      resource_id text,
      resource_label text,
      ip_address inet,
      user_agent text,
      session_id text,
      request_id text,
      changes jsonb,
      error text,
      prev_hash bytea,
      hash bytea NOT NULL,
      search_text text GENERATED ALWAYS AS (lower(
        event_type || ' ' || coalesce(user_email, '') || ' ' || coalesce(provider, '') || ' ' ||
        coalesce(action, '') || ' ' || coalesce(resource_type, '') || ' ' || coalesce(resource_id, '') || ' ' ||
        coalesce(resource_label, '') || ' ' || coalesce(host(ip_address), '') || ' ' || coalesce(user_agent, '') || ' ' ||
        coalesce(error, '') || ' ' || coalesce(changes::text, '')
      )) STORED,
      PRIMARY KEY (occurred_at, id)
    ) PARTITION BY RANGE (occurred_at);

    CREATE TABLE audit_events_default PARTITION OF audit_events DEFAULT;

    CREATE INDEX audit_events_recent_idx ON audit_events (occurred_at DESC, id DESC);
    CREATE INDEX audit_events_user_idx ON audit_events (user_id, occurred_at DESC, id DESC);
    CREATE INDEX audit_events_type_idx ON audit_events (event_type, occurred_at DESC, id DESC);
    CREATE INDEX audit_events_provider_idx ON audit_events (provider, occurred_at DESC, id DESC) WHERE provider IS NOT NULL;
    CREATE INDEX audit_events_severity_idx ON audit_events (severity, occurred_at DESC, id DESC);
    CREATE INDEX audit_events_seq_idx ON audit_events (seq);
    CREATE INDEX audit_events_search_idx ON audit_events USING gin (search_text gin_trgm_ops);
    CREATE INDEX audit_events_ip_idx ON audit_events USING gist (ip_address inet_ops);

    CREATE TABLE audit_chain_head (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      seq bigint NOT NULL,
      hash bytea
    );
    INSERT INTO audit_chain_head (id, seq, hash) VALUES (true, 0, NULL);

    CREATE FUNCTION audit_events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'audit events are append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
    END
    $$;
    CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
      FOR EACH ROW EXECUTE FUNCTION audit_events_refuse_change();

    -- Creates the month's partition unless it exists. A month whose range already has rows in the
    -- default partition is skipped (attaching would fail); it returns false then.
    CREATE FUNCTION audit_create_month_partition(month date) RETURNS boolean LANGUAGE plpgsql AS $$
    DECLARE
      first_day date := date_trunc('month', month)::date;
      -- Months are UTC months whatever the session's TimeZone, so every process draws the same bounds.
      lower_bound timestamptz := first_day::timestamp AT TIME ZONE 'UTC';
      upper_bound timestamptz := (first_day + interval '1 month')::timestamp AT TIME ZONE 'UTC';
      name text := format('audit_events_y%sm%s', to_char(first_day, 'YYYY'), to_char(first_day, 'MM'));
      strays boolean;
    BEGIN
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

    -- The chain link of one event: SHA-256 over a canonical JSON rendering of its content followed by the
    -- previous event's hash. Recording and verification both call this, so they cannot disagree on the
    -- rendering of a timestamp, an address or a JSON document.
    CREATE FUNCTION audit_event_hash(
      id uuid, seq bigint, occurred_at timestamptz, event_type text, severity text, user_id uuid, user_email text,
      provider text, action text, resource_type text, resource_id text, resource_label text, ip_address inet,
      user_agent text, session_id text, request_id text, changes jsonb, error text, prev_hash bytea
    ) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
      SELECT sha256(convert_to(json_build_array(
        id, seq, to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), event_type, severity, user_id,
        user_email, provider, action, resource_type, resource_id, resource_label, host(ip_address), user_agent, session_id,
        request_id, changes, error
      )::text, 'UTF8') || coalesce(prev_hash, ''::bytea))
    $$;

    CREATE TABLE audit_saved_searches (
      id uuid PRIMARY KEY,
      owner_user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      name text NOT NULL,
      filter jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX audit_saved_searches_owner_name_key ON audit_saved_searches (owner_user_id, lower(name));

    ALTER TABLE users
      ADD COLUMN password_hash text,
      ADD COLUMN failed_login_count integer NOT NULL DEFAULT 0,
      ADD COLUMN locked_until timestamptz;

    CREATE TABLE auth_sessions (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      method text NOT NULL,
      provider text,
      secret_hash bytea NOT NULL UNIQUE,
      ip_address inet,
      user_agent text,
      expires_at timestamptz NOT NULL,
      ended_at timestamptz,
      end_reason text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX auth_sessions_user_idx ON auth_sessions (user_id);
    CREATE INDEX auth_sessions_open_idx ON auth_sessions (expires_at) WHERE ended_at IS NULL;

    CREATE TABLE auth_tokens (
      id uuid PRIMARY KEY,
      session_id uuid NOT NULL REFERENCES auth_sessions (id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
      token_hash bytea NOT NULL UNIQUE,
      expires_at timestamptz NOT NULL,
      rotated_at timestamptz,
      revoked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX auth_tokens_session_idx ON auth_tokens (session_id);
  `);
  await sequelize.query(`SELECT audit_create_month_partition((date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => m))::date)
    FROM generate_series(-1, 3) AS m`);
}
