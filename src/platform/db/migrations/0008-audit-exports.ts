import type { MigrationContext } from "./context";

/**
 * Audit exports and compliance reports (issue 18): one row per request, which a worker fills in as
 * it writes the file. `params` holds the export's filter or the report's parameters as validated;
 * `manifest` the finished file's figures (rows, range, filters, SHA-256). Files live on disk under
 * EXPORT_DIR until `expires_at`, when the cleanup job removes them and marks the row expired.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE audit_exports (
      id uuid PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('events', 'report')),
      format text NOT NULL CHECK (format IN ('json', 'jsonl', 'csv', 'pdf')),
      params jsonb NOT NULL,
      status text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'expired')),
      requested_by uuid NOT NULL REFERENCES users (id),
      requested_by_email text NOT NULL,
      rows_written bigint NOT NULL DEFAULT 0,
      progress double precision NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 1),
      file_name text,
      file_bytes bigint,
      manifest jsonb,
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      completed_at timestamptz,
      expires_at timestamptz
    );
    CREATE INDEX audit_exports_requester_idx ON audit_exports (requested_by, created_at DESC);
    CREATE INDEX audit_exports_expiry_idx ON audit_exports (expires_at) WHERE status = 'completed';
  `);
}
