import type { Sequelize, Transaction } from "sequelize";
import { bindParam, selectRows } from "../../platform/common/sql";
import { moneySql } from "../transactions";

export type BudgetRow = {
  id: string;
  startDate: string;
  endDate: string;
  currency: string;
  budgetedSpending: string | null;
  expectedIncome: string | null;
  /** Sum of the top-level categories' allocations. */
  allocatedSpending: string;
  createdAt: Date;
  updatedAt: Date;
};

export type BudgetCategoryRow = {
  id: string;
  budgetId: string;
  categoryId: string;
  budgetedSpending: string;
  currency: string;
  createdAt: Date;
  updatedAt: Date;
  budgetStartDate: string;
  budgetEndDate: string;
  categoryName: string;
  categoryColor: string;
  categoryIcon: string;
  categoryParentId: string | null;
};

/** Net amount (stored sign: + out, − in) of a period's non-transfer transactions per category. */
export type CategoryNet = { categoryId: string | null; parentId: string | null; net: string };

export type BudgetFilter = { startDate?: string; endDate?: string };
export type BudgetCategoryFilter = BudgetFilter & { budgetId?: string; categoryId?: string };

const BUDGET_COLUMNS = `b.id, b.start_date::text AS "startDate", b.end_date::text AS "endDate", b.currency, b.budgeted_spending AS "budgetedSpending",
  b.expected_income AS "expectedIncome", b.created_at AS "createdAt", b.updated_at AS "updatedAt",
  (SELECT coalesce(sum(bc.budgeted_spending), 0) FROM budget_categories bc JOIN categories c ON c.id = bc.category_id
    WHERE bc.budget_id = b.id AND c.parent_id IS NULL)::text AS "allocatedSpending"`;

const BUDGET_CATEGORY_COLUMNS = `bc.id, bc.budget_id AS "budgetId", bc.category_id AS "categoryId", bc.budgeted_spending AS "budgetedSpending",
  bc.currency, bc.created_at AS "createdAt", bc.updated_at AS "updatedAt", b.start_date::text AS "budgetStartDate", b.end_date::text AS "budgetEndDate",
  c.name AS "categoryName", c.color AS "categoryColor", c.icon AS "categoryIcon", c.parent_id AS "categoryParentId"`;

export class BudgetRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async page(familyId: string, filter: BudgetFilter, limit: number, offset: number): Promise<{ rows: BudgetRow[]; total: number }> {
    const bind: unknown[] = [];
    const where = [`b.family_id = ${bindParam(bind, familyId)}`];
    if (filter.startDate) where.push(`b.start_date >= ${bindParam(bind, filter.startDate)}`);
    if (filter.endDate) where.push(`b.end_date <= ${bindParam(bind, filter.endDate)}`);
    const rows = await selectRows<BudgetRow & { total: string }>(
      this.sequelize,
      `SELECT ${BUDGET_COLUMNS}, count(*) OVER () AS total FROM budgets b WHERE ${where.join(" AND ")}
       ORDER BY b.start_date DESC LIMIT ${bindParam(bind, limit)} OFFSET ${bindParam(bind, offset)}`,
      bind,
    );
    const total = rows.length > 0 ? Number(rows[0].total) : offset === 0 ? 0 : await this.count("budgets b", where, bind);
    return { rows, total };
  }

  private async count(from: string, where: string[], bind: unknown[]): Promise<number> {
    const [row] = await selectRows<{ total: string }>(
      this.sequelize,
      `SELECT count(*) AS total FROM ${from} WHERE ${where.join(" AND ")}`,
      bind.slice(0, bind.length - 2),
    );
    return Number(row.total);
  }

  async byId(familyId: string, id: string, transaction?: Transaction): Promise<BudgetRow | null> {
    const [row] = await selectRows<BudgetRow>(
      this.sequelize,
      `SELECT ${BUDGET_COLUMNS} FROM budgets b WHERE b.family_id = $1 AND b.id = $2`,
      [familyId, id],
      transaction,
    );
    return row ?? null;
  }

  async byStart(familyId: string, startDate: string, transaction?: Transaction): Promise<BudgetRow | null> {
    const [row] = await selectRows<BudgetRow>(
      this.sequelize,
      `SELECT ${BUDGET_COLUMNS} FROM budgets b WHERE b.family_id = $1 AND b.start_date = $2`,
      [familyId, startDate],
      transaction,
    );
    return row ?? null;
  }

  /**
   * The month's budget, created on first write with a zero allocation for each of the family's
   * categories (upstream's bootstrap); categories added since get theirs too.
   */
  async ensure(familyId: string, id: string, month: { start: string; end: string }, transaction: Transaction): Promise<string> {
    await this.sequelize.query(
      `INSERT INTO budgets (id, family_id, start_date, end_date, currency) SELECT $1, f.id, $3, $4, f.currency FROM families f WHERE f.id = $2
       ON CONFLICT (family_id, start_date) DO NOTHING`,
      { bind: [id, familyId, month.start, month.end], transaction },
    );
    const [budget] = await selectRows<{ id: string; currency: string }>(
      this.sequelize,
      "SELECT id, currency FROM budgets WHERE family_id = $1 AND start_date = $2 FOR UPDATE",
      [familyId, month.start],
      transaction,
    );
    await this.sequelize.query(
      `INSERT INTO budget_categories (id, family_id, budget_id, category_id, currency)
       SELECT gen_random_uuid(), $1, $2, c.id, $3 FROM categories c WHERE c.family_id = $1
       ON CONFLICT (budget_id, category_id) DO NOTHING`,
      { bind: [familyId, budget.id, budget.currency], transaction },
    );
    return budget.id;
  }

  async setAmounts(
    budgetId: string,
    changes: { budgetedSpending?: string | null; expectedIncome?: string | null },
    transaction: Transaction,
  ): Promise<void> {
    const bind: unknown[] = [];
    const sets = ["updated_at = now()"];
    if (changes.budgetedSpending !== undefined) sets.push(`budgeted_spending = ${bindParam(bind, changes.budgetedSpending)}`);
    if (changes.expectedIncome !== undefined) sets.push(`expected_income = ${bindParam(bind, changes.expectedIncome)}`);
    await this.sequelize.query(`UPDATE budgets SET ${sets.join(", ")} WHERE id = ${bindParam(bind, budgetId)}`, { bind, transaction });
  }

  async setAllocation(familyId: string, budgetId: string, categoryId: string, amount: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(
      `UPDATE budget_categories SET budgeted_spending = $4, updated_at = now() WHERE family_id = $1 AND budget_id = $2 AND category_id = $3`,
      { bind: [familyId, budgetId, categoryId, amount], transaction },
    );
  }

  async categoriesPage(
    familyId: string,
    filter: BudgetCategoryFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: BudgetCategoryRow[]; total: number }> {
    const bind: unknown[] = [];
    const where = [`bc.family_id = ${bindParam(bind, familyId)}`];
    if (filter.budgetId) where.push(`bc.budget_id = ${bindParam(bind, filter.budgetId)}`);
    if (filter.categoryId) where.push(`bc.category_id = ${bindParam(bind, filter.categoryId)}`);
    if (filter.startDate) where.push(`b.start_date >= ${bindParam(bind, filter.startDate)}`);
    if (filter.endDate) where.push(`b.end_date <= ${bindParam(bind, filter.endDate)}`);
    const from = "budget_categories bc JOIN budgets b ON b.id = bc.budget_id JOIN categories c ON c.id = bc.category_id";
    const rows = await selectRows<BudgetCategoryRow & { total: string }>(
      this.sequelize,
      `SELECT ${BUDGET_CATEGORY_COLUMNS}, count(*) OVER () AS total FROM ${from} WHERE ${where.join(" AND ")}
       ORDER BY b.start_date DESC, c.name ASC, bc.id LIMIT ${bindParam(bind, limit)} OFFSET ${bindParam(bind, offset)}`,
      bind,
    );
    const total = rows.length > 0 ? Number(rows[0].total) : offset === 0 ? 0 : await this.count(from, where, bind);
    return { rows, total };
  }

  /** Every allocation of one budget (for a budget category's parent and siblings). */
  /** A budget's allocations; inside `transaction`, locked until it ends (a subcategory's write also sets its parent's). */
  async categoriesOf(familyId: string, budgetId: string, transaction?: Transaction): Promise<BudgetCategoryRow[]> {
    return selectRows<BudgetCategoryRow>(
      this.sequelize,
      `SELECT ${BUDGET_CATEGORY_COLUMNS} FROM budget_categories bc JOIN budgets b ON b.id = bc.budget_id JOIN categories c ON c.id = bc.category_id
       WHERE bc.family_id = $1 AND bc.budget_id = $2 ORDER BY c.name, bc.id${transaction ? " FOR UPDATE OF bc" : ""}`,
      [familyId, budgetId],
      transaction,
    );
  }

  async categoryById(familyId: string, id: string): Promise<BudgetCategoryRow | null> {
    const [row] = await selectRows<BudgetCategoryRow>(
      this.sequelize,
      `SELECT ${BUDGET_CATEGORY_COLUMNS} FROM budget_categories bc JOIN budgets b ON b.id = bc.budget_id JOIN categories c ON c.id = bc.category_id
       WHERE bc.family_id = $1 AND bc.id = $2`,
      [familyId, id],
    );
    return row ?? null;
  }

  /**
   * The one aggregate behind every actual: the period's transactions in the budget's currency, transfers
   * left out (the shared money rule), summed per category with its parent alongside. Every column it
   * reads is in `transactions_family_period_amounts_idx` (migration 0035), so the month is an index-only
   * scan; the categories are joined to the ~60 sums, not to each of the month's transactions.
   */
  async netByCategory(familyId: string, currency: string, start: string, end: string): Promise<CategoryNet[]> {
    return selectRows<CategoryNet>(
      this.sequelize,
      `SELECT n.category_id AS "categoryId", c.parent_id AS "parentId", n.net::text AS net
       FROM (SELECT t.category_id, sum(t.amount) AS net FROM transactions t
             WHERE t.family_id = $1 AND t.currency = $2 AND t.date BETWEEN $3 AND $4 AND ${moneySql.notTransfer("t")}
             GROUP BY t.category_id) n
       LEFT JOIN categories c ON c.id = n.category_id`,
      [familyId, currency, start, end],
    );
  }
}
