import type { MigrationContext } from "./context";

/**
 * Alert rules (issue 14). The evaluator is one more consumer of the committed audit stream
 * (audit_stream_consumers, id `alerts:evaluator`): the per-rule, per-group window counts and the
 * users' countries move in the same transaction as its position, so a crash replays a turn from the
 * position with the counts as they were then — nothing counted twice, nothing lost, no double firing.
 * Firings write one delivery row per channel (an outbox) that the dispatcher sends and retries.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE alert_channels (
      id uuid PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('email', 'chat', 'webhook', 'sms')),
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
      -- Non-secret settings (SMTP host, recipients, SMS sender, webhook URL).
      settings jsonb NOT NULL DEFAULT '{}',
      -- Passwords, tokens, the chat incoming-webhook URL, the webhook signing secret: sealed JSON.
      secrets_encrypted text NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE alert_rules (
      id uuid PRIMARY KEY,
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
      -- The preset it was made from (brute_force, provider_change, new_country), if any.
      preset text,
      -- count: threshold events in window_seconds per group; new_country: a login from a country new for the user.
      condition text NOT NULL CHECK (condition IN ('count', 'new_country')),
      event_types text[] NOT NULL,
      min_severity text NOT NULL CHECK (min_severity IN ('info', 'warning', 'error', 'critical')),
      threshold integer NOT NULL CHECK (threshold BETWEEN 1 AND 100000),
      window_seconds integer NOT NULL CHECK (window_seconds BETWEEN 1 AND 604800),
      group_by text CHECK (group_by IN ('ip', 'user', 'provider')),
      channel_ids uuid[] NOT NULL DEFAULT '{}',
      enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    -- The open window of each rule and group: when it started (the time of its first event), how many
    -- events it has counted, whether it fired, and a sample of its events for the firing record.
    CREATE TABLE alert_windows (
      rule_id uuid NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
      group_key text NOT NULL,
      window_start timestamptz NOT NULL,
      count integer NOT NULL,
      fired boolean NOT NULL DEFAULT false,
      sample jsonb NOT NULL DEFAULT '[]',
      PRIMARY KEY (rule_id, group_key)
    );
    CREATE INDEX alert_windows_age_idx ON alert_windows (window_start);

    CREATE TABLE alert_firings (
      id uuid PRIMARY KEY,
      rule_id uuid REFERENCES alert_rules (id) ON DELETE SET NULL,
      rule_name text NOT NULL,
      group_key text NOT NULL,
      window_start timestamptz NOT NULL,
      fired_at timestamptz NOT NULL DEFAULT now(),
      -- The chain position of the event that made it fire.
      seq bigint NOT NULL,
      count integer NOT NULL,
      summary text NOT NULL,
      events jsonb NOT NULL,
      -- Once per window per group, whatever happens to the evaluator.
      UNIQUE (rule_id, group_key, window_start)
    );
    CREATE INDEX alert_firings_fired_idx ON alert_firings (fired_at DESC, id);

    CREATE TABLE alert_deliveries (
      id uuid PRIMARY KEY,
      firing_id uuid REFERENCES alert_firings (id) ON DELETE CASCADE,
      channel_id uuid REFERENCES alert_channels (id) ON DELETE SET NULL,
      channel_name text NOT NULL,
      channel_kind text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      lease_until timestamptz,
      -- Every failed attempt: [{at, error}], newest last (bounded).
      errors jsonb NOT NULL DEFAULT '[]',
      sent_at timestamptz,
      test boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX alert_deliveries_due_idx ON alert_deliveries (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX alert_deliveries_firing_idx ON alert_deliveries (firing_id);

    -- Countries each user has logged in from (public addresses only).
    CREATE TABLE alert_user_countries (
      user_key text NOT NULL,
      country text NOT NULL,
      first_seen_at timestamptz NOT NULL,
      PRIMARY KEY (user_key, country)
    );

    -- The evaluator starts at the chain head: it evaluates what is recorded from now on.
    INSERT INTO audit_stream_consumers (id, position) SELECT 'alerts:evaluator', seq FROM audit_chain_head;
  `);
}
