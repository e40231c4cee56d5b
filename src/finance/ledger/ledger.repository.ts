import type { Sequelize, Transaction } from "sequelize";
import { bindParam, readRows, selectRows } from "../../platform/common/sql";
import { recomputeStatement } from "./ledger.sql";

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
  inflows: string;
  outflows: string;
  createdAt: Date;
  updatedAt: Date;
};

export type BalanceFilter = { accountId?: string; currency?: string; startDate?: string; endDate?: string };

/** One point of a series: the balance at the end of `date` (the last day of its bucket). */
export type SeriesPoint = { date: string; balance: string };

export type SeriesInterval = "day" | "week" | "month";

const BALANCE_COLUMNS = `b.id, b.account_id AS "accountId", a.name AS "accountName", a.account_type AS "accountType",
  a.classification, a.currency, b.date::text AS date, b.start_balance AS "startBalance", b.end_balance AS "endBalance",
  b.inflows, b.outflows, b.created_at AS "createdAt", b.updated_at AS "updatedAt"`;

/**
 * The series' buckets: each interval's last day from `from` to `to` (`to` itself closes the last
 * one), each with the balance of the newest row on or before it.
 */
function bucketEnds(interval: SeriesInterval): string {
  const step = `'1 ${interval}'::interval`;
  return `SELECT least((g + ${step} - interval '1 day')::date, $3::date) AS date
            FROM generate_series(date_trunc('${interval}', $2::date), $3::date, ${step}) g`;
}

export class LedgerRepository {
  constructor(private readonly sequelize: Sequelize) {}

  /**
   * Locks these accounts' rows for the rest of `transaction`, in id order (so two writes touching the
   * same two accounts cannot deadlock), and tells how each is derived. Concurrent writes to one account
   * take turns: the second one's recompute starts after the first commits and sees its rows.
   */
  async lockAccounts(ids: readonly string[], transaction: Transaction): Promise<Map<string, LedgerMode>> {
    const rows = await selectRows<{ id: string; reverse: boolean }>(
      this.sequelize,
      `SELECT a.id, EXISTS (SELECT 1 FROM valuations v WHERE v.account_id = a.id AND v.kind = 'current_anchor') AS reverse
         FROM accounts a WHERE a.id = ANY($1::uuid[]) ORDER BY a.id FOR UPDATE OF a`,
      [ids],
      transaction,
    );
    return new Map(rows.map((row) => [row.id, row.reverse ? "reverse" : "forward"]));
  }

  /** Derives the account's balances from `from` on (FULL_HISTORY for all of them): one statement. */
  async recompute(accountId: string, mode: LedgerMode, from: string, transaction?: Transaction): Promise<void> {
    await this.sequelize.query(recomputeStatement(mode), { bind: [accountId, from], transaction });
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

  /** The family's balance rows, newest day first (then newest row), with the total in the same statement. */
  async page(familyId: string, filter: BalanceFilter, limit: number, offset: number): Promise<{ rows: BalanceRow[]; total: number }> {
    const bind: unknown[] = [familyId];
    const conditions = ["a.family_id = $1"];
    if (filter.accountId) conditions.push(`b.account_id = ${bindParam(bind, filter.accountId)}::uuid`);
    if (filter.currency) conditions.push(`a.currency = ${bindParam(bind, filter.currency)}`);
    if (filter.startDate) conditions.push(`b.date >= ${bindParam(bind, filter.startDate)}::date`);
    if (filter.endDate) conditions.push(`b.date <= ${bindParam(bind, filter.endDate)}::date`);
    const where = conditions.join(" AND ");
    const rows = await readRows<BalanceRow & { total: string }>(
      this.sequelize,
      `SELECT ${BALANCE_COLUMNS}, count(*) OVER () AS total
         FROM balances b JOIN accounts a ON a.id = b.account_id
        WHERE ${where} ORDER BY b.date DESC, b.created_at DESC, b.id DESC LIMIT ${limit} OFFSET ${offset}`,
      bind,
    );
    if (rows.length > 0 || offset === 0) return { rows, total: rows.length > 0 ? Number(rows[0].total) : 0 };
    const [count] = await readRows<{ total: string }>(
      this.sequelize,
      `SELECT count(*) AS total FROM balances b JOIN accounts a ON a.id = b.account_id WHERE ${where}`,
      bind,
    );
    return { rows, total: Number(count.total) };
  }

  async byId(familyId: string, id: string): Promise<BalanceRow | null> {
    const [row] = await readRows<BalanceRow>(
      this.sequelize,
      `SELECT ${BALANCE_COLUMNS} FROM balances b JOIN accounts a ON a.id = b.account_id WHERE a.family_id = $1 AND b.id = $2`,
      [familyId, id],
    );
    return row ?? null;
  }

  /** The account's balance at the end of each bucket from `from` to `to`; buckets before its first row are left out. */
  history(familyId: string, accountId: string, from: string, to: string, interval: SeriesInterval): Promise<SeriesPoint[]> {
    return readRows<SeriesPoint>(
      this.sequelize,
      `SELECT e.date::text AS date, last.end_balance AS balance
         FROM (${bucketEnds(interval)}) e
         CROSS JOIN LATERAL (
           SELECT b.end_balance FROM balances b JOIN accounts a ON a.id = b.account_id
            WHERE b.account_id = $4 AND a.family_id = $1 AND b.date <= e.date ORDER BY b.date DESC LIMIT 1) last
        ORDER BY e.date`,
      [familyId, from, to, accountId],
    );
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
    return readRows(
      this.sequelize,
      `SELECT e.date::text AS date, a.currency,
              coalesce(sum(last.end_balance) FILTER (WHERE a.classification = 'asset'), 0)::text AS assets,
              coalesce(sum(last.end_balance) FILTER (WHERE a.classification = 'liability'), 0)::text AS liabilities,
              (coalesce(sum(last.end_balance) FILTER (WHERE a.classification = 'asset'), 0)
                - coalesce(sum(last.end_balance) FILTER (WHERE a.classification = 'liability'), 0))::text AS balance
         FROM (${bucketEnds(interval)}) e
         CROSS JOIN accounts a
         JOIN LATERAL (SELECT b.end_balance FROM balances b WHERE b.account_id = a.id AND b.date <= e.date ORDER BY b.date DESC LIMIT 1) last ON true
        WHERE a.family_id = $1
        GROUP BY e.date, a.currency
        ORDER BY e.date, a.currency`,
      [familyId, from, to],
    );
  }
}
