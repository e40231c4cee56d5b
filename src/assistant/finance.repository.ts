import type { Sequelize } from "sequelize";
import { likePattern, selectRows } from "../common/sql";

/**
 * The read-only queries behind the assistant's tools. Every statement is bound to one family; money is
 * summed by PostgreSQL in numeric and leaves as decimal strings. Transfers between the family's own
 * accounts are neither income nor expense, so they are left out of every query here.
 */
export type AmountOperator = "equal" | "greater_than" | "less_than" | "at_least" | "at_most";

export type FinanceFilter = {
  search?: string;
  startDate?: string;
  endDate?: string;
  amount?: { value: string; operator: AmountOperator };
  type?: "income" | "expense";
  accounts?: string[];
  categories?: string[];
  merchants?: string[];
  tags?: string[];
};

export type FinanceOrder = "newest" | "oldest" | "largest";

export type FinanceTransactionRow = {
  date: string;
  name: string;
  amount: string;
  currency: string;
  account: string;
  category: string | null;
  merchant: string | null;
  tags: string[] | null;
};

export type TotalsRow = { currency: string; income: string; expense: string; count: number };

export type CategoryAmountRow = { category: string; kind: "income" | "expense"; amount: string; count: number };

export type BalanceHistoryRow = { month: string; assets: string; liabilities: string };

const OPERATORS: Record<AmountOperator, string> = {
  equal: "=",
  greater_than: ">",
  less_than: "<",
  at_least: ">=",
  at_most: "<=",
};

const NOT_A_TRANSFER = `NOT EXISTS (SELECT 1 FROM transfers x WHERE x.outflow_transaction_id = t.id OR x.inflow_transaction_id = t.id)`;

const ORDERS: Record<FinanceOrder, string> = {
  newest: "t.date DESC, t.created_at DESC, t.id DESC",
  oldest: "t.date, t.created_at, t.id",
  largest: "abs(t.amount) DESC, t.date DESC, t.id DESC",
};

export class FinanceRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async transactions(
    familyId: string,
    filter: FinanceFilter,
    order: FinanceOrder,
    limit: number,
    offset: number,
  ): Promise<{ rows: FinanceTransactionRow[]; total: number; totals: TotalsRow[] }> {
    const bind: unknown[] = [familyId];
    const where = ["t.family_id = $1", NOT_A_TRANSFER, ...conditions(filter, bind)].join(" AND ");
    const [rows, totals] = await Promise.all([
      selectRows<FinanceTransactionRow>(
        this.sequelize,
        `SELECT t.date, t.name, t.amount, t.currency, a.name AS account, c.name AS category, m.name AS merchant,
                (SELECT array_agg(g.name ORDER BY g.name) FROM transaction_tags tt JOIN tags g ON g.id = tt.tag_id
                  WHERE tt.transaction_id = t.id) AS tags
           FROM transactions t
           JOIN accounts a ON a.id = t.account_id
           LEFT JOIN categories c ON c.id = t.category_id
           LEFT JOIN merchants m ON m.id = t.merchant_id
          WHERE ${where}
          ORDER BY ${ORDERS[order]} LIMIT ${limit} OFFSET ${offset}`,
        bind,
      ),
      selectRows<TotalsRow>(
        this.sequelize,
        `SELECT t.currency, coalesce(sum(-t.amount) FILTER (WHERE t.amount < 0), 0) AS income,
                coalesce(sum(t.amount) FILTER (WHERE t.amount > 0), 0) AS expense, count(*)::int AS count
           FROM transactions t WHERE ${where} GROUP BY t.currency ORDER BY count(*) DESC`,
        bind,
      ),
    ]);
    return { rows, total: totals.reduce((sum, row) => sum + row.count, 0), totals };
  }

  /** Income and expense per category over a period, in one currency. */
  byCategory(familyId: string, currency: string, startDate: string, endDate: string): Promise<CategoryAmountRow[]> {
    return selectRows<CategoryAmountRow>(
      this.sequelize,
      `SELECT coalesce(c.name, 'Uncategorized') AS category, CASE WHEN t.amount < 0 THEN 'income' ELSE 'expense' END AS kind,
              abs(sum(t.amount)) AS amount, count(*)::int AS count
         FROM transactions t LEFT JOIN categories c ON c.id = t.category_id
        WHERE t.family_id = $1 AND t.currency = $2 AND t.date BETWEEN $3::date AND $4::date AND t.amount <> 0 AND ${NOT_A_TRANSFER}
        GROUP BY 1, 2 ORDER BY 2, abs(sum(t.amount)) DESC, 1`,
      [familyId, currency, startDate, endDate],
    );
  }

  /**
   * Month-end assets and liabilities of the accounts in one currency, for the `months` months up to the
   * one holding `today`. Only today's balances are stored, so each month-end balance is today's with the
   * later transactions undone: money out (positive amounts) had not yet left an asset and had not yet
   * been owed on a liability.
   */
  balanceHistory(familyId: string, currency: string, today: string, months: number): Promise<BalanceHistoryRow[]> {
    return selectRows<BalanceHistoryRow>(
      this.sequelize,
      `WITH month_ends AS (
         SELECT (date_trunc('month', $3::date) - make_interval(months => g) + interval '1 month - 1 day')::date AS month_end
           FROM generate_series(0, $4::int - 1) g
       ), later AS (
         SELECT e.month_end, a.id, a.classification, a.balance,
                coalesce((SELECT sum(t.amount) FROM transactions t WHERE t.account_id = a.id AND t.date > e.month_end), 0) AS after
           FROM month_ends e CROSS JOIN accounts a WHERE a.family_id = $1 AND a.currency = $2
       )
       SELECT to_char(e.month_end, 'YYYY-MM') AS month,
              coalesce(sum(l.balance + l.after) FILTER (WHERE l.classification = 'asset'), 0) AS assets,
              coalesce(sum(l.balance - l.after) FILTER (WHERE l.classification = 'liability'), 0) AS liabilities
         FROM month_ends e LEFT JOIN later l ON l.month_end = e.month_end
        GROUP BY e.month_end ORDER BY e.month_end`,
      [familyId, currency, today, months],
    );
  }

  /** Names the family actually uses, so questions and tool arguments can be matched against them. */
  async vocabulary(familyId: string): Promise<{ categories: string[]; merchants: string[]; accounts: string[]; tags: string[] }> {
    const rows = await selectRows<{ kind: string; name: string }>(
      this.sequelize,
      `SELECT 'categories' AS kind, name FROM categories WHERE family_id = $1
       UNION ALL SELECT 'merchants', name FROM merchants WHERE family_id = $1
       UNION ALL SELECT 'accounts', name FROM accounts WHERE family_id = $1
       UNION ALL SELECT 'tags', name FROM tags WHERE family_id = $1`,
      [familyId],
    );
    const vocabulary = { categories: [] as string[], merchants: [] as string[], accounts: [] as string[], tags: [] as string[] };
    for (const row of rows) vocabulary[row.kind as keyof typeof vocabulary].push(row.name);
    return vocabulary;
  }
}

function conditions(filter: FinanceFilter, bind: unknown[]): string[] {
  const where: string[] = [];
  const param = (value: unknown) => {
    bind.push(value);
    return `$${bind.length}`;
  };
  const lowered = (names: string[]) => param(names.map((name) => name.trim().toLowerCase()));
  if (filter.startDate) where.push(`t.date >= ${param(filter.startDate)}::date`);
  if (filter.endDate) where.push(`t.date <= ${param(filter.endDate)}::date`);
  if (filter.type === "income") where.push("t.amount < 0");
  if (filter.type === "expense") where.push("t.amount > 0");
  if (filter.amount) where.push(`abs(t.amount) ${OPERATORS[filter.amount.operator]} ${param(filter.amount.value)}::numeric`);
  if (filter.accounts?.length)
    where.push(
      `EXISTS (SELECT 1 FROM accounts a2 WHERE a2.id = t.account_id AND lower(a2.name) = ANY(${lowered(filter.accounts)}::text[]))`,
    );
  if (filter.categories?.length)
    where.push(
      `EXISTS (SELECT 1 FROM categories c2 WHERE c2.id = t.category_id AND lower(c2.name) = ANY(${lowered(filter.categories)}::text[]))`,
    );
  if (filter.merchants?.length)
    where.push(
      `EXISTS (SELECT 1 FROM merchants m2 WHERE m2.id = t.merchant_id AND lower(m2.name) = ANY(${lowered(filter.merchants)}::text[]))`,
    );
  if (filter.tags?.length)
    where.push(
      `EXISTS (SELECT 1 FROM transaction_tags tt JOIN tags g ON g.id = tt.tag_id
                WHERE tt.transaction_id = t.id AND lower(g.name) = ANY(${lowered(filter.tags)}::text[]))`,
    );
  if (filter.search) {
    const pattern = param(likePattern(filter.search));
    where.push(
      `(t.name ILIKE ${pattern} OR t.notes ILIKE ${pattern} OR EXISTS (SELECT 1 FROM merchants m3 WHERE m3.id = t.merchant_id AND m3.name ILIKE ${pattern}))`,
    );
  }
  return where;
}
