import type { QueryInterface, Sequelize } from "sequelize";

/** What each migration's `up` gets from the migrator (its own module, so migrations and the migrator do not import each other). */
export type MigrationContext = { queryInterface: QueryInterface; sequelize: Sequelize };
