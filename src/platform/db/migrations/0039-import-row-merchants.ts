import type { MigrationContext } from "./context";

/**
 * A transaction import's merchant column (docs/imports.md): each staged row keeps its merchant as
 * written; publish matches it to the family's merchant of that name (any case) or creates it, as it
 * does categories and tags. Not part of a row's fingerprint, so a file imported before this column
 * existed is still recognised when imported again.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`ALTER TABLE import_rows ADD COLUMN merchant text`);
}
