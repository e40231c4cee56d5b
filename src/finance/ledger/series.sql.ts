import { derivation } from "./derive.sql";
import type { SeriesInterval } from "./ledger.repository";

/**
 * Series over the derived balances (docs/ledger.md, "Reading"). Bind parameters: $1 the family, $2
 * from, $3 to.
 *
 * The balance at the end of a day D is that of D's calendar row, as `GET /balances` lists it
 * (ledger.repository.ts, CALENDAR_DAY): the end of the account's row on D; on a day without a row
 * between two rows, the start of the row after it (on a manual account the end of the row before it;
 * on a bank-fed one, derived backwards from the anchor after it, as upstream's reverse calculator
 * walks); after the newest row, that row's end; before the first, none. So each point needs at most
 * two rows, found by one descent of the days' key each (`prev`, the newest on or before D, and `next`,
 * the first on or after it), and only those rows are derived.
 */

/** Each interval's first day (its bucket) and last day (`to` closes the last one), from `from` to `to`. */
function buckets(interval: SeriesInterval): string {
  const step = `'1 ${interval}'::interval`;
  return `SELECT g::date AS bucket, least((g + ${step} - interval '1 day')::date, $3::date) AS date
            FROM generate_series(date_trunc('${interval}', $2::date), $3::date, ${step}) g`;
}

/**
 * The rows a point's balance reads, from `points` (account_id, date, prev, next): its `prev`, and its
 * `next` when that one stands for it (a day without a row before the newest row), whose start needs
 * the row before it derived too, which is `prev`.
 */
export const POINT_ROWS = `
  SELECT account_id, prev AS date FROM points WHERE prev IS NOT NULL
  UNION SELECT account_id, next FROM points WHERE prev IS NOT NULL AND prev < date AND next IS NOT NULL`;

/** A point's (`p`) balance from its derived rows `b` (joined on POINT_ROW_OF): the row's end on or after its own day, else its start. */
export const POINT_ROW_OF = "CASE WHEN p.prev < p.date AND p.next IS NOT NULL THEN p.next ELSE p.prev END";
export const pointBalance = (column: "balance" | "cash_balance" | "holdings_value") =>
  `CASE WHEN b.date <= p.date THEN b.end_${column} ELSE b.start_${column} END`;

/** (prev, next) of an account `account` on `date`, as columns. */
export const pointNeighbours = (account: string, date: string) => `
  (SELECT max(d.date) FROM ledger_days d WHERE d.account_id = ${account} AND d.date <= ${date}) AS prev,
  (SELECT min(d.date) FROM ledger_days d WHERE d.account_id = ${account} AND d.date >= ${date}) AS next`;

/** One account's ($4) balance at the end of each interval; intervals before its first row are left out. */
export function historyStatement(interval: SeriesInterval): string {
  return `
    WITH points AS (
      SELECT $4::uuid AS account_id, e.date, ${pointNeighbours("$4::uuid", "e.date")} FROM (${buckets(interval)}) e
    ),
    ${derivation({ accounts: "a.id = $4::uuid AND a.family_id = $1", keep: POINT_ROWS })}
    SELECT p.date::text AS date, ${pointBalance("balance")}::text AS balance
      FROM points p JOIN derived b ON b.date = ${POINT_ROW_OF} AND b.kept
     ORDER BY p.date`;
}

/** The family's assets, liabilities and net worth per currency at the end of each interval. */
export function netWorthStatement(interval: SeriesInterval): string {
  return `
    WITH points AS (
      SELECT a.id AS account_id, e.date, ${pointNeighbours("a.id", "e.date")}
        FROM (${buckets(interval)}) e CROSS JOIN accounts a WHERE a.family_id = $1
    ),
    ${derivation({ accounts: "a.family_id = $1", keep: POINT_ROWS })}
    SELECT p.date::text AS date, a.currency,
           coalesce(sum(${pointBalance("balance")}) FILTER (WHERE a.classification = 'asset'), 0)::text AS assets,
           coalesce(sum(${pointBalance("balance")}) FILTER (WHERE a.classification = 'liability'), 0)::text AS liabilities,
           (coalesce(sum(${pointBalance("balance")}) FILTER (WHERE a.classification = 'asset'), 0)
             - coalesce(sum(${pointBalance("balance")}) FILTER (WHERE a.classification = 'liability'), 0))::text AS balance
      FROM points p
      JOIN derived b ON b.account_id = p.account_id AND b.date = ${POINT_ROW_OF} AND b.kept
      JOIN accounts a ON a.id = p.account_id
     GROUP BY p.date, a.currency
     ORDER BY p.date, a.currency`;
}
