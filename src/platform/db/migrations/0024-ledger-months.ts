import type { MigrationContext } from "./context";

/**
 * Each account's flows summed per month (docs/ledger.md, "Storage"), kept with `ledger_days` by the
 * ledger's writes in the same statement. A read of one account's balances needs the sum of the flows
 * up to each day it shows; with the months it reads ~120 rows for ten years and the days of the
 * months it shows, not every day of the account. Derived like the day rows: never a source of truth.
 *
 * `flow` is money in less money out (before the account's sign), unbounded: a month of large amounts
 * may exceed what one amount can be. A month whose days are all gone may keep a row with 0.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE ledger_months (
      account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      month date NOT NULL,
      flow numeric NOT NULL,
      PRIMARY KEY (account_id, month)
    );
    INSERT INTO ledger_months (account_id, month, flow)
    SELECT account_id, date_trunc('month', date::timestamp)::date, sum(inflows - outflows) FROM ledger_days GROUP BY 1, 2;
  `);
}
