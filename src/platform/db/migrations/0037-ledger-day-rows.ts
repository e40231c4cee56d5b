import { BALANCES_VIEW } from "./0016-ledger-days";
import type { MigrationContext } from "./context";

/**
 * A day row holds what the day's figures need and nothing a read can work out
 * (docs/ledger.md, "Storage"): a full recompute of ten years writes ~3,650 rows, and a first one (a new
 * account, an import into it) writes them all, so every per-row cost of the insert counts.
 *
 * - The id goes: it has been `ledger_day_id(account_id, date)` since migration 0033, so it is computed
 *   where a row is read (the view, the derivation, `GET /balances/{id}`), for the rows read, instead of
 *   being computed and stored for every row written (4% of a first recompute).
 * - The family index goes: every read of a family's days now reaches them through its accounts (the
 *   primary key's leading column), so the index was kept up by every insert for no reader (7% of a
 *   first recompute). `family_id` stays: it is the view's partition, which a family filter on the view
 *   reaches.
 *
 * The view is 0016's, with the id computed.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  const computedId = "SELECT ledger_day_id(d.account_id, d.date) AS id, d.family_id";
  const view = BALANCES_VIEW.replace("SELECT d.id, d.family_id", computedId);
  if (!view.includes(computedId)) throw new Error("migration 0037: the balances view no longer reads d.id");
  await sequelize.query(`
    DROP VIEW balances;
    DROP INDEX ledger_days_family_idx;
    ALTER TABLE ledger_days DROP COLUMN id;
    ${view}
  `);
}
