import type { Sequelize, Transaction } from "sequelize";
import { bindParam, readPrepared, readRows, runPipelined, runPrepared, selectRows } from "../../platform/common/sql";
import { FULL_HISTORY, LOCK_ACCOUNTS, REBUILD_DAYS, REFRESH_DAY, SET_BALANCE } from "./ledger.sql";
import { derivation } from "./derive.sql";
import { MOVING_ACCOUNT_TYPES, sqlList as list } from "./account-kinds";
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

/**
 * The view's columns for the calendar day `day`, from the derived row `b` of the account's first day
 * on or after it. On its own day (`own_day`), the row's figures. On an earlier day without a row nothing
 * happened: as upstream's calculators write such a day, it starts and ends where the row starts, with no
 * money in or out. (Where the row starts, not where the row before ends: the two differ across an anchor
 * of a bank-fed account, whose days are derived backwards from the anchor after them, as upstream's
 * reverse calculator walks; on a manual account they are the same.) Its id is made as a row's
 * (`ledger_day_id`).
 */
const CALENDAR_DAY = (day: string) => `
  ledger_day_id(b.account_id, ${day}) AS id, b.family_id, b.account_id, ${day} AS date, b.created_at, b.updated_at,
  ${day} = b.date AS own_day,
  b.start_balance, CASE WHEN ${day} = b.date THEN b.end_balance ELSE b.start_balance END AS end_balance,
  b.start_cash_balance, CASE WHEN ${day} = b.date THEN b.end_cash_balance ELSE b.start_cash_balance END AS end_cash_balance,
  b.start_holdings_value, CASE WHEN ${day} = b.date THEN b.end_holdings_value ELSE b.start_holdings_value END AS end_holdings_value`;

/**
 * A shown day's money in and money out (`p`: a page's row, with its account's id, its day, `own_day`
 * and `moves`), summed from that day's transactions and trades by their (account, date) indexes: a day
 * row keeps only the net (migration 0042), and a page sums at most its own 100 days' entries. An
 * account only valuations move (a property, a vehicle) shows none, as the view's sign says.
 */
const DAY_FLOWS = `
  LEFT JOIN LATERAL (
    SELECT round(coalesce(-sum(e.amount) FILTER (WHERE e.amount < 0), 0) * p.moves, 4) AS inflows,
           round(coalesce(sum(e.amount) FILTER (WHERE e.amount > 0), 0) * p.moves, 4) AS outflows
      FROM (SELECT t.amount FROM transactions t WHERE t.account_id = p.day_account AND t.date = p.day
            UNION ALL
            SELECT t.amount FROM trades t WHERE t.account_id = p.day_account AND t.date = p.day) e
     WHERE p.own_day
  ) f ON true`;

/** Day numbers (days since 1970-01-01) of the years 1 to 9999. */
const DAY_NUMBERS = { first: -719162, last: 2932896 };

/** A page's columns (`b` a shown day, `a` its account), with what DAY_FLOWS needs of the row. */
const PAGE_COLUMNS = `b.id, b.account_id AS "accountId", a.name AS "accountName", a.account_type AS "accountType",
  a.classification, a.currency, b.date::text AS date, b.start_balance AS "startBalance", b.end_balance AS "endBalance",
  b.start_cash_balance AS "startCashBalance", b.end_cash_balance AS "endCashBalance",
  b.start_holdings_value AS "startHoldingsValue", b.end_holdings_value AS "endHoldingsValue",
  b.created_at AS "createdAt", b.updated_at AS "updatedAt",
  b.account_id AS day_account, b.date AS day, b.own_day, (a.account_type IN (${list(MOVING_ACCOUNT_TYPES)}))::int AS moves`;

/** A BalanceRow's columns from a page's row `p` and its flows `f` (DAY_FLOWS). */
const BALANCE_COLUMNS = `p.id, p."accountId", p."accountName", p."accountType", p.classification, p.currency, p.date,
  p."startBalance", p."endBalance", p."startCashBalance", p."endCashBalance", p."startHoldingsValue", p."endHoldingsValue",
  f.inflows, f.outflows, p."createdAt", p."updatedAt"`;

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
   * A row for every calendar day of each account from its first row to its last (CALENDAR_DAY).
   * With an account: only that account's page is derived (accountPage). Without: the view, whose
   * window partition (the family and the account) the family's account ids reach as a condition on
   * the days' key (they are looked up first: a subquery would stop at the view's windows, and the
   * family's own filter has no index of the days); each derived row then stands for its own day and
   * the days after the account's row before it, and the date filters apply to those days.
   */
  async page(familyId: string, filter: BalanceFilter, limit: number, offset: number): Promise<{ rows: BalanceRow[]; total: number }> {
    if (filter.accountId) return this.accountPage(familyId, filter.accountId, filter, limit, offset);
    const accounts = await readRows<{ id: string }>(this.sequelize, "SELECT id FROM accounts WHERE family_id = $1", [familyId]);
    const bind: unknown[] = [familyId, accounts.map((account) => account.id)];
    const conditions = ["a.family_id = $1"];
    if (filter.currency) conditions.push(`a.currency = ${bindParam(bind, filter.currency)}`);
    if (filter.startDate) conditions.push(`b.date >= ${bindParam(bind, filter.startDate)}::date`);
    if (filter.endDate) conditions.push(`b.date <= ${bindParam(bind, filter.endDate)}::date`);
    const days = `
      WITH shown AS (
        SELECT ${CALENDAR_DAY("b.date - n")}
          FROM (SELECT b.*, lag(b.date) OVER (PARTITION BY b.account_id ORDER BY b.date) AS previous
                  FROM balances b WHERE b.family_id = $1 AND b.account_id = ANY ($2::uuid[])) b
          CROSS JOIN LATERAL generate_series(0, coalesce(b.date - b.previous - 1, 0)) n
      )`;
    const where = conditions.join(" AND ");
    const filterBind = [...bind];
    // The page first, then its days' flows: only the shown days' entries are summed.
    const rows = await readPrepared<BalanceRow & { total: string }>(
      this.sequelize,
      `${days}
       SELECT ${BALANCE_COLUMNS}, p.total FROM (
         SELECT ${PAGE_COLUMNS}, count(*) OVER () AS total
           FROM shown b JOIN accounts a ON a.id = b.account_id
          WHERE ${where} ORDER BY b.date DESC, b.created_at DESC, b.id DESC
          LIMIT ${bindParam(bind, limit)}::int OFFSET ${bindParam(bind, offset)}::int
       ) p ${DAY_FLOWS}
       ORDER BY p.day DESC, p."createdAt" DESC, p.id DESC`,
      bind,
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await readRows<{ total: string }>(
      this.sequelize,
      `${days} SELECT count(*) AS total FROM shown b JOIN accounts a ON a.id = b.account_id WHERE ${where}`,
      filterBind,
    );
    return { rows, total: Number(count.total) };
  }

  /**
   * One account's page: the page's calendar days are counted back from the newest one shown, so a page
   * costs its own days whatever its offset. Each takes the figures of the account's first row on or
   * after it (one step along the days' key), and only those rows and the row before the oldest of them
   * (a manual account's row starts where the row before it ends) are derived, besides the anchors. The
   * total is the number of calendar days from the first shown to the newest.
   */
  private async accountPage(
    familyId: string,
    accountId: string,
    filter: BalanceFilter,
    limit: number,
    offset: number,
  ): Promise<{ rows: BalanceRow[]; total: number }> {
    const bind: unknown[] = [familyId, accountId];
    const conditions = ["a.id = $2::uuid", "a.family_id = $1"];
    if (filter.currency) conditions.push(`a.currency = ${bindParam(bind, filter.currency)}`);
    const first = filter.startDate ? `greatest(x.first, ${bindParam(bind, filter.startDate)}::date)` : "x.first";
    const last = filter.endDate ? `least(x.last, ${bindParam(bind, filter.endDate)}::date)` : "x.last";
    const span = `
      span AS (
        SELECT ${first} AS first, ${last} AS last
          FROM (SELECT min(d.date) AS first, max(d.date) AS last FROM ledger_days d WHERE d.account_id = $2::uuid) x
         WHERE EXISTS (SELECT 1 FROM accounts a WHERE ${conditions.join(" AND ")})
      )`;
    const spanBind = [...bind];
    const rows = await readPrepared<BalanceRow & { total: string }>(
      this.sequelize,
      `WITH ${span},
       page AS (
         SELECT s.last - n AS day FROM span s, generate_series(${bindParam(bind, offset)}::int, least(${bindParam(bind, offset)}::int + ${bindParam(bind, limit)}::int - 1, s.last - s.first)) n
       ),
       sourced AS (
         SELECT p.day, (SELECT min(d.date) FROM ledger_days d WHERE d.account_id = $2::uuid AND d.date >= p.day) AS date FROM page p
       ),
       ${derivation({
         accounts: "a.id = $2::uuid AND a.family_id = $1",
         keep: `SELECT $2::uuid AS account_id, date FROM sourced
                UNION ALL SELECT $2::uuid, max(d.date) FROM ledger_days d WHERE d.account_id = $2::uuid AND d.date < (SELECT min(date) FROM sourced)`,
       })},
       shown AS (SELECT ${CALENDAR_DAY("s.day")} FROM sourced s JOIN derived b ON b.date = s.date AND b.kept)
       SELECT ${BALANCE_COLUMNS}, (SELECT greatest(last - first + 1, 0) FROM span) AS total
         FROM (SELECT ${PAGE_COLUMNS} FROM shown b JOIN accounts a ON a.id = b.account_id) p ${DAY_FLOWS}
        ORDER BY p.day DESC`,
      bind,
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await readRows<{ total: string | null }>(
      this.sequelize,
      `WITH ${span} SELECT greatest(last - first + 1, 0) AS total FROM span`,
      spanBind,
    );
    return { rows, total: Number(count?.total ?? 0) };
  }

  /**
   * One row. A day's id is its account's id with the day's number in its last 32 bits
   * (`ledger_day_id`, migration 0033): the family's account whose id shares the first 96 bits, then
   * the day the rest names, read as that account's page of that one day (so a calendar day between
   * two rows has an id too, and a day outside the account's span has none).
   */
  async byId(familyId: string, id: string): Promise<BalanceRow | null> {
    const [day] = await readRows<{ accountId: string; date: string }>(
      this.sequelize,
      `SELECT a.id AS "accountId", (DATE '1970-01-01' + x.n)::text AS date
         FROM accounts a
         CROSS JOIN LATERAL (SELECT ('x' || right($2::text, 8))::bit(32)::int # ('x' || right(a.id::text, 8))::bit(32)::int AS n) x
        WHERE a.family_id = $1
          AND a.id BETWEEN (left(replace($2::text, '-', ''), 24) || '00000000')::uuid AND (left(replace($2::text, '-', ''), 24) || 'ffffffff')::uuid
          -- Years 1 to 9999: any other number is no day of an account (and past PostgreSQL's dates).
          AND x.n BETWEEN ${DAY_NUMBERS.first} AND ${DAY_NUMBERS.last}`,
      [familyId, id],
    );
    if (!day) return null;
    const { rows } = await this.accountPage(familyId, day.accountId, { startDate: day.date, endDate: day.date }, 1, 0);
    return rows.find((row) => row.id === id) ?? null;
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
