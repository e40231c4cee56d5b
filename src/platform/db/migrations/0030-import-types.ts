import type { MigrationContext } from "./context";

/**
 * Account and trade imports (docs/imports.md): an import row keeps the fields those files have as
 * written (ticker, exchange, quantity, price, account type) and as read (quantity, price, the type
 * of account, the security). A trade an import writes carries its row's fingerprint, unique per
 * account, so the same file imported twice writes its trades once, as transactions' external ids do.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    ALTER TABLE import_rows
      ADD COLUMN ticker text,
      ADD COLUMN exchange_operating_mic text,
      ADD COLUMN qty text,
      ADD COLUMN price text,
      ADD COLUMN entity_type text,
      ADD COLUMN qty_value numeric(28, 10),
      ADD COLUMN price_value numeric(28, 10),
      ADD COLUMN account_type text,
      ADD COLUMN security_id uuid;

    ALTER TABLE trades ADD COLUMN import_fingerprint text;
    CREATE UNIQUE INDEX trades_import_fingerprint_idx ON trades (account_id, import_fingerprint) WHERE import_fingerprint IS NOT NULL;
  `);
}
