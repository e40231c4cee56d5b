import type { MigrationContext } from "./context";

/**
 * An API key's expiry is an audit event (`auth.api_key.expired`), recorded once per key by the sweep or
 * at the key's first use after it: `expiry_recorded_at` says it was. The partial index holds only the keys
 * whose expiry is still to be recorded, so the sweep reads a handful of rows however many keys exist.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    ALTER TABLE api_keys ADD COLUMN expiry_recorded_at timestamptz;
    CREATE INDEX api_keys_expiry_to_record_idx ON api_keys (expires_at)
      WHERE expires_at IS NOT NULL AND expiry_recorded_at IS NULL AND revoked_at IS NULL;
  `);
}
