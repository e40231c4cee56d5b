import type { MigrationContext } from "./context";

/**
 * Audit events leave the building (issue 13). Destinations (webhooks, SIEMs) consume the committed,
 * chain-linked audit stream: each is a consumer with a position in audit_chain.seq, advanced in the
 * same transaction that records the outcome of a batch. No row per event and destination is ever
 * written; the delivery log keeps one row per attempt and is pruned by age.
 *
 * audit_stream_consumers is generic (a destination is one kind of consumer; the alert evaluator is
 * another): the position, the retry state of the batch after it, the lease of the worker delivering it.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE audit_stream_consumers (
      id text PRIMARY KEY,
      -- The last chain sequence number handled: delivered, or skipped by the consumer's filter.
      position bigint NOT NULL CHECK (position >= 0),
      paused boolean NOT NULL DEFAULT false,
      -- Retries exhausted: no automatic attempts until resumed (or replayed).
      failing boolean NOT NULL DEFAULT false,
      -- Failed attempts in a row of the batch after position, and when the next one is due.
      failures integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      -- A worker delivering a batch holds the consumer until lease_until; one that died loses it then.
      lease_owner text,
      lease_until timestamptz,
      last_success_at timestamptz,
      last_failure_at timestamptz,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX audit_stream_consumers_due_idx ON audit_stream_consumers (next_attempt_at) WHERE NOT paused AND NOT failing;

    CREATE TABLE audit_stream_destinations (
      id uuid PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('webhook', 'splunk', 'elastic', 'datadog', 'sentinel', 'qradar', 'arcsight')),
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
      description text,
      -- Where it goes: an http(s) URL, or syslog://host:port for the syslog platforms.
      url text NOT NULL,
      -- Non-secret platform settings (index, source type, DCR id, stream, TLS, ...).
      settings jsonb NOT NULL DEFAULT '{}',
      -- Platform credentials or the webhook signing secret: sealed JSON (src/platform/security/secret-box.ts).
      secrets_encrypted text NOT NULL,
      -- During a webhook secret rotation the old secret still signs until it expires.
      previous_secrets_encrypted text,
      previous_secrets_expire_at timestamptz,
      -- Exact types or prefixes ending in .*; empty means every event.
      event_types text[] NOT NULL DEFAULT '{}',
      enabled boolean NOT NULL DEFAULT true,
      disabled_reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE audit_stream_deliveries (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      destination_id uuid NOT NULL REFERENCES audit_stream_destinations (id) ON DELETE CASCADE,
      attempted_at timestamptz NOT NULL,
      first_seq bigint,
      last_seq bigint,
      events integer NOT NULL,
      status integer,
      latency_ms integer NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('delivered', 'failed', 'refused')),
      error text,
      test boolean NOT NULL DEFAULT false
    );
    CREATE INDEX audit_stream_deliveries_destination_idx ON audit_stream_deliveries (destination_id, id DESC);
    CREATE INDEX audit_stream_deliveries_age_idx ON audit_stream_deliveries (attempted_at);
  `);
}
