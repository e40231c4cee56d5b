/**
 * The statements over positions (docs/investments.md, "Holdings from trades"): a manual investment
 * account's positions (one row per security per day its quantity changed, migration 0028) valued at
 * the newest price on or before a day, and the account's holdings value on each day something changes.
 */

/**
 * Rewrites the account's ($1) holdings value per day (`portfolio_days`) from the day $2 on, prices in
 * its currency ($3), set-based in one statement. The days are those on which a trade or a price of a
 * security the account has traded is known, from its first trade on. A security's value on a day is
 * its newest position's quantity on or before it × the newest price on or before it (else the newest
 * trade price), rounded to 4 places: a step function that moves only on its own events. So:
 *
 * - each security's events (its positions, its prices; the newest of each before $2 as a seed) carry
 *   their change from the one before (quantity, trade price, price); running sums over one window,
 *   in one ordering, give the quantity and prices on each event (exact: numeric sums);
 * - the value's change at each event, summed per day and run over the days, is the account's value.
 *
 * One sort of the events, as the floor in bench/investments.bench.ts; never a row per day per
 * security held. A row whose value is unchanged is not written again.
 */
export const WRITE_PORTFOLIO_DAYS = `
  WITH account AS (SELECT family_id FROM accounts WHERE id = $1),
  start AS (SELECT greatest($2::date, (SELECT min(date) FROM positions WHERE account_id = $1)) AS date),
  traded AS (SELECT DISTINCT security_id FROM positions WHERE account_id = $1),
  held AS (
    SELECT security_id, date, quantity - coalesce(lag(quantity) OVER w, 0) AS quantity_change,
           trade_price - coalesce(lag(trade_price) OVER w, 0) AS trade_price_change
      FROM (
        SELECT t.security_id, (SELECT date FROM start) - 1 AS date, q.quantity, q.trade_price
          FROM traded t
          CROSS JOIN LATERAL (
            SELECT x.quantity, x.trade_price FROM positions x
             WHERE x.account_id = $1 AND x.security_id = t.security_id AND x.date < (SELECT date FROM start)
             ORDER BY x.date DESC LIMIT 1) q
        UNION ALL
        SELECT security_id, date, quantity, trade_price FROM positions WHERE account_id = $1 AND date >= (SELECT date FROM start)
      ) x
    WINDOW w AS (PARTITION BY security_id ORDER BY date)
  ),
  priced AS (
    SELECT security_id, date, price - coalesce(lag(price) OVER w, 0) AS price_change
      FROM (
        SELECT t.security_id, (SELECT date FROM start) - 1 AS date, p.price
          FROM traded t
          CROSS JOIN LATERAL (
            SELECT p.price FROM security_prices p
             WHERE p.security_id = t.security_id AND p.currency = $3 AND p.date < (SELECT date FROM start)
             ORDER BY p.date DESC LIMIT 1) p
        UNION ALL
        SELECT security_id, date, price FROM security_prices
         WHERE currency = $3 AND security_id IN (SELECT security_id FROM traded) AND date >= (SELECT date FROM start)
      ) x
    WINDOW w AS (PARTITION BY security_id ORDER BY date)
  ),
  events AS (
    SELECT security_id, date, quantity_change, trade_price_change, 0 AS price_change, 0 AS prices FROM held
    UNION ALL
    SELECT security_id, date, 0, 0, price_change, 1 FROM priced
  ),
  running AS (
    SELECT security_id, date, sum(quantity_change) OVER w AS quantity, sum(trade_price_change) OVER w AS trade_price,
           sum(price_change) OVER w AS price, sum(prices) OVER w AS prices
      FROM events WINDOW w AS (PARTITION BY security_id ORDER BY date)
  ),
  valued AS (
    SELECT security_id, date, round(quantity * CASE WHEN prices > 0 THEN price ELSE trade_price END, 4) AS value FROM running
  ),
  changes AS (
    SELECT date, value - coalesce(lag(value) OVER (PARTITION BY security_id ORDER BY date), 0) AS change FROM valued
  ),
  computed AS MATERIALIZED (
    SELECT date, sum(sum(change)) OVER (ORDER BY date) AS value FROM changes GROUP BY date
  ),
  removed AS (
    DELETE FROM portfolio_days d
     WHERE d.account_id = $1 AND d.date >= $2::date
       AND NOT EXISTS (SELECT 1 FROM computed c WHERE c.date = d.date AND c.date >= (SELECT date FROM start))
  )
  INSERT INTO portfolio_days AS d (family_id, account_id, date, value)
  SELECT (SELECT family_id FROM account), $1, date, value FROM computed WHERE date >= (SELECT date FROM start) ORDER BY date
  ON CONFLICT (account_id, date) DO UPDATE SET value = EXCLUDED.value WHERE d.value IS DISTINCT FROM EXCLUDED.value`;

/**
 * The positions of the accounts `accounts` (a condition on `a`, the accounts table) held at the end
 * of the day `day` (an SQL date expression): each security's newest position on or before it, valued
 * at the newest price in the position's currency on or before it, else at its newest trade price.
 * Index-ordered reads only: positions' key (account, security, date newest first) is walked from one
 * security to the next, one descent each landing on the security's newest position on or before the
 * day (a DISTINCT ON sorted every position: 20,000 rows for 25 shown), then one descent for its price.
 * Columns as `holdings` has them, `date` the day asked, source `trades`. `positions` (a condition on
 * `x`, a position) narrows further (a security).
 */
export function positionsOn(day: string, accounts: string, positions = "true"): string {
  return `
    WITH RECURSIVE held AS (
      SELECT k.* FROM accounts a
        CROSS JOIN LATERAL (
          SELECT x.* FROM positions x WHERE x.account_id = a.id AND x.date <= (${day})::date
           ORDER BY x.security_id, x.date DESC LIMIT 1) k
       WHERE ${accounts}
      UNION ALL
      SELECT n.* FROM held h
        CROSS JOIN LATERAL (
          SELECT x.* FROM positions x WHERE x.account_id = h.account_id AND x.security_id > h.security_id AND x.date <= (${day})::date
           ORDER BY x.security_id, x.date DESC LIMIT 1) n
    )
    SELECT x.id, x.family_id, x.account_id, x.security_id, (${day})::date AS date, x.quantity,
           coalesce(price.price, x.trade_price) AS price, round(x.quantity * coalesce(price.price, x.trade_price), 4) AS value,
           x.cost_basis, x.currency, 'trades'::text AS source
      FROM held x
      LEFT JOIN LATERAL (
        SELECT p.price FROM security_prices p
         WHERE p.security_id = x.security_id AND p.currency = x.currency AND p.date <= (${day})::date
         ORDER BY p.date DESC LIMIT 1) price ON true
     WHERE ${positions} AND x.quantity <> 0`;
}

/**
 * One position by id, valued on the last day it held: the day before the security's next position
 * in the account, or today for the newest. Columns as positionsOn's.
 */
export const POSITION_BY_ID = `
  SELECT x.id, x.family_id, x.account_id, x.security_id, held.until AS date, x.quantity,
         coalesce(price.price, x.trade_price) AS price, round(x.quantity * coalesce(price.price, x.trade_price), 4) AS value,
         x.cost_basis, x.currency, 'trades'::text AS source
    FROM positions x
    CROSS JOIN LATERAL (
      SELECT greatest(x.date, coalesce((SELECT min(n.date) - 1 FROM positions n
                                         WHERE n.account_id = x.account_id AND n.security_id = x.security_id AND n.date > x.date),
                                        CURRENT_DATE)) AS until) held
    LEFT JOIN LATERAL (
      SELECT p.price FROM security_prices p
       WHERE p.security_id = x.security_id AND p.currency = x.currency AND p.date <= held.until
       ORDER BY p.date DESC LIMIT 1) price ON true`;
