import { INVESTED_ACCOUNT_TYPES, MOVING_ACCOUNT_TYPES, sqlList as list } from "./account-kinds";

/** The first day of a date's month (a date; never through timestamptz, whose month depends on the session's zone). */
export const monthOf = (date: string) => `date_trunc('month', (${date})::timestamp)::date`;

/**
 * The `balances` view's derivation (migration 0016, docs/ledger.md "Reading"), written for one read:
 * it derives only the days that read needs, with the filter inside the windows' input.
 *
 * The view derives every day of an account in four window passes, then leaves the filter on the
 * date (or the page) to the derived rows: a page of 100 days or a month-end series paid for all
 * ~3,650 days of ten years, four times over. Here the derivation runs on the days kept: the days the
 * read wants (`keep`) and every day with a valuation (the anchors, whose `k` the kept days need).
 * Their `running` (the sum of the flows up to the day, the only figure that needs every day before)
 * comes from the account's months (`ledger_months`, each month's flows summed, kept with the days):
 * the flows of the months up to the day's, less those of the days after it in its month. A read reads
 * the account's month rows once (a running sum) and, of each month it keeps a day in, the days from its
 * first kept day to the month's end: not every day, when the days are read by their index. Every join
 * here is on an equality (the account, the month), so no plan pairs every day with every month. A kept day's figures are then the view's: the same prefix
 * sum, the same anchors (all of them) and so the same `k`; a day's start is its previous day's end, so
 * a read that wants a day's start keeps the day before it too.
 */
export type Derivation = {
  /** Which accounts: a condition on `accounts a` (the family included). */
  accounts: string;
  /** The days to derive besides the anchors: a SELECT of (account_id, date) pairs (extra pairs without a day row are ignored). */
  keep: string;
};

/**
 * CTEs (to follow a WITH) ending in `derived`: the kept days with the view's columns (id, family_id,
 * account_id, date, net, created_at, updated_at, start_balance, end_balance,
 * start_cash_balance, end_cash_balance, start_holdings_value, end_holdings_value) and `kept` (the day
 * is one `keep` selected, not only an anchor).
 */
export function derivation({ accounts, keep }: Derivation): string {
  return `
  dv_account AS (
    SELECT a.id,
           CASE WHEN a.account_type NOT IN (${list(MOVING_ACCOUNT_TYPES)}) THEN 0 WHEN a.classification = 'liability' THEN -1 ELSE 1 END AS sign,
           a.account_type IN (${list(INVESTED_ACCOUNT_TYPES)}) AS invested,
           EXISTS (SELECT 1 FROM valuations v WHERE v.account_id = a.id AND v.kind = 'current_anchor') AS reverse
      FROM accounts a WHERE ${accounts}
  ),
  dv_keep AS (${keep}),
  dv_keys AS (
    SELECT account_id, date, bool_or(kept) AS kept FROM (
      SELECT account_id, date, true AS kept FROM dv_keep
      UNION ALL SELECT v.account_id, v.date, false FROM valuations v WHERE v.account_id IN (SELECT id FROM dv_account)
    ) u GROUP BY account_id, date
  ),
  -- Each month a day is derived in: its days to derive, and the flows of every month up to it (a running
  -- sum over the account's months, where a month that has none of them counts nothing). One pass over
  -- the months, where a sum per month derived read every month before it (quadratic in a long series).
  dv_months AS (
    SELECT * FROM (
      SELECT u.*, sum(u.flow) OVER (PARTITION BY u.account_id ORDER BY u.month) AS through FROM (
        SELECT account_id, ${monthOf("date")} AS month, min(date) AS first, array_agg(date) AS dates,
               array_agg(date) FILTER (WHERE kept) AS kept_dates, 0 AS flow
          FROM dv_keys GROUP BY 1, 2
        UNION ALL
        SELECT m.account_id, m.month, NULL, NULL, NULL, m.flow FROM ledger_months m WHERE m.account_id IN (SELECT id FROM dv_account)
      ) u
    ) x WHERE first IS NOT NULL
  ),
  -- The days to derive, read with the days after them in their month (whose flows their running sum
  -- leaves out), in one index range per month: the rows themselves, not looked up again by day.
  dv_points AS MATERIALIZED (
    SELECT t.*, coalesce(t.date = ANY (t.kept_dates), false) AS kept FROM (
      SELECT t.*, f.dates, f.kept_dates,
             f.through - coalesce(sum(t.flow) OVER (PARTITION BY t.account_id, f.month ORDER BY t.date DESC
                                                                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS running
        FROM dv_months f
        -- The month's equality lets a hash join pair each day with its own month (a join on the range alone
        -- paired every day with every month when the statistics chose a hash join: quadratic); the range
        -- lets an index scan read only the days needed.
        JOIN ledger_days t ON t.account_id = f.account_id AND ${monthOf("t.date")} = f.month
                          AND t.date >= f.first AND t.date < (f.month + interval '1 month')::date
       WHERE t.account_id IN (SELECT id FROM dv_account)
    ) t WHERE t.date = ANY (t.dates)
  ),
  dv_c AS (
    SELECT ledger_day_id(d.account_id, d.date) AS id, d.family_id, d.account_id, d.date, d.created_at, d.updated_at, d.valuation, d.kept,
           d.flow * s.sign AS net,
           d.running * s.sign AS running,
           CASE WHEN s.invested THEN coalesce(d.holdings, 0) ELSE 0 END AS end_holdings,
           s.reverse,
           d.valuation IS NOT NULL AND (NOT s.reverse OR d.valuation_kind <> 'opening_anchor') AS anchor
      FROM dv_points d
      JOIN dv_account s ON s.id = d.account_id
  ),
  dv_r AS (
    SELECT c.*,
           count(*) FILTER (WHERE anchor) OVER w AS anchors_upto,
           count(*) FILTER (WHERE anchor) OVER w - CASE WHEN anchor THEN 1 ELSE 0 END AS anchors_before,
           array_agg(valuation - end_holdings - running) FILTER (WHERE anchor)
             OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS ks
      FROM dv_c c
    WINDOW w AS (PARTITION BY account_id ORDER BY date)
  ),
  dv_e AS (
    SELECT r.*,
           running + coalesce(CASE WHEN reverse THEN coalesce(ks[anchors_before + 1], ks[cardinality(ks)]) ELSE ks[anchors_upto] END, 0)
             AS end_cash
      FROM dv_r r
  ),
  derived AS (
    SELECT id, family_id, account_id, date, net, created_at, updated_at, kept,
           start_cash + start_holdings AS start_balance, end_cash + end_holdings AS end_balance,
           start_cash AS start_cash_balance, end_cash AS end_cash_balance,
           start_holdings AS start_holdings_value, end_holdings AS end_holdings_value
      FROM (
        SELECT e.*,
               CASE WHEN reverse THEN end_cash - net
                    WHEN valuation IS NOT NULL AND lag(end_cash) OVER w IS NULL THEN end_cash
                    ELSE coalesce(lag(end_cash) OVER w, 0) END AS start_cash,
               CASE WHEN NOT reverse AND valuation IS NOT NULL AND lag(end_cash) OVER w IS NULL THEN end_holdings
                    ELSE coalesce(lag(end_holdings) OVER w, 0) END AS start_holdings
          FROM dv_e e
        WINDOW w AS (PARTITION BY account_id ORDER BY date)
      ) x
  )`;
}
