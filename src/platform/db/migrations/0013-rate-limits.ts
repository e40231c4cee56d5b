import type { MigrationContext } from "./context";

/**
 * The rate limiter's counters when there is no Redis (the zero-configuration default). The limiter
 * library used to create this table itself on first use, so a backup of such a service held a table
 * that the migrations a restore replays did not create, and the restore failed. Every table is now
 * a migration's; IF NOT EXISTS keeps the table (and its live counters) of a service that made it.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE IF NOT EXISTS rate_limits (
      key varchar(255) PRIMARY KEY,
      points integer NOT NULL DEFAULT 0,
      expire bigint
    );
  `);
}
