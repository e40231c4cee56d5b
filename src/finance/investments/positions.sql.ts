/**
 * The statements over positions (docs/investments.md, "Holdings from trades"): a manual investment
 * account's positions (one row per security per day its quantity changed, migration 0028) valued at
 * upstream's price of a day (heldPrice), and the account's holdings value on each day something changes.
 */

/**
 * The price a holding is valued at on a day, as upstream's calculator prices it (its portfolio cache
 * indexes prices by exact day and its gap-fill carries the last priced day forward): the price of the
 * newest day on or before it that has one, where a stored price (in the account's currency) comes
 * before a trade's on the same day. The arguments are SQL expressions: the newest stored price on or
 * before the day and its day, and the newest position on or before it (a position is written on each
 * day the security is traded, holding that day's first trade's price) and its day. Both days must be
 * of one kind (dates, or day numbers); either side may be NULL (none).
 */
export function heldPrice(price: string, priceDay: string, tradePrice: string, tradeDay: string): string {
  return `(CASE WHEN ${priceDay} >= ${tradeDay} OR ${tradeDay} IS NULL THEN ${price} ELSE ${tradePrice} END)`;
}

/**
 * Rewrites the account's ($1) holdings value per day (`portfolio_days`) from the day $2 on, prices in
 * its currency ($3), set-based in one statement. The days are those on which a trade happens or a
 * price is known of a security the account holds or has held (on or after its first trade of it). A security's value on a day is
 * its newest position's quantity on or before it × its price on the day (`heldPrice`: of the newest
 * stored price and the newest position's trade price, the newer day's), rounded to 4 places: a step
 * function that moves only on its own events. So:
 *
 * - each security's events (its positions and its prices appended, not joined: a day with both is two
 *   rows, the position first; the newest of each before $2 as a seed) are walked in the order (day,
 *   kind) by one window: the newest position and the newest price so far are running maxima of
 *   `[day, figures…]` arrays (arrays compare element by element, so the newest day wins; a NULL array
 *   counts for nothing; a day is its number from $2's start, a seed's at most 0, so the two days
 *   compare), and the value after each event follows from them (on a day with both, the position's row
 *   first values at its trade price, the price's row then at the stored one: the day ends at the latter);
 * - the value's change at each event (its value less the previous event's, `lag` over the same order,
 *   which is total, so the second window needs no sort of its own), summed per day and run over the
 *   days, is the account's value. A day's changes add up to its last event's value less the value
 *   before its first, whatever the rows of that day are. (A full join of positions and prices, one
 *   row per security and day, and a second running maximum for the value before cost 10–15% more.)
 *
 * One sort of the events, as the floor in bench/investments.bench.ts; never a row per day per
 * security held. A row whose value is unchanged is not written again. The securities are the
 * account's traded ones read from `trades` (the same set as its positions': cash trades, of no quantity, excluded): a whole recompute runs
 * this right after writing every position, when the planner's statistics of `positions` may still
 * say it is empty, and a set estimated at one security made the prices a nested loop (30–50% slower).
 */
export const WRITE_PORTFOLIO_DAYS = `
  WITH account AS (SELECT family_id FROM accounts WHERE id = $1),
  start AS (SELECT greatest($2::date, (SELECT min(date) FROM positions WHERE account_id = $1)) AS date),
  traded AS (SELECT DISTINCT security_id FROM trades WHERE account_id = $1 AND qty <> 0),
  seeds AS (
    SELECT t.security_id, (SELECT date FROM start) - 1 AS date, q.held, p.priced
      FROM traded t
      LEFT JOIN LATERAL (
        SELECT ARRAY[x.date - (SELECT date FROM start) + 1, x.quantity, x.trade_price] AS held FROM positions x
         WHERE x.account_id = $1 AND x.security_id = t.security_id AND x.date < (SELECT date FROM start)
         ORDER BY x.date DESC LIMIT 1) q ON true
      LEFT JOIN LATERAL (
        SELECT ARRAY[p.date - (SELECT date FROM start) + 1, p.price] AS priced FROM security_prices p
         WHERE p.security_id = t.security_id AND p.currency = $3 AND p.date < (SELECT date FROM start)
         ORDER BY p.date DESC LIMIT 1) p ON true
  ),
  events AS (
    SELECT security_id, date, 0 AS kind, held, priced FROM seeds
    UNION ALL
    SELECT security_id, date, 0, ARRAY[date - (SELECT date FROM start) + 1, quantity, trade_price], NULL::numeric[] FROM positions
     WHERE account_id = $1 AND date >= (SELECT date FROM start)
    UNION ALL
    SELECT security_id, date, 1, NULL::numeric[], ARRAY[date - (SELECT date FROM start) + 1, price] FROM security_prices
     WHERE currency = $3 AND security_id IN (SELECT security_id FROM traded) AND date >= (SELECT date FROM start)
  ),
  running AS (
    SELECT security_id, date, kind, held IS NOT NULL AS holding,
           round(coalesce(held[2] * ${heldPrice("priced[2]", "priced[1]", "held[3]", "held[1]")}, 0), 4) AS value
      FROM (SELECT security_id, date, kind, max(held) OVER w AS held, max(priced) OVER w AS priced FROM events
            WINDOW w AS (PARTITION BY security_id ORDER BY date, kind ROWS UNBOUNDED PRECEDING)) r
  ),
  -- A price of a security before its first trade changes nothing: its day is not one of the account's.
  changes AS (
    SELECT date, holding, value - coalesce(lag(value) OVER (PARTITION BY security_id ORDER BY date, kind), 0) AS change FROM running
  ),
  computed AS MATERIALIZED (
    SELECT date, sum(sum(change)) OVER (ORDER BY date) AS value FROM changes WHERE holding GROUP BY date
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
 * at its price on the day (`heldPrice`, prices in the position's currency).
 * Index-ordered reads only: positions' key (account, security, date newest first) is walked from one
 * security to the next, one descent each landing on the security's newest position on or before the
 * day (a DISTINCT ON sorted every position: 20,000 rows for 25 shown), then one descent for its price.
 * Columns as `holdings` has them (the reported snapshot's, then created_at and updated_at), `date` the day asked, source `trades`,
 * the id the list gives the position's row of that day (HOLDING_DAYS).
 */
export function positionsOn(day: string, accounts: string): string {
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
    SELECT ledger_day_id(x.id, (${day})::date) AS id, x.family_id, x.account_id, x.security_id, (${day})::date AS date, x.quantity,
           ${heldPrice("price.price", "price.date", "x.trade_price", "x.date")} AS price,
           round(x.quantity * ${heldPrice("price.price", "price.date", "x.trade_price", "x.date")}, 4) AS value,
           x.cost_basis, x.currency, 'trades'::text AS source, x.created_at, x.updated_at
      FROM held x
      LEFT JOIN LATERAL (
        SELECT p.price, p.date FROM security_prices p
         WHERE p.security_id = x.security_id AND p.currency = x.currency AND p.date <= (${day})::date
         ORDER BY p.date DESC LIMIT 1) price ON true
     WHERE x.quantity <> 0`;
}

/**
 * The lines of a manual account's holdings by day (holding-days.ts): one per security it has a position
 * of, from its first day to today. The accounts are those `accounts` (a condition on `a`, the accounts
 * table) selects that no provider reports holdings of (as the ledger's holdings seam counts them);
 * `security` (a condition on `w.security_id`) narrows further. As upstream's forward calculator, a
 * security's first day is its first trade's, or the first day before it with a price (in the
 * position's currency) on or after the account's start: the day before its first entry (valuation,
 * transaction or trade). Index descents only: the securities (each with its first position) by a walk
 * of positions' key from one to the next, then each one's first price; no row per day.
 */
export function holdingLines(accounts: string, security: string): string {
  return `
    WITH RECURSIVE manual AS MATERIALIZED (
      SELECT a.id, least((SELECT min(v.date) FROM valuations v WHERE v.account_id = a.id),
                         (SELECT min(t.date) FROM trades t WHERE t.account_id = a.id),
                         (SELECT min(t.date) FROM transactions t WHERE t.account_id = a.id)) - 1 AS start
        FROM accounts a
       WHERE ${accounts} AND NOT EXISTS (SELECT 1 FROM holdings h WHERE h.account_id = a.id)
    ),
    -- The key read backwards (security newest first, date oldest first): one descent lands on the
    -- next security's first position.
    walk AS (
      SELECT k.* FROM manual a
        CROSS JOIN LATERAL (
          SELECT x.account_id, x.security_id, x.date, x.currency FROM positions x WHERE x.account_id = a.id
           ORDER BY x.security_id DESC, x.date LIMIT 1) k
      UNION ALL
      SELECT n.* FROM walk w
        CROSS JOIN LATERAL (
          SELECT x.account_id, x.security_id, x.date, x.currency FROM positions x WHERE x.account_id = w.account_id AND x.security_id < w.security_id
           ORDER BY x.security_id DESC, x.date LIMIT 1) n
    )
    SELECT w.account_id AS "accountId", w.security_id AS "securityId", coalesce(s.ticker, '') AS ticker,
           least(w.date, (SELECT min(p.date) FROM security_prices p
                           WHERE p.security_id = w.security_id AND p.currency = w.currency AND p.date >= m.start))::text AS first
      FROM walk w
      JOIN manual m ON m.id = w.account_id
      JOIN securities s ON s.id = w.security_id
     WHERE ${security}`;
}

/**
 * The holdings of the days $1 of the securities $2 of the accounts $3 (arrays of one length: a page's
 * slots, at the places $4 in the page): each the security's newest position on or before the day (none before its first
 * trade: quantity and cost basis 0), valued as positionsOn values it. The id names the position and the
 * day (`ledger_day_id`, migration 0033: the position's id with the day's number XOR-ed into its last 32
 * bits; the security's first position before its first trade), so GET /holdings/{id} finds the row.
 * Columns as `holdings` has them, then the place.
 */
export const HOLDING_DAYS = `
  SELECT ledger_day_id(x.id, slot.day) AS id, x.family_id, slot.account_id, slot.security_id, slot.day AS date,
         coalesce(held.quantity, 0) AS quantity, ${heldPrice("price.price", "price.date", "held.trade_price", "held.date")} AS price,
         round(coalesce(held.quantity, 0) * ${heldPrice("price.price", "price.date", "held.trade_price", "held.date")}, 4) AS value,
         coalesce(held.cost_basis, 0) AS cost_basis, x.currency, 'trades'::text AS source, x.created_at, x.updated_at, slot.place
    FROM unnest($1::date[], $2::uuid[], $3::uuid[], $4::int[]) AS slot(day, security_id, account_id, place)
    LEFT JOIN LATERAL (
      SELECT p.* FROM positions p WHERE p.account_id = slot.account_id AND p.security_id = slot.security_id AND p.date <= slot.day
       ORDER BY p.date DESC LIMIT 1) held ON true
    LEFT JOIN LATERAL (
      SELECT p.* FROM positions p WHERE held.id IS NULL AND p.account_id = slot.account_id AND p.security_id = slot.security_id
       ORDER BY p.date LIMIT 1) first ON true
    CROSS JOIN LATERAL (
      SELECT coalesce(held.id, first.id) AS id, coalesce(held.family_id, first.family_id) AS family_id,
             coalesce(held.currency, first.currency) AS currency, coalesce(held.created_at, first.created_at) AS created_at,
             coalesce(held.updated_at, first.updated_at) AS updated_at) x
    LEFT JOIN LATERAL (
      SELECT p.price, p.date FROM security_prices p
       WHERE p.security_id = slot.security_id AND p.currency = x.currency AND p.date <= slot.day
       ORDER BY p.date DESC LIMIT 1) price ON true`;

/**
 * What a holding's id ($2) names, in the family $1: the position whose id shares its first 96 bits and
 * the day the last 32 give (HOLDING_DAYS). Whether that position holds on that day is for the list to
 * say (the id must be one it gives).
 */
export const HOLDING_DAY_OF_ID = `
  SELECT x.account_id AS "accountId", x.security_id AS "securityId", (DATE '1970-01-01' + d.n)::text AS date
    FROM positions x
    JOIN accounts a ON a.id = x.account_id AND a.family_id = $1
    CROSS JOIN LATERAL (SELECT ('x' || right($2::text, 8))::bit(32)::int # ('x' || right(x.id::text, 8))::bit(32)::int AS n) d
   WHERE x.id BETWEEN (left(replace($2::text, '-', ''), 24) || '00000000')::uuid AND (left(replace($2::text, '-', ''), 24) || 'ffffffff')::uuid
     -- Years 1 to 9999: any other number is no day (and past PostgreSQL's dates).
     AND d.n BETWEEN -719162 AND 2932896`;
