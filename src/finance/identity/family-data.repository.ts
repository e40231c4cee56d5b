import type { Sequelize, Transaction } from "sequelize";
import { selectRows } from "../../platform/common/sql";
import type { RemovedRows } from "./user.repository";

/**
 * A family's financial data, table by table, children before parents so deleting in this order is
 * valid without relying on cascades: family exports, file imports, transfers and tag links, the planning that points at categories,
 * merchants and accounts, the ledger's entries and what is derived from them, bank connections, then
 * the family's own lists. Users, their credentials, the family row and the audit log are not in it;
 * securities are shared reference data and stay. A new table of family finance data belongs here, so
 * that a reset, its status and the deletion of a family's last member all see it.
 */
const FAMILY_DATA_TABLES: ReadonlyArray<{ table: string; rowsOfFamily: string }> = [
  // The rows only: their zips are removed by the exports' sweep once no row names them.
  { table: "family_exports", rowsOfFamily: "family_id = $1" },
  { table: "import_rows", rowsOfFamily: "import_id IN (SELECT id FROM imports WHERE family_id = $1)" },
  { table: "imports", rowsOfFamily: "family_id = $1" },
  { table: "transfers", rowsOfFamily: "family_id = $1" },
  { table: "transaction_tags", rowsOfFamily: "transaction_id IN (SELECT id FROM transactions WHERE family_id = $1)" },
  { table: "rule_runs", rowsOfFamily: "family_id = $1" },
  { table: "rule_conditions", rowsOfFamily: "rule_id IN (SELECT id FROM rules WHERE family_id = $1)" },
  { table: "rule_actions", rowsOfFamily: "rule_id IN (SELECT id FROM rules WHERE family_id = $1)" },
  { table: "rules", rowsOfFamily: "family_id = $1" },
  { table: "budget_categories", rowsOfFamily: "family_id = $1" },
  { table: "budgets", rowsOfFamily: "family_id = $1" },
  { table: "recurring_transactions", rowsOfFamily: "family_id = $1" },
  { table: "transactions", rowsOfFamily: "family_id = $1" },
  { table: "trades", rowsOfFamily: "family_id = $1" },
  { table: "valuations", rowsOfFamily: "family_id = $1" },
  { table: "holdings", rowsOfFamily: "family_id = $1" },
  { table: "positions", rowsOfFamily: "account_id IN (SELECT id FROM accounts WHERE family_id = $1)" },
  { table: "portfolio_days", rowsOfFamily: "account_id IN (SELECT id FROM accounts WHERE family_id = $1)" },
  { table: "ledger_days", rowsOfFamily: "account_id IN (SELECT id FROM accounts WHERE family_id = $1)" },
  { table: "account_balances", rowsOfFamily: "account_id IN (SELECT id FROM accounts WHERE family_id = $1)" },
  { table: "bank_sync_runs", rowsOfFamily: "family_id = $1" },
  { table: "bank_provider_accounts", rowsOfFamily: "family_id = $1" },
  { table: "bank_connections", rowsOfFamily: "family_id = $1" },
  { table: "accounts", rowsOfFamily: "family_id = $1" },
  { table: "categories", rowsOfFamily: "family_id = $1" },
  { table: "merchants", rowsOfFamily: "family_id = $1" },
  { table: "tags", rowsOfFamily: "family_id = $1" },
];

export type FamilyDataTable = (typeof FAMILY_DATA_TABLES)[number]["table"];

/** Counts and removes a family's financial data (docs/users.md: the user deletion policy and the family reset). */
export class FamilyDataRepository {
  constructor(private readonly sequelize: Sequelize) {}

  /** Rows per table, in one statement so the counts are one snapshot. */
  async counts(familyId: string, transaction?: Transaction): Promise<RemovedRows[]> {
    const columns = FAMILY_DATA_TABLES.map(
      ({ table, rowsOfFamily }) => `(SELECT count(*) FROM ${table} WHERE ${rowsOfFamily})::int AS "${table}"`,
    );
    const [row] = await selectRows<Record<string, number>>(this.sequelize, `SELECT ${columns.join(", ")}`, [familyId], transaction);
    return FAMILY_DATA_TABLES.map(({ table }) => ({ table, count: row[table] }));
  }

  /** Deletes every row of the family's financial data; what each table lost, in deletion order. */
  async remove(familyId: string, transaction: Transaction): Promise<RemovedRows[]> {
    const removed: RemovedRows[] = [];
    for (const { table, rowsOfFamily } of FAMILY_DATA_TABLES) {
      const [, result] = await this.sequelize.query(`DELETE FROM ${table} WHERE ${rowsOfFamily}`, { bind: [familyId], transaction });
      removed.push({ table, count: (result as { rowCount?: number }).rowCount ?? 0 });
    }
    return removed;
  }

  /** Locks the family row, so a reset and the deletion of its last members are decided one at a time. */
  async lockFamily(familyId: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(`SELECT id FROM families WHERE id = $1 FOR UPDATE`, { bind: [familyId], transaction });
  }
}
