import Decimal from "decimal.js";
import { Client } from "pg";
import type { TestUser } from "./fixtures";
import { apiKeyClient } from "./http";
import type { TestApp } from "./test-app";

/**
 * What the ledger's figures must be, computed here in plain SQL that shares nothing with the service:
 * one correlated lookup per day instead of its window functions.
 *
 * For every calendar day from an account's first transaction or valuation to its last:
 * - manual account: the newest valuation on or before the day (0 before any), plus every later
 *   transaction's (or trade's) flow up to the day (a valuation day's own transactions are absorbed by it);
 * - bank-fed account (one with a current anchor): the next anchor on or after the day (current anchor
 *   or reconciliation, not the opening anchor), less the flows after the day up to that anchor; after
 *   the newest anchor, that anchor plus the flows since.
 * A flow is −amount on an asset, +amount on a liability, and nothing on accounts valued only by
 * valuations (property, vehicle, other assets and liabilities).
 *
 * An investment (or crypto) account is cash plus holdings: H(d) is the holdings' value in the newest
 * report on or before d (0 before any): a provider's snapshot, or, on a manual account, the value of
 * its trades' holdings computed here from the trades and prices. A report's day is a day of the account, a valuation sets the
 * total (its cash is the valuation less H of its day), and each day's balance is that cash walked as
 * above plus H(d). On every other account H is 0, and the rules above are unchanged.
 *
 * A day's money in and out are the day's own entries: the amounts below zero (in) and above it (out),
 * of transactions and trades, on accounts whose balance flows move (none on the others).
 */
/**
 * A security's price in a manual investment account on a day, as upstream's calculator prices it (its
 * portfolio cache: prices by exact day, a stored price ranked before a trade's, the first of equal rank
 * kept, trades in their chronological order; its gap-fill: a day with none takes the previous priced
 * day's): of every stored price (in `currency`) and every trade of a quantity on or before the day, the
 * newest day's, the stored price first, then the trades as recorded (created_at, id). Arguments are SQL
 * expressions.
 */
export function upstreamPrice(account: string, security: string, currency: string, day: string): string {
  return `(SELECT x.price FROM (
             SELECT p.date, 0 AS rank, p.price, NULL::timestamptz AS created_at, NULL::uuid AS id FROM security_prices p
              WHERE p.security_id = ${security} AND p.currency = ${currency} AND p.date <= ${day}
             UNION ALL
             SELECT t.date, 1, t.price, t.created_at, t.id FROM trades t
              WHERE t.account_id = ${account} AND t.security_id = ${security} AND t.date <= ${day} AND t.qty <> 0) x
            ORDER BY x.date DESC, x.rank, x.created_at, x.id LIMIT 1)`;
}

export const ORACLE_DAYS = `
  WITH
  -- A provider's snapshots, summed per day.
  reported AS (SELECT h.account_id, h.date, sum(h.value) AS value FROM holdings h WHERE h.family_id = $1 GROUP BY h.account_id, h.date),
  -- A manual investment account's value on each day a trade happens or a price is known of a security it
  -- has traded (on or after its first trade of it): each security's quantity (its trades up to the day) at its price
  -- on the day as upstream's calculator prices it (upstreamPrice), to 4 places.
  -- A cash trade (a dividend, interest, a fee: no quantity, no price) moves cash only: it is no security's trade here.
  traded AS (
    SELECT DISTINCT t.account_id, t.security_id, a.currency FROM trades t JOIN accounts a ON a.id = t.account_id
     WHERE a.family_id = $1 AND a.account_type IN ('investment', 'crypto') AND t.qty <> 0
       AND NOT EXISTS (SELECT 1 FROM bank_provider_accounts b WHERE b.account_id = a.id)
  ),
  trade_days AS (
    SELECT t.account_id, t.date FROM trades t WHERE t.account_id IN (SELECT account_id FROM traded) AND t.qty <> 0
    UNION
    SELECT s.account_id, p.date FROM traded s JOIN security_prices p ON p.security_id = s.security_id AND p.currency = s.currency
     WHERE p.date >= (SELECT min(t.date) FROM trades t WHERE t.account_id = s.account_id AND t.security_id = s.security_id AND t.qty <> 0)
  ),
  valued AS (
    SELECT d.account_id, d.date, coalesce(sum(round(q.held * ${upstreamPrice("d.account_id", "s.security_id", "s.currency", "d.date")}, 4)), 0) AS value
      FROM trade_days d
      JOIN traded s ON s.account_id = d.account_id
      CROSS JOIN LATERAL (SELECT coalesce(sum(t.qty), 0) AS held FROM trades t
                           WHERE t.account_id = d.account_id AND t.security_id = s.security_id AND t.date <= d.date) q
     GROUP BY d.account_id, d.date
  ),
  reports AS MATERIALIZED (SELECT * FROM reported UNION ALL SELECT * FROM valued),
  acct AS (
    SELECT a.id, a.family_id, a.currency, a.classification,
           CASE WHEN a.account_type IN ('depository', 'credit_card', 'investment', 'crypto', 'loan')
                THEN CASE WHEN a.classification = 'liability' THEN 1 ELSE -1 END ELSE 0 END AS sign,
           EXISTS (SELECT 1 FROM valuations v WHERE v.account_id = a.id AND v.kind = 'current_anchor') AS reverse,
           a.account_type IN ('investment', 'crypto') AS invested
      FROM accounts a WHERE a.family_id = $1
  ),
  -- Every calendar day from the account's first day with something to its last (upstream's calculators
  -- write each of them). An account's days from its opening anchor to the day before its next day with
  -- something are all alike (nothing happens on them): of those only the last (\`since\`) is derived,
  -- so the two years before a test's first write are not derived day by day every time.
  day AS (
    SELECT s.account_id, s.first + n AS date, s.first, s.since
      FROM (SELECT account_id, min(date) AS first, max(date) AS last,
                   least(max(date), min(date) FILTER (WHERE NOT opening) - 1) AS since FROM (
              SELECT account_id, date, false AS opening FROM transactions UNION ALL SELECT account_id, date, false FROM trades
              UNION ALL SELECT account_id, date, kind = 'opening_anchor' FROM valuations
              UNION ALL SELECT r.account_id, r.date, false FROM reports r JOIN accounts a ON a.id = r.account_id WHERE a.account_type IN ('investment', 'crypto')
            ) e WHERE e.account_id IN (SELECT id FROM acct) GROUP BY account_id) s
     CROSS JOIN generate_series(0, s.last - s.first) n
  ),
  look AS (
    SELECT acct.*, day.date, day.since,
           (SELECT max(v.date) FROM valuations v WHERE v.account_id = acct.id AND v.date <= day.date) AS prev_valuation,
           (SELECT min(v.date) FROM valuations v WHERE v.account_id = acct.id AND v.kind <> 'opening_anchor' AND v.date >= day.date) AS next_anchor,
           (SELECT max(v.date) FROM valuations v WHERE v.account_id = acct.id AND v.kind <> 'opening_anchor' AND v.date < day.date) AS prev_anchor
      FROM acct JOIN day ON day.account_id = acct.id
     WHERE day.date >= day.since OR day.date = day.first
  )
  SELECT id AS account_id, family_id, currency, classification, date::text AS date, since::text AS since,
         (SELECT count(*) FROM day JOIN acct ON acct.id = day.account_id)::int AS spanned,
         CASE
           WHEN NOT reverse THEN
             coalesce((SELECT v.amount FROM valuations v WHERE v.account_id = look.id AND v.date = prev_valuation) - (CASE WHEN invested THEN coalesce((SELECT r.value FROM reports r WHERE r.account_id = look.id AND r.date <= prev_valuation ORDER BY r.date DESC LIMIT 1), 0) ELSE 0 END), 0)
             + coalesce((SELECT sum(t.amount * sign) FROM (SELECT account_id, date, amount FROM transactions UNION ALL SELECT account_id, date, amount FROM trades) t
                          WHERE t.account_id = look.id AND t.date > coalesce(prev_valuation, '-infinity'::date) AND t.date <= look.date), 0)
           WHEN next_anchor IS NOT NULL THEN
             (SELECT v.amount FROM valuations v WHERE v.account_id = look.id AND v.date = next_anchor) - (CASE WHEN invested THEN coalesce((SELECT r.value FROM reports r WHERE r.account_id = look.id AND r.date <= next_anchor ORDER BY r.date DESC LIMIT 1), 0) ELSE 0 END)
             - coalesce((SELECT sum(t.amount * sign) FROM (SELECT account_id, date, amount FROM transactions UNION ALL SELECT account_id, date, amount FROM trades) t WHERE t.account_id = look.id AND t.date > look.date AND t.date <= next_anchor), 0)
           ELSE
             (SELECT v.amount FROM valuations v WHERE v.account_id = look.id AND v.date = prev_anchor) - (CASE WHEN invested THEN coalesce((SELECT r.value FROM reports r WHERE r.account_id = look.id AND r.date <= prev_anchor ORDER BY r.date DESC LIMIT 1), 0) ELSE 0 END)
             + coalesce((SELECT sum(t.amount * sign) FROM (SELECT account_id, date, amount FROM transactions UNION ALL SELECT account_id, date, amount FROM trades) t WHERE t.account_id = look.id AND t.date > prev_anchor AND t.date <= look.date), 0)
         END + (CASE WHEN invested THEN coalesce((SELECT r.value FROM reports r WHERE r.account_id = look.id AND r.date <= look.date ORDER BY r.date DESC LIMIT 1), 0) ELSE 0 END) AS balance,
         CASE WHEN sign = 0 THEN 0 ELSE coalesce((SELECT -sum(t.amount) FROM (SELECT account_id, date, amount FROM transactions UNION ALL SELECT account_id, date, amount FROM trades) t
                                                   WHERE t.account_id = look.id AND t.date = look.date AND t.amount < 0), 0) END AS inflows,
         CASE WHEN sign = 0 THEN 0 ELSE coalesce((SELECT sum(t.amount) FROM (SELECT account_id, date, amount FROM transactions UNION ALL SELECT account_id, date, amount FROM trades) t
                                                   WHERE t.account_id = look.id AND t.date = look.date AND t.amount > 0), 0) END AS outflows
    FROM look`;

/**
 * `latest` (account_id, currency, classification, balance) with the rate into the family's currency in
 * force today: 1 for its own currency, the newest rate the family entered on or before today for
 * another, NULL (and `into_currency` NULL) where there is none, so that account is totalled apart.
 */
export const ORACLE_RATED = `
  fam AS (SELECT currency FROM families WHERE id = $1),
  rated AS (
    SELECT l.*, r.rate, CASE WHEN r.rate IS NULL THEN NULL ELSE fam.currency END AS into_currency
      FROM latest l CROSS JOIN fam
      LEFT JOIN LATERAL (
        SELECT 1::numeric AS rate WHERE l.currency = fam.currency
        UNION ALL
        (SELECT x.rate FROM exchange_rates x
          WHERE x.family_id = $1 AND x.from_currency = l.currency AND x.to_currency = fam.currency
            AND x.date <= (now() AT TIME ZONE 'UTC')::date
          ORDER BY x.date DESC LIMIT 1)
      ) r ON true
  )`;

export type OracleDay = { accountId: string; date: string; balance: string; inflows: string; outflows: string };

/**
 * The oracle's figures of a family: its days (each account's from its `since`, ORACLE_DAYS), each
 * account's balance (its newest day), the balance sheet per currency, and how many calendar days its
 * accounts span in all.
 */
export async function oracle(databaseUrl: string, familyId: string) {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // The days once, into a table of this connection: the accounts' balances and the sheet read it.
    await client.query(`CREATE TEMP TABLE oracle_days AS SELECT * FROM (${ORACLE_DAYS}) o`, [familyId]);
    const days = (
      await client.query<{ account_id: string; date: string; balance: string; inflows: string; outflows: string }>(
        `SELECT account_id, date, since, round(balance, 2)::text AS balance, inflows::text AS inflows, outflows::text AS outflows
           FROM oracle_days ORDER BY account_id, date`,
      )
    ).rows.map((row) => ({
      accountId: row.account_id,
      date: row.date,
      balance: row.balance,
      inflows: row.inflows,
      outflows: row.outflows,
    }));
    const since = new Map(
      (await client.query<{ account_id: string; since: string }>("SELECT DISTINCT account_id, since FROM oracle_days")).rows.map((row) => [
        row.account_id,
        row.since,
      ]),
    );
    const accounts = (
      await client.query<{ id: string; balance: string }>(
        `SELECT a.id, coalesce((SELECT round(o.balance, 2) FROM oracle_days o WHERE o.account_id = a.id ORDER BY o.date DESC LIMIT 1), 0)::text AS balance
           FROM accounts a WHERE a.family_id = $1 ORDER BY a.id`,
        [familyId],
      )
    ).rows;
    const sheet = (
      await client.query<{ currency: string; assets: string; liabilities: string }>(
        `WITH latest AS (SELECT DISTINCT ON (account_id) account_id, currency, classification, balance FROM oracle_days o ORDER BY account_id, date DESC),
         ${ORACLE_RATED}
         SELECT coalesce(into_currency, currency) AS currency,
                round(coalesce(sum(balance * coalesce(rate, 1)) FILTER (WHERE classification = 'asset'), 0), 2)::text AS assets,
                round(coalesce(sum(balance * coalesce(rate, 1)) FILTER (WHERE classification = 'liability'), 0), 2)::text AS liabilities
           FROM rated GROUP BY 1 ORDER BY 1`,
        [familyId],
      )
    ).rows;
    const [{ spanned }] = (await client.query<{ spanned: number }>("SELECT coalesce(max(spanned), 0) AS spanned FROM oracle_days")).rows;
    return { days, balances: new Map(accounts.map((row) => [row.id, row.balance])), sheet, spanned, since };
  } finally {
    await client.end();
  }
}

export async function allBalanceRows(app: TestApp, user: TestUser, query = ""): Promise<Array<Record<string, any>>> {
  const rows: Array<Record<string, any>> = [];
  for (let page = 1; ; page++) {
    const response = await apiKeyClient(`${app.url}/api/v1`, user.key).get(`/balances?per_page=100&page=${page}${query}`);
    expect(response.status).toBe(200);
    rows.push(...response.body.balances);
    if (page >= response.body.pagination.total_pages) return rows;
  }
}

/**
 * An amount in cents, rounded half away from zero (as upstream's `*_cents` fields), by decimal.js: in
 * floating point, an amount with a fourth decimal (a holding's value) ending in 5 thousandths can land
 * on either side of the half.
 */
export const cents = (amount: string) => new Decimal(amount).times(100).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toNumber();

/** The account, the balance sheet and /balances, each against the oracle. */
export async function expectMatchesOracle(app: TestApp, user: TestUser): Promise<void> {
  const expected = await oracle(app.database.url, user.familyId);
  const accounts = (await apiKeyClient(`${app.url}/api/v1`, user.key).get("/accounts?per_page=100")).body.accounts as Array<
    Record<string, any>
  >;
  for (const account of accounts)
    expect([account.id, account.balance_cents]).toEqual([account.id, cents(expected.balances.get(account.id)!)]);
  // Every calendar day of every account is listed; each account's from its `since` are compared.
  const listed = await apiKeyClient(`${app.url}/api/v1`, user.key).get("/balances?per_page=1");
  expect(listed.body.pagination.total_count).toBe(expected.spanned);
  const rows: Array<Record<string, any>> = [];
  for (const [accountId, since] of expected.since)
    rows.push(...(await allBalanceRows(app, user, `&account_id=${accountId}&start_date=${since}`)));
  // A day's money in and out show as cash flows, or as non-cash ones on a loan: one of the two is zero.
  const seen = rows.map((row) => ({
    accountId: row.account.id,
    date: row.date,
    cents: row.end_balance_cents,
    in: row.cash_inflows_cents + row.non_cash_inflows_cents,
    out: row.cash_outflows_cents + row.non_cash_outflows_cents,
  }));
  const wanted = expected.days
    .filter((day) => day.date >= expected.since.get(day.accountId)!)
    .map((day) => ({
      accountId: day.accountId,
      date: day.date,
      cents: cents(day.balance),
      in: cents(day.inflows),
      out: cents(day.outflows),
    }));
  const order = (a: { accountId: string; date: string }, b: { accountId: string; date: string }) =>
    a.accountId.localeCompare(b.accountId) || a.date.localeCompare(b.date);
  expect(seen.sort(order)).toEqual(wanted.sort(order));
  const sheet = (await apiKeyClient(`${app.url}/api/v1`, user.key).get("/balance_sheet")).body;
  const own = expected.sheet.find((row) => row.currency === sheet.currency) ?? { assets: "0.00", liabilities: "0.00" };
  expect([sheet.assets.amount, sheet.liabilities.amount].map(cents)).toEqual([cents(own.assets), cents(own.liabilities)]);
  // What had no rate is totalled apart, per currency, never in the family's figures.
  const others = expected.sheet.filter((row) => row.currency !== sheet.currency);
  expect(
    sheet.other_currencies.map((row: Record<string, any>) => [row.currency, cents(row.assets.amount), cents(row.liabilities.amount)]),
  ).toEqual(others.map((row) => [row.currency, cents(row.assets), cents(row.liabilities)]));
  expect(sheet.complete).toBe(others.length === 0);
}
