import type { MigrationContext } from "./context";

/**
 * Exchange rates a family enters (docs/ledger.md#currencies): one rate per currency pair per day, read
 * as "one unit of `from_currency` is worth `rate` units of `to_currency` at the end of `date`". The
 * family's totals (balance sheet, net worth and its history, the assistant's answers) convert an
 * account held in another currency with the newest rate on or before the day; no rate, no conversion.
 * Rates belong to the family (another family's rates never change its figures) and are never fetched.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE exchange_rates (
      id uuid PRIMARY KEY,
      family_id uuid NOT NULL REFERENCES families (id) ON DELETE CASCADE,
      from_currency char(3) NOT NULL,
      to_currency char(3) NOT NULL CHECK (to_currency <> from_currency),
      date date NOT NULL,
      rate numeric(24, 12) NOT NULL CHECK (rate > 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (family_id, from_currency, to_currency, date)
    );
    CREATE INDEX exchange_rates_lookup_idx ON exchange_rates (family_id, to_currency, from_currency, date DESC);
  `);
}
