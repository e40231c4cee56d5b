import type { MigrationContext } from "./context";

/**
 * When and how each user last signed in, kept on the user: the administrators' Users view shows it
 * beside a lock, and the audit log that also holds it moves month by month into archives.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    ALTER TABLE users
      ADD COLUMN last_sign_in_at timestamptz,
      ADD COLUMN last_sign_in_method text;
  `);
}
