import type { MigrationContext } from "./context";

/**
 * Retention: tiers per instance, a persisted state per month on its way out of the database, the
 * archives written for it (one per month and tier), the signed checkpoint of each archived month and
 * the record of every retention run.
 *
 * A month leaves in steps, each committed before the next begins (src/audit/retention/retention.service.ts):
 * `detached` (the partition is detached but still a table) → `archived` (its archives are written, read
 * back and verified, their manifests and the month's checkpoint committed) → `dropped` (the table and
 * its chain links are gone, in one transaction). A crash between steps leaves the partition or a
 * verified archive, never neither; the next run resumes from the recorded state.
 *
 * Chain links are append-only; retention alone may remove those of a month it has archived, and only
 * in the transaction that drops the month (a transaction-local setting the trigger checks).
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE audit_retention_settings (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      database_days integer NOT NULL DEFAULT 90 CHECK (database_days BETWEEN 0 AND 36500),
      default_tier text NOT NULL DEFAULT 'standard',
      category_tiers jsonb NOT NULL DEFAULT '[]',
      -- Null until an administrator changes them: until then the configured defaults apply.
      updated_at timestamptz
    );
    INSERT INTO audit_retention_settings (id) VALUES (true);

    CREATE TABLE audit_retention_months (
      month date PRIMARY KEY,
      state text NOT NULL CHECK (state IN ('detached', 'archived', 'dropped', 'restored')),
      table_name text NOT NULL,
      rows bigint,
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE audit_archives (
      id uuid PRIMARY KEY,
      month date NOT NULL,
      tier text NOT NULL,
      storage_key text NOT NULL,
      manifest jsonb NOT NULL,
      keep_until timestamptz NOT NULL,
      state text NOT NULL CHECK (state IN ('stored', 'deleted')),
      created_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz,
      UNIQUE (month, tier)
    );

    CREATE TABLE audit_checkpoints (
      month date PRIMARY KEY,
      tree_size bigint NOT NULL,
      root_hash bytea NOT NULL,
      note text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE audit_retention_runs (
      id uuid PRIMARY KEY,
      started_at timestamptz NOT NULL,
      finished_at timestamptz,
      moved jsonb NOT NULL DEFAULT '[]',
      kept jsonb NOT NULL DEFAULT '[]',
      deleted jsonb NOT NULL DEFAULT '[]',
      error text
    );
    CREATE INDEX audit_retention_runs_started_idx ON audit_retention_runs (started_at DESC);

    CREATE OR REPLACE FUNCTION audit_events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' AND TG_TABLE_NAME = 'audit_chain' AND current_setting('finance_gateway.retention_drop', true) = 'on' THEN
        RETURN OLD;
      END IF;
      RAISE EXCEPTION 'audit events are append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
    END
    $$;
  `);
}
