import type { Sequelize, Transaction } from "sequelize";
import { bindParam, readPrepared, readRows, runPipelined, runPrepared, selectRows } from "../../platform/common/sql";
import { FULL_HISTORY, LOCK_ACCOUNTS, REBUILD_DAYS, REFRESH_DAY, SET_BALANCE } from "./ledger.sql";
import { derivation } from "./derive.sql";
import { historyStatement, netWorthStatement } from "./series.sql";

export type LedgerMode = "forward" | "reverse";

export type BalanceRow = {
  id: string;
  accountId: string;
  accountName: string;
  accountType: string;
  classification: string;
  currency: string;
  date: string;
  startBalance: string;
  endBalance: string;
  /** The cash part at the start and end of the day (the whole balance but on an investment, less its holdings). */
  startCashBalance: string;
  endCashBalance: string;
  /** An investment's holdings value at the start and end of the day (0 on any other account). */
  startHoldingsValue: string;
  endHoldingsValue: string;
  inflows: string;
  outflows: string;
  createdAt: Date;
  updatedAt: Date;
};

export type BalanceFilter = { accountId?: string; currency?: string; startDate?: string; endDate?: string };

/** One point of a series: the balance at the end of `date` (the last day of its bucket). */
export type SeriesPoint = { date: string; balance: string };

export type SeriesInterval = "day" | "week" | "month";

/** Days of one account whose rows a write changed; `flowsOnly`: only transactions changed (no valuation or holdings). */
export type DayRefresh = { accountId: string; dates: readonly string[]; flowsOnly: boolean };

/**
 * The statements that bring these days' rows (and the account's balance) up to date: one refresh per
 * day; a FULL_HISTORY date rebuilds them all.
 */
function refreshStatements({ accountId, dates, flowsOnly }: DayRefresh): Array<{ sql: string; bind: unknown[] }> {
  const setBalance = { sql: SET_BALANCE, bind: [accountId] };
  if (dates.includes(FULL_HISTORY)) return [{ sql: REBUILD_DAYS, bind: [accountId, FULL_HISTORY] }, setBalance];
  const refreshes = [...new Set(dates)].map((date) => ({ sql: REFRESH_DAY, bind: [accountId, date, flowsOnly] }));
  return [...refreshes, ...(flowsOnly ? [] : [setBalance])];
}

const BALANCE_COLUMNS = `b.id, b.account_id AS "accountId", a.name AS "accountName", a.account_type AS "accountType",
  a.classification, a.currency, b.date::text AS date, b.start_balance AS "startBalance", b.end_balance AS "endBalance",
  b.start_cash_balance AS "startCashBalance", b.end_cash_balance AS "endCashBalance",
  b.start_holdings_value AS "startHoldingsValue", b.end_holdings_value AS "endHoldingsValue",
  b.inflows, b.outflows, b.created_at AS "createdAt", b.updated_at AS "updatedAt"`;

export class LedgerRepository {
  constructor(private readonly sequelize: Sequelize) {}

  /**
   * Locks these accounts' rows for the rest of `transaction`, in id order (so two writes touching the
   * same two accounts cannot deadlock), and tells how each is derived. Concurrent writes to one account
   * take turns: the second one's recompute starts after the first commits and sees its rows.
   */
  async lockAccounts(ids: readonly string[], transaction: Transaction): Promise<Map<string, LedgerMode>> {
    const rows = await runPrepared<{ id: string; reverse: boolean }>(this.sequelize, LOCK_ACCOUNTS, [ids], transaction);
    return new Map(rows.map((row) => [row.id, row.reverse ? "reverse" : "forward"]));
  }

  /**
   * Rebuilds the account's day rows from `from` on (FULL_HISTORY for all of them) from its
   * transactions, valuations and holdings, then sets its balance: a sync, a new account, a type change.
   */
  async recompute(accountId: string, _mode: LedgerMode, from: string, transaction?: Transaction): Promise<void> {
    const statements = [
      // A rebuild reads up to every entry of its account: planned for that account each time (a
      // sequential scan where the account is most of the table, its index where it is not).
      { sql: REBUILD_DAYS, bind: [accountId, from], plannedEachTime: true },
      { sql: SET_BALANCE, bind: [accountId] },
    ];
    // Both in one round trip; outside a caller's transaction, in one of their own (one commit, and no
    // reader sees the days rebuilt with the balance not yet set).
    if (transaction) await runPipelined(this.sequelize, statements, transaction);
    else await this.sequelize.transaction((own) => runPipelined(this.sequelize, statements, own));
  }

  /**
   * Refreshes the rows of these days of the account. `flowsOnly`: the write changed only transactions,
   * so the balance moves by the flows' difference (after the newest anchor) in the same statement;
   * otherwise the balance is set afresh from the derived rows.
   */
  async refreshDays(accountId: string, dates: readonly string[], flowsOnly: boolean, transaction?: Transaction): Promise<void> {
    for (const { sql, bind } of refreshStatements({ accountId, dates, flowsOnly })) await this.write(sql, bind, transaction);
  }

  /**
   * Locks these accounts (as lockAccounts) and refreshes their days (as refreshDays), all sent in one
   * round trip: for a write that locked nothing before writing (docs/ledger.md, "Writes"). The refreshes
   * run after the lock is held, each with a snapshot taken then.
   */
  async lockAndRefresh(refreshes: readonly DayRefresh[], transaction: Transaction): Promise<void> {
    const ids = [...new Set(refreshes.map((refresh) => refresh.accountId))].sort();
    await runPipelined(this.sequelize, [{ sql: LOCK_ACCOUNTS, bind: [ids] }, ...refreshes.flatMap(refreshStatements)], transaction);
  }

  /** Sets the account's balance and its cash part to its newest day's, as derived. */
  async setBalance(accountId: string, transaction?: Transaction): Promise<void> {
    await this.write(SET_BALANCE, [accountId], transaction);
  }

  /** One of the ledger's write statements: prepared on the write's transaction (planned once per connection). */
  private async write(sql: string, bind: unknown[], transaction?: Transaction): Promise<void> {
    if (transaction) await runPrepared(this.sequelize, sql, bind, transaction);
    else await this.sequelize.query(sql, { bind });
  }

  /** The oldest transaction's date, or null when the account has none. */
  async oldestTransactionDate(accountId: string, transaction: Transaction): Promise<string | null> {
    const [row] = await selectRows<{ date: string | null }>(
      this.sequelize,
      "SELECT min(date)::text AS date FROM transactions WHERE account_id = $1",
      [accountId],
      transaction,
    );
    return row.date;
  }

  async countTransactions(accountId: string, transaction: Transaction): Promise<number> {
    const [row] = await selectRows<{ count: string }>(
      this.sequelize,
      "SELECT count(*) AS count FROM (SELECT 1 FROM transactions WHERE account_id = $1 LIMIT 1) t",
      [accountId],
      transaction,
    );
    return Number(row.count);
  }

  /**
   * The family's balance rows, newest day first (then newest row), with the total in the same statement.
   * With an account: only that account's page is derived (accountPage). Without: the view, whose
   * window partition (the family and the account) the family's account ids reach as a condition on
   * the days' key (they are looked up first: a subquery would stop at the view's windows, and the
   * family's own filter has no index of the days); the date filters apply to the derived rows.
   */
  async page(familyId: string, filter: BalanceFilter, limit: number, offset: number): Promise<{ rows: BalanceRow[]; total: number }> {
    if (filter.accountId) return this.accountPage(familyId, filter.accountId, filter, limit, offset);
    const accounts = await readRows<{ id: string }>(this.sequelize, "SELECT id FROM accounts WHERE family_id = $1", [familyId]);
    const bind: unknown[] = [familyId, accounts.map((account) => account.id)];
    const conditions = ["b.family_id = $1", "b.account_id = ANY ($2::uuid[])", "a.family_id = $1"];
    if (filter.currency) conditions.push(`a.currency = ${bindParam(bind, filter.currency)}`);
    if (filter.startDate) conditions.push(`b.date >= ${bindParam(bind, filter.startDate)}::date`);
    if (filter.endDate) conditions.push(`b.date <= ${bindParam(bind, filter.endDate)}::date`);
    const where = conditions.join(" AND ");
    const filterBind = [...bind];
    const rows = await readPrepared<BalanceRow & { total: string }>(
      this.sequelize,
      `SELECT ${BALANCE_COLUMNS}, count(*) OVER () AS total
         FROM balances b JOIN accounts a ON a.id = b.account_id
        WHERE ${where} ORDER BY b.date DESC, b.created_at DESC, b.id DESC
        LIMIT ${bindParam(bind, limit)}::int OFFSET ${bindParam(bind, offset)}::int`,
      bind,
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await readRows<{ total: string }>(
      this.sequelize,
      `SELECT count(*) AS total FROM ledger_days b JOIN accounts a ON a.id = b.account_id WHERE ${where}`,
      filterBind,
    );
    return { rows, total: Number(count.total) };
  }

  /**
   * One account's page: the page's days are picked from the table by the filters (one row per day),
   * then only they and the day before the oldest of them (its end is the page's first start) are
   * derived, besides the anchors. The total counts the same rows of the table.
   */
  private async accountPage(
    familyId: string,
    accountId: string,
    filter: BalanceFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: BalanceRow[]; total: number }> {
    const bind: unknown[] = [familyId, accountId];
    // The days' own conditions (the account's, the dates) apart: a page with rows has passed the
    // account's (its family, its currency), so its total counts the account's days alone, from the
    // primary key, not joined row by row to the account.
    const days = ["d.account_id = $2::uuid"];
    const conditions = ["d.family_id = $1", "a.id = $2::uuid", "a.family_id = $1"];
    if (filter.currency) conditions.push(`a.currency = ${bindParam(bind, filter.currency)}`);
    if (filter.startDate) days.push(`d.date >= ${bindParam(bind, filter.startDate)}::date`);
    if (filter.endDate) days.push(`d.date <= ${bindParam(bind, filter.endDate)}::date`);
    const where = [...days, ...conditions].join(" AND ");
    const rows = await readPrepared<BalanceRow & { total: string }>(
      this.sequelize,
      `WITH page AS (
         SELECT d.date FROM ledger_days d JOIN accounts a ON a.id = d.account_id
          WHERE ${where} ORDER BY d.date DESC LIMIT ${bindParam(bind, limit)}::int OFFSET ${bindParam(bind, offset)}::int
       ),
       ${derivation({
         accounts: "a.id = $2::uuid AND a.family_id = $1",
         keep: `SELECT $2::uuid AS account_id, date FROM page
                UNION ALL SELECT $2::uuid, max(d.date) FROM ledger_days d WHERE d.account_id = $2::uuid AND d.date < (SELECT min(date) FROM page)`,
       })}
       SELECT ${BALANCE_COLUMNS},
              (SELECT count(*) FROM ledger_days d WHERE ${days.join(" AND ")}) AS total
         FROM derived b JOIN accounts a ON a.id = b.account_id
        WHERE b.date IN (SELECT date FROM page)
        ORDER BY b.date DESC`,
      bind,
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await readRows<{ total: string }>(
      this.sequelize,
      `SELECT count(*) AS total FROM ledger_days d JOIN accounts a ON a.id = d.account_id WHERE ${where}`,
      bind.slice(0, -2),
    );
    return { rows, total: Number(count.total) };
  }

  /**
   * One row: its account is looked up first, so the view derives only that account's rows. A day's id
   * is its account's id with the day's number in its last 32 bits (`ledger_day_id`, migration 0033):
   * the family's account whose id shares the first 96 bits, then the day whose number gives the rest.
   */
  async byId(familyId: string, id: string): Promise<BalanceRow | null> {
    const [day] = await readRows<{ accountId: string }>(
      this.sequelize,
      `SELECT d.account_id AS "accountId"
         FROM accounts a
         JOIN ledger_days d ON d.account_id = a.id
                           AND d.date - DATE '1970-01-01' = ('x' || right($2::text, 8))::bit(32)::int # ('x' || right(a.id::text, 8))::bit(32)::int
        WHERE a.family_id = $1
          AND a.id BETWEEN (left(replace($2::text, '-', ''), 24) || '00000000')::uuid AND (left(replace($2::text, '-', ''), 24) || 'ffffffff')::uuid
          AND ledger_day_id(d.account_id, d.date) = $2::uuid`,
      [familyId, id],
    );
    if (!day) return null;
    const [row] = await readPrepared<BalanceRow>(
      this.sequelize,
      `SELECT ${BALANCE_COLUMNS} FROM balances b JOIN accounts a ON a.id = b.account_id
        WHERE b.family_id = $1 AND b.account_id = $3 AND b.id = $2`,
      [familyId, id, day.accountId],
    );
    return row ?? null;
  }

  /** The account's balance at the end of each bucket from `from` to `to`; buckets before its first row are left out. */
  history(familyId: string, accountId: string, from: string, to: string, interval: SeriesInterval): Promise<SeriesPoint[]> {
    return readPrepared<SeriesPoint>(this.sequelize, historyStatement(interval), [familyId, from, to, accountId]);
  }

  /**
   * Net worth at the end of each bucket, per currency (never converted): assets less liabilities of
   * the family's accounts, each at its newest row on or before the bucket's day.
   */
  netWorthSeries(
    familyId: string,
    from: string,
    to: string,
    interval: SeriesInterval,
  ): Promise<Array<SeriesPoint & { currency: string; assets: string; liabilities: string }>> {
    return readPrepared(this.sequelize, netWorthStatement(interval), [familyId, from, to]);
  }
}
