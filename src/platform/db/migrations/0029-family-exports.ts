import type { MigrationContext } from "./context";

/**
 * Family exports (docs/exports.md): a request for a zip of the family's finance data, what the worker
 * made of it, and the file's manifest (the SHA-256 of each file inside). Removed with the family.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE family_exports (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES families (id) ON DELETE CASCADE,
      status text NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
      requested_by uuid NOT NULL,
      requested_by_email text NOT NULL,
      requested_session text,
      file_name text,
      file_bytes bigint,
      manifest jsonb,
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      completed_at timestamptz
    );
    CREATE INDEX family_exports_family_recent_idx ON family_exports (family_id, created_at DESC, id DESC);
  `);
}
