import { derivation } from "./derive.sql";
import type { SeriesInterval } from "./ledger.repository";

/**
 * Series over the derived balances (docs/ledger.md, "Reading"): the newest day of each interval (up
 * to `to`) of each account is the only day derived (derive.sql.ts), and an interval without days
 * carries the one before forward. Bind parameters: $1 the family, $2 from, $3 to.
 */

/** Each interval's first day (its bucket) and last day (`to` closes the last one), from `from` to `to`. */
function buckets(interval: SeriesInterval): string {
  const step = `'1 ${interval}'::interval`;
  return `SELECT g::date AS bucket, least((g + ${step} - interval '1 day')::date, $3::date) AS date
            FROM generate_series(date_trunc('${interval}', $2::date), $3::date, ${step}) g`;
}

/** The newest value on or before each bucket, from [bucket, value] pairs: a running max over (day number, value). */
const carried = (partition: string) =>
  `(max(CASE WHEN p.end_balance IS NOT NULL THEN ARRAY[(coalesce(e.bucket, p.bucket) - DATE '2000-01-01')::numeric, p.end_balance] END)
     OVER (${partition} ORDER BY coalesce(e.bucket, p.bucket)))[2]`;

/**
 * One account's ($4) balance at the end of each interval: each interval's last day finds the account's
 * newest day on or before it by one descent of the days' key (an interval without days then carries
 * the one before), and only those days are derived.
 */
export function historyStatement(interval: SeriesInterval): string {
  return `
    WITH series_days AS (
      SELECT e.date, (SELECT max(d.date) FROM ledger_days d WHERE d.account_id = $4::uuid AND d.date <= e.date) AS day
        FROM (${buckets(interval)}) e
    ),
    ${derivation({
      accounts: "a.id = $4::uuid AND a.family_id = $1",
      keep: "SELECT DISTINCT $4::uuid AS account_id, day AS date FROM series_days WHERE day IS NOT NULL",
    })}
    SELECT s.date::text AS date, b.end_balance::text AS balance
      FROM series_days s JOIN derived b ON b.date = s.day AND b.kept
     ORDER BY s.date`;
}

/** The family's assets, liabilities and net worth per currency at the end of each interval. */
export function netWorthStatement(interval: SeriesInterval): string {
  return `
    WITH ${derivation({
      accounts: "a.family_id = $1",
      // The family's days through its accounts: the days' key leads with the account.
      keep: `SELECT d.account_id, max(d.date) AS date FROM accounts a JOIN ledger_days d ON d.account_id = a.id
              WHERE a.family_id = $1 AND d.date <= $3::date
              GROUP BY d.account_id, date_trunc('${interval}', d.date)`,
    })},
    per AS (SELECT b.account_id, date_trunc('${interval}', b.date)::date AS bucket, b.end_balance FROM derived b WHERE b.kept),
    grid AS (
      SELECT a.id AS account_id, e.bucket, e.date FROM (${buckets(interval)}) e CROSS JOIN accounts a WHERE a.family_id = $1
    ),
    merged AS (
      SELECT coalesce(e.account_id, p.account_id) AS account_id, e.date,
             ${carried("PARTITION BY coalesce(e.account_id, p.account_id)")} AS balance
        FROM grid e FULL JOIN per p ON p.account_id = e.account_id AND p.bucket = e.bucket
    )
    SELECT m.date::text AS date, a.currency,
           coalesce(sum(m.balance) FILTER (WHERE a.classification = 'asset'), 0)::text AS assets,
           coalesce(sum(m.balance) FILTER (WHERE a.classification = 'liability'), 0)::text AS liabilities,
           (coalesce(sum(m.balance) FILTER (WHERE a.classification = 'asset'), 0)
             - coalesce(sum(m.balance) FILTER (WHERE a.classification = 'liability'), 0))::text AS balance
      FROM merged m JOIN accounts a ON a.id = m.account_id
     WHERE m.date IS NOT NULL AND m.balance IS NOT NULL
     GROUP BY m.date, a.currency
     ORDER BY m.date, a.currency`;
}
