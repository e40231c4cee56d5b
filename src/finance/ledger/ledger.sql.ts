/**
 * The one statement that derives an account's daily balances (docs/ledger.md). Kept apart from the
 * repository so the migration that introduced the ledger materialises existing accounts with it too.
 *
 * Bind parameters: $1 the account id, $2 the first day to recompute (FULL_HISTORY for all of it).
 */

/** Recomputes from the first day there is. */
export const FULL_HISTORY = "-infinity";

/**
 * Account types whose transactions move the balance, as upstream's calculators: cash accounts,
 * investments (cash plus holdings) and loans (principal). A property's, vehicle's or other asset's
 * or liability's value moves only with its valuations.
 */
export const MOVING_ACCOUNT_TYPES = ["depository", "credit_card", "investment", "crypto", "loan"] as const;

/**
 * `forward`: a manual account, walked forward from its opening anchor; a day with a valuation ends at
 * the valuation's amount (that day's transactions are absorbed into it), any other day at the day
 * before plus the day's flows. Days before the opening anchor start from zero, as upstream's.
 *
 * `reverse`: a bank-fed account, walked backward from its current anchor (the provider's balance):
 * the day before a day ends at that day's end less its flows; reconciliations reset the walk on their
 * day; the opening anchor is only a day of the series. Days after the newest anchor walk forward from it.
 *
 * Either way one statement: the account's days from $2 on (its transactions summed per day, its
 * valuations), the series by window functions, then stale rows from $2 on deleted, the rest upserted
 * (only rows whose figures changed are written) and the account's balance set to its newest day's.
 */
export function recomputeStatement(mode: "forward" | "reverse"): string {
  const moving = MOVING_ACCOUNT_TYPES.map((type) => `'${type}'`).join(", ");
  const anchorOf = mode === "reverse" ? "CASE WHEN kind <> 'opening_anchor' THEN amount END" : "amount";
  const series =
    mode === "forward"
      ? `segments AS (
           SELECT d.*, count(d.valuation) OVER (ORDER BY d.date) AS segment FROM days d
         ),
         series AS (
           SELECT date, inflows, outflows, net, valuation,
                  CASE WHEN segment = 0 THEN coalesce((SELECT end_balance FROM prior), 0) ELSE max(valuation) OVER (PARTITION BY segment) END
                    + sum(CASE WHEN valuation IS NULL THEN net ELSE 0 END) OVER (PARTITION BY segment ORDER BY date) AS end_balance
             FROM segments
         ),
         computed AS (
           SELECT date, inflows, outflows, end_balance,
                  coalesce(lag(end_balance) OVER (ORDER BY date), (SELECT end_balance FROM prior), valuation, 0) AS start_balance
             FROM series
         )`
      : `segments AS (
           SELECT d.*, count(d.valuation) OVER (ORDER BY d.date DESC) AS segment FROM days d
         ),
         newest_anchor AS (
           SELECT valuation FROM days WHERE valuation IS NOT NULL ORDER BY date DESC LIMIT 1
         ),
         series AS (
           SELECT date, inflows, outflows, net,
                  CASE WHEN segment = 0
                    THEN (SELECT valuation FROM newest_anchor) + sum(net) OVER (PARTITION BY segment ORDER BY date)
                    ELSE max(valuation) OVER (PARTITION BY segment)
                      - coalesce(sum(net) OVER (PARTITION BY segment ORDER BY date DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
                  END AS end_balance
             FROM segments
         ),
         computed AS (
           SELECT date, inflows, outflows, end_balance, end_balance - net AS start_balance FROM series
         )`;
  return `
    WITH account AS (
      SELECT CASE WHEN classification = 'liability' THEN -1 ELSE 1 END AS factor, account_type IN (${moving}) AS moves
        FROM accounts WHERE id = $1
    ),
    prior AS (
      SELECT end_balance FROM balances WHERE account_id = $1 AND date < $2::date ORDER BY date DESC LIMIT 1
    ),
    entries AS (
      SELECT date, sum(greatest(-amount, 0)) AS inflows, sum(greatest(amount, 0)) AS outflows, NULL::numeric AS valuation
        FROM transactions WHERE account_id = $1 AND date >= $2::date GROUP BY date
      UNION ALL
      SELECT date, 0, 0, ${anchorOf} FROM valuations WHERE account_id = $1 AND date >= $2::date
    ),
    days AS (
      SELECT e.date,
             CASE WHEN a.moves THEN sum(e.inflows) ELSE 0 END AS inflows,
             CASE WHEN a.moves THEN sum(e.outflows) ELSE 0 END AS outflows,
             CASE WHEN a.moves THEN (sum(e.inflows) - sum(e.outflows)) * a.factor ELSE 0 END AS net,
             max(e.valuation) AS valuation
        FROM entries e CROSS JOIN account a
       GROUP BY e.date, a.moves, a.factor
    ),
    ${series},
    removed AS (
      DELETE FROM balances b WHERE b.account_id = $1 AND b.date >= $2::date AND b.date NOT IN (SELECT date FROM computed)
    ),
    written AS (
      INSERT INTO balances (id, account_id, date, start_balance, end_balance, inflows, outflows)
      SELECT gen_random_uuid(), $1, date, start_balance, end_balance, inflows, outflows FROM computed
      ON CONFLICT (account_id, date) DO UPDATE
        SET start_balance = EXCLUDED.start_balance, end_balance = EXCLUDED.end_balance,
            inflows = EXCLUDED.inflows, outflows = EXCLUDED.outflows, updated_at = now()
        WHERE (balances.start_balance, balances.end_balance, balances.inflows, balances.outflows)
              IS DISTINCT FROM (EXCLUDED.start_balance, EXCLUDED.end_balance, EXCLUDED.inflows, EXCLUDED.outflows)
    ),
    newest AS (
      SELECT coalesce((SELECT end_balance FROM computed ORDER BY date DESC LIMIT 1), (SELECT end_balance FROM prior), 0) AS balance
    )
    UPDATE accounts SET balance = newest.balance FROM newest WHERE id = $1 AND accounts.balance IS DISTINCT FROM newest.balance`;
}
