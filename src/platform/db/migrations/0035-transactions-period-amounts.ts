import type { MigrationContext } from "./context";

/**
 * A period's amounts read from the index alone (docs/planning.md, "Budgets"). A budget's actuals sum one
 * month of a family's transactions per category, transfer legs left out by their id; the only index on
 * (family_id, date) carries none of those columns, so the aggregate read every row of the table (a month
 * of 32,000 transactions among 100,000: 4,000 pages in a parallel sequential scan). With the currency,
 * category, amount and id included, PostgreSQL answers with an index-only scan of the month (~340
 * pages) as long as the visibility map is current, which autovacuum keeps it.
 *
 * Any reader of a family's period that needs only these columns can use it too (the planning
 * benchmark's floor does: it is the same aggregate). What it costs: one more index entry per insert and
 * per update that is not HOT (a change of category already is not: `transactions_category_idx`).
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE INDEX transactions_family_period_amounts_idx ON transactions (family_id, date) INCLUDE (currency, category_id, amount, id);
  `);
}
