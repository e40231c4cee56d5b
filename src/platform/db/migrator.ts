import type { Sequelize } from "sequelize";
import { SequelizeStorage, Umzug } from "umzug";
import { migrations } from "./migrations";
import type { MigrationContext } from "./migrations/context";

export function createMigrator(sequelize: Sequelize): Umzug<MigrationContext> {
  return new Umzug<MigrationContext>({
    migrations: migrations.map(({ name, up }) => ({ name, up: ({ context }) => up(context) })),
    context: { queryInterface: sequelize.getQueryInterface(), sequelize },
    storage: new SequelizeStorage({ sequelize, tableName: "schema_migrations" }),
    logger: undefined,
  });
}

/**
 * Applies pending migrations. An advisory lock makes concurrent boots (several API processes) take
 * turns instead of racing on the same DDL. The lock holds one pooled connection while the migrations
 * run on another, so the pool needs at least two.
 */
export async function migrateToLatest(sequelize: Sequelize): Promise<string[]> {
  const lockKey = 727_001;
  return sequelize.transaction(async (transaction) => {
    await sequelize.query("SELECT pg_advisory_xact_lock(:lockKey)", { replacements: { lockKey }, transaction });
    const applied = await createMigrator(sequelize).up();
    return applied.map((migration) => migration.name);
  });
}
