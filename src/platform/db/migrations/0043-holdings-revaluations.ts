import type { MigrationContext } from "./context";

/**
 * A manual investment account's holdings are now valued as upstream values them: on each day at the price
 * of the newest day on or before it that has any price, a stored price winning over a trade's on the same
 * day, the day's first trade recorded winning among its trades (docs/investments.md). Its stored
 * positions (`trade_price`, the day's trade price) and values per day (`portfolio_days`), and the ledger's
 * days that carry them, were derived by the previous rule, and a read now values them by the new one.
 *
 * Rebuilding them needs the service's own code (the positions are computed in TypeScript), which a
 * migration must not call: a later release's code would run here against this release's tables. So the
 * migration only lists the accounts to revalue; the service revalues each with its code of the day when
 * it starts, one account per transaction, and takes the account off the list in that transaction
 * (TradeService.revaluePending). An account deleted meanwhile leaves the list with it.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE TABLE holdings_revaluations (account_id uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE);
    INSERT INTO holdings_revaluations (account_id) SELECT DISTINCT account_id FROM positions;
  `);
}
