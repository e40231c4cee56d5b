import type { Sequelize } from "sequelize";
import { readPrepared, selectRows } from "../../platform/common/sql";
import { derivation, netWorthStatement, pointBalance, pointNeighbours, POINT_ROW_OF, POINT_ROWS } from "../ledger";
import { transactionConditions, type TransactionFilter } from "../transactions";
import { moneySql } from "../transactions";
import { RecurringRepository, type PlannedRecurringRow } from "../planning";
import { InvestmentRepository, type HeldRow, type TradeTotalsRow } from "../investments";

/**
 * The read-only queries behind the assistant's tools. Every statement is bound to one family; money is
 * summed by PostgreSQL in numeric and leaves as decimal strings. Filters and the income/expense/transfer
 * rules come from src/finance/transactions (transaction.filter.ts, transaction.rules.ts), as for the REST list.
 */
export type FinanceOrder = "newest" | "oldest" | "largest" | "smallest";

export type FinanceTransactionRow = {
  date: string;
  name: string;
  amount: string;
  currency: string;
  kind: "income" | "expense" | "transfer";
  account: string;
  category: string | null;
  merchant: string | null;
  tags: string[] | null;
};

export type TotalsRow = {
  currency: string;
  income: string;
  expense: string;
  count: number;
  firstDate: string | null;
  lastDate: string | null;
};

export type GroupBy = "category" | "merchant" | "tag" | "account" | "month" | "week";

export type GroupRow = { key: string; income: string; expense: string; count: number };

export type CategoryAmountRow = { category: string; kind: "income" | "expense"; amount: string; count: number };

export type BalanceHistoryRow = { month: string; assets: string; liabilities: string };
export type BalanceOnRow = {
  name: string;
  accountType: string;
  classification: string;
  currency: string;
  balance: string | null;
  /** The cash part and the holdings' value (an investment's; 0 holdings on any other account). */
  cash: string | null;
  holdingsValue: string | null;
};

export type RecurringRow = {
  name: string;
  months: number;
  lastDate: string;
  lastAmount: string;
  averageAmount: string;
  category: string | null;
};

export type VocabularyEntry = { kind: "category" | "merchant" | "account" | "tag"; id: string; name: string };

const ORDERS: Record<FinanceOrder, string> = {
  newest: "t.date DESC, t.created_at DESC, t.id DESC",
  oldest: "t.date, t.created_at, t.id",
  largest: "abs(t.amount) DESC, t.date DESC, t.id DESC",
  smallest: "abs(t.amount), t.date DESC, t.id DESC",
};

/** Income and expense sums of rows whose WHERE already leaves transfers out (moneySql.notTransfer). */
const INCOME_SUM = `coalesce(sum(-t.amount) FILTER (WHERE ${moneySql.incomeSign()}), 0)`;
const EXPENSE_SUM = `coalesce(sum(t.amount) FILTER (WHERE ${moneySql.expenseSign()}), 0)`;

/** The key and label of each grouping; a group a row does not belong to is left out. */
const GROUPS: Record<GroupBy, { from: string; key: string }> = {
  category: { from: "JOIN categories g ON g.id = t.category_id", key: "g.name" },
  merchant: { from: "JOIN merchants g ON g.id = t.merchant_id", key: "g.name" },
  account: { from: "JOIN accounts g ON g.id = t.account_id", key: "g.name" },
  tag: { from: "JOIN transaction_tags gt ON gt.transaction_id = t.id JOIN tags g ON g.id = gt.tag_id", key: "g.name" },
  month: { from: "", key: "to_char(t.date, 'YYYY-MM')" },
  week: { from: "", key: "to_char(date_trunc('week', t.date), 'YYYY-MM-DD')" },
};

export class FinanceRepository {
  private readonly planned: RecurringRepository;
  private readonly investments: InvestmentRepository;

  constructor(private readonly sequelize: Sequelize) {
    this.planned = new RecurringRepository(sequelize);
    this.investments = new InvestmentRepository(sequelize);
  }

  /** The securities the family holds or trades (docs/investments.md): what a question may name. */
  securities(familyId: string): Promise<Array<{ id: string; ticker: string | null; name: string | null }>> {
    return this.investments.familySecurities(familyId);
  }

  /** Each investment account's holdings at the end of a day, as the ledger values them (of some securities only, when given). */
  holdingsOn(familyId: string, date: string, securityIds: readonly string[] | null): Promise<HeldRow[]> {
    return this.investments.holdingsOn(familyId, date, securityIds);
  }

  /** The family's trades summed per security: bought, sold, fees and the net cash put in. */
  tradeTotals(
    familyId: string,
    filter: { securityIds?: readonly string[]; startDate?: string; endDate?: string },
  ): Promise<TradeTotalsRow[]> {
    return this.investments.tradeTotals(familyId, filter);
  }

  /** Bills due between two days: the rows GraphQL `upcomingBills` answers (active, money out, soonest first). */
  upcomingBills(familyId: string, from: string, to: string): Promise<PlannedRecurringRow[]> {
    return this.planned.upcoming(familyId, from, to);
  }

  /** The family's stored recurring transactions of one status (every status when null), as `recurringTransactions` lists them. */
  storedRecurring(familyId: string, status: string | null, limit: number): Promise<{ rows: PlannedRecurringRow[]; total: number }> {
    return this.planned.page(familyId, { status: status ?? undefined }, limit, 0);
  }

  /**
   * One page of matching transactions and the totals of all of them per currency. Transfer legs between
   * the family's own accounts are neither listed nor counted: they are neither income nor expense.
   */
  async transactions(
    familyId: string,
    filter: TransactionFilter,
    order: FinanceOrder,
    limit: number,
    offset: number,
  ): Promise<{ rows: FinanceTransactionRow[]; total: number; totals: TotalsRow[] }> {
    const bind: unknown[] = [familyId];
    const where = ["t.family_id = $1", moneySql.notTransfer(), ...transactionConditions(filter, bind)].join(" AND ");
    const [rows, totals] = await Promise.all([
      selectRows<FinanceTransactionRow>(
        this.sequelize,
        `SELECT t.date, t.name, t.amount, t.currency, ${moneySql.kind()} AS kind, a.name AS account, c.name AS category, m.name AS merchant,
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
        `SELECT t.currency, ${INCOME_SUM} AS income, ${EXPENSE_SUM} AS expense, count(*)::int AS count,
                to_char(min(t.date), 'YYYY-MM-DD') AS "firstDate", to_char(max(t.date), 'YYYY-MM-DD') AS "lastDate"
           FROM transactions t WHERE ${where} GROUP BY t.currency ORDER BY count(*) DESC`,
        bind,
      ),
    ]);
    return { rows, total: totals.reduce((sum, row) => sum + row.count, 0), totals };
  }

  /** Income and expense of the matching transactions in one currency, per group, largest expense first. */
  groups(familyId: string, currency: string, filter: TransactionFilter, groupBy: GroupBy): Promise<GroupRow[]> {
    const bind: unknown[] = [familyId, currency];
    const where = ["t.family_id = $1", "t.currency = $2", moneySql.notTransfer(), ...transactionConditions(filter, bind)].join(" AND ");
    const group = GROUPS[groupBy];
    return selectRows<GroupRow>(
      this.sequelize,
      `SELECT ${group.key} AS key, ${INCOME_SUM} AS income, ${EXPENSE_SUM} AS expense, count(*)::int AS count
         FROM transactions t ${group.from}
        WHERE ${where}
        GROUP BY 1 ORDER BY ${EXPENSE_SUM} DESC, ${INCOME_SUM} DESC, 1`,
      bind,
    );
  }

  /** Income and expense per category over a period, in one currency. */
  byCategory(familyId: string, currency: string, startDate: string, endDate: string): Promise<CategoryAmountRow[]> {
    return selectRows<CategoryAmountRow>(
      this.sequelize,
      `SELECT coalesce(c.name, 'Uncategorized') AS category, ${moneySql.kind()} AS kind,
              abs(sum(t.amount)) AS amount, count(*)::int AS count
         FROM transactions t LEFT JOIN categories c ON c.id = t.category_id
        WHERE t.family_id = $1 AND t.currency = $2 AND t.date BETWEEN $3::date AND $4::date AND ${moneySql.notTransfer()}
        GROUP BY 1, 2 ORDER BY 2, abs(sum(t.amount)) DESC, 1`,
      [familyId, currency, startDate, endDate],
    );
  }

  /**
   * Payments that come back about once a month for about the same amount: the same merchant (or name,
   * when there is no merchant) charged in at least 3 of the months before `today` (`months` of them),
   * at most once in any month, every amount within 10% of the largest. Money out only, one currency.
   */
  recurring(familyId: string, currency: string, today: string, months: number): Promise<RecurringRow[]> {
    return selectRows<RecurringRow>(
      this.sequelize,
      `WITH charges AS (
         SELECT coalesce(m.name, t.name) AS name, t.date, t.amount, c.name AS category
           FROM transactions t LEFT JOIN merchants m ON m.id = t.merchant_id LEFT JOIN categories c ON c.id = t.category_id
          WHERE t.family_id = $1 AND t.currency = $2 AND ${moneySql.isExpense()} AND t.amount > 0
            AND t.date > ($3::date - make_interval(months => $4::int)) AND t.date <= $3::date
       )
       SELECT name, count(DISTINCT date_trunc('month', date))::int AS months, to_char(max(date), 'YYYY-MM-DD') AS "lastDate",
              (array_agg(amount ORDER BY date DESC))[1] AS "lastAmount", round(avg(amount), 2) AS "averageAmount",
              (array_agg(category ORDER BY date DESC))[1] AS category
         FROM charges GROUP BY name
       HAVING count(DISTINCT date_trunc('month', date)) >= 3 AND count(*) = count(DISTINCT date_trunc('month', date))
              AND min(amount) >= 0.9 * max(amount)
        ORDER BY avg(amount) DESC, name`,
      [familyId, currency, today, months],
    );
  }

  /** The date of the family's first transaction, or null when it has none. */
  async firstDate(familyId: string): Promise<string | null> {
    const [row] = await selectRows<{ first: string | null }>(
      this.sequelize,
      `SELECT to_char(min(date), 'YYYY-MM-DD') AS first FROM transactions WHERE family_id = $1`,
      [familyId],
    );
    return row?.first ?? null;
  }

  /**
   * Assets and liabilities of the family's accounts, per currency, at each of the last `months` month
   * ends (the current month's last day included), each account at its newest ledger row on or before
   * it: the ledger's net worth series (one statement for every month and currency; a month with no
   * balance in a currency is zero there).
   */
  async balanceHistory(familyId: string, currencies: string[], today: string, months: number): Promise<BalanceHistoryRow[][]> {
    const [year, month] = today.split("-").map(Number);
    const monthsShown = Array.from({ length: months }, (_, index) =>
      new Date(Date.UTC(year, month - months + index, 1)).toISOString().slice(0, 7),
    );
    const lastDay = new Date(Date.UTC(year, month, 0)).toISOString().slice(0, 10);
    const points = await readPrepared<{ date: string; currency: string; assets: string; liabilities: string }>(
      this.sequelize,
      netWorthStatement("month"),
      [familyId, `${monthsShown[0]}-01`, lastDay],
    );
    const found = new Map(points.map((point) => [`${point.currency.trim()} ${point.date.slice(0, 7)}`, point]));
    return currencies.map((currency) =>
      monthsShown.map((key) => {
        const point = found.get(`${currency} ${key}`);
        return { month: key, assets: point?.assets ?? "0", liabilities: point?.liabilities ?? "0" };
      }),
    );
  }

  /**
   * Each account's balance at the end of `date`, as its calendar row of that day (the ledger's series
   * rule, series.sql.ts); null before its first row. Only the rows it needs are derived (derive.sql.ts).
   */
  balancesOn(familyId: string, date: string): Promise<BalanceOnRow[]> {
    return readPrepared<BalanceOnRow>(
      this.sequelize,
      `WITH points AS (SELECT a.id AS account_id, $2::date AS date, ${pointNeighbours("a.id", "$2::date")} FROM accounts a WHERE a.family_id = $1),
       ${derivation({ accounts: "a.family_id = $1", keep: POINT_ROWS })}
       SELECT a.name, a.account_type AS "accountType", a.classification, a.currency, (${pointBalance("balance")})::text AS balance,
              (${pointBalance("cash_balance")})::text AS cash, (${pointBalance("holdings_value")})::text AS "holdingsValue"
         FROM accounts a
         JOIN points p ON p.account_id = a.id
         LEFT JOIN derived b ON b.account_id = a.id AND b.kept AND b.date = ${POINT_ROW_OF}
        WHERE a.family_id = $1 ORDER BY lower(a.name), a.id`,
      [familyId, date],
    );
  }

  /** Names the family actually uses, with their ids, so questions and tool arguments can be matched against them. */
  vocabulary(familyId: string): Promise<VocabularyEntry[]> {
    return selectRows<VocabularyEntry>(
      this.sequelize,
      `SELECT 'category' AS kind, id, name FROM categories WHERE family_id = $1
       UNION ALL SELECT 'merchant', id, name FROM merchants WHERE family_id = $1
       UNION ALL SELECT 'account', id, name FROM accounts WHERE family_id = $1
       UNION ALL SELECT 'tag', id, name FROM tags WHERE family_id = $1
       ORDER BY 1, 3`,
      [familyId],
    );
  }

  /** The family's rates into `currency` dated on or before `upTo`, per currency oldest first (docs/ledger.md#currencies). */
  exchangeRates(familyId: string, currency: string, upTo: string): Promise<Array<{ fromCurrency: string; date: string; rate: string }>> {
    return selectRows(
      this.sequelize,
      `SELECT from_currency AS "fromCurrency", date::text AS date, trim_scale(rate)::text AS rate FROM exchange_rates
        WHERE family_id = $1 AND to_currency = $2 AND date <= $3::date ORDER BY from_currency, date`,
      [familyId, currency, upTo],
    );
  }
}
