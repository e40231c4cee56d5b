import fc from "fast-check";
import { Client } from "pg";
import { BankAccountRepository } from "../../src/finance/banking/bank-account.repository";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { upstreamPrice } from "../helpers/ledger-oracle";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * Random buy/sell (and dividend, interest, fee, delete) sequences on a manual investment account, through the service the
 * routes call. After every step GET /holdings' rows of today (quantity, cost basis, value), its pages of
 * every security on every day (the whole list and a window of days, with their totals), the cash, the
 * balance, and the holdings value of every day a trade or a price changes it (the stored
 * `portfolio_days` and the ledger's days) equal what the SQL below computes from the trades and
 * prices alone; a sell beyond the quantity held (or a delete that would leave one) is refused and
 * changes nothing.
 * Bounded for CI: PROPERTY_RUNS (default 4) sequences of up to 14 steps.
 */
let app: TestApp;
let connection: Client;
const RUNS = Number(process.env.PROPERTY_RUNS ?? 4);
const OPENING = "25000";
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  app = await startTestApp();
  connection = new Client({ connectionString: app.database.url });
  await connection.connect();
});
afterAll(async () => {
  await connection.end();
  await app.stop();
});

async function rows<Row>(statement: string, values: unknown[]): Promise<Row[]> {
  return (await connection.query(statement, values)).rows as Row[];
}

/** The oracle: average cost per security over the trades in date order (a day's buys first), then today's value (upstreamPrice). */
const ORACLE = `
  WITH RECURSIVE ordered AS (
    SELECT security_id, qty, price, date,
           row_number() OVER (PARTITION BY security_id ORDER BY date, qty < 0, created_at, id) AS n
      FROM trades WHERE account_id = $1 AND qty <> 0
  ),
  walk AS (
    SELECT security_id, n, qty::numeric AS held, round(qty * price, 4)::numeric AS cost FROM ordered WHERE n = 1
    UNION ALL
    SELECT o.security_id, o.n, (w.held + o.qty)::numeric,
           (CASE WHEN o.qty > 0 THEN round(w.cost + o.qty * o.price, 4)
                 WHEN w.held + o.qty = 0 THEN 0
                 ELSE round(w.cost * (w.held + o.qty) / w.held, 4) END)::numeric
      FROM walk w JOIN ordered o ON o.security_id = w.security_id AND o.n = w.n + 1
  ),
  final AS (SELECT DISTINCT ON (security_id) security_id, held, cost FROM walk ORDER BY security_id, n DESC)
  SELECT f.security_id, f.held::numeric AS held, f.cost::numeric AS cost,
         round(f.held * ${upstreamPrice("$1", "f.security_id", "'USD'", "CURRENT_DATE")}, 4) AS value
    FROM final f WHERE f.held <> 0 ORDER BY f.security_id`;

/**
 * The oracle of the daily value (cash trades, of no quantity, are no security's trades): on each day a trade happens or a price is known of a security the
 * account has traded (on or after its first trade of it), every security's quantity (its trades up to the day) at its price on
 * the day as upstream's calculator prices it (upstreamPrice: the newest day with a stored or a trade price, the stored first,
 * then the day's first trade recorded), each rounded to 4 places, summed. One subquery per day and security: slow, and plainly right.
 */
const DAILY_ORACLE = `
  WITH secs AS (SELECT DISTINCT security_id FROM trades WHERE account_id = $1 AND qty <> 0),
  days AS (
    SELECT date FROM trades WHERE account_id = $1 AND qty <> 0
    UNION
    SELECT p.date FROM security_prices p JOIN secs s ON s.security_id = p.security_id
     WHERE p.currency = 'USD' AND p.date >= (SELECT min(t.date) FROM trades t WHERE t.account_id = $1 AND t.security_id = s.security_id AND t.qty <> 0)
  )
  SELECT d.date::text AS date,
         coalesce(sum(round(q.held * ${upstreamPrice("$1", "s.security_id", "'USD'", "d.date")}, 4)), 0)::numeric AS value
    FROM days d CROSS JOIN secs s
    CROSS JOIN LATERAL (SELECT coalesce(sum(t.qty), 0) AS held FROM trades t
                         WHERE t.account_id = $1 AND t.security_id = s.security_id AND t.date <= d.date) q
   GROUP BY d.date ORDER BY d.date`;

/**
 * The oracle of GET /holdings for a manual account, as upstream's forward calculator stores holdings:
 * every security traded (a quantity) on every day from its first to today, its first the earlier of its
 * first trade and its first price on or after the account's start (the day before its first entry).
 * Each row's quantity is the sum of the security's trades up to the day, its cost basis the average-cost
 * walk after the last of them, its price upstream's on the day (upstreamPrice), its value quantity × price to 4 places. Oldest day first (upstream's order), then by ticker and security; only the days
 * from $2 to $3 (each optional). One subquery per day and security: slow, and plainly right.
 */
const HOLDING_DAYS_ORACLE = `
  WITH RECURSIVE ordered AS (
    SELECT security_id, qty, price, date,
           row_number() OVER (PARTITION BY security_id ORDER BY date, qty < 0, created_at, id) AS n
      FROM trades WHERE account_id = $1 AND qty <> 0
  ),
  walk AS (
    SELECT security_id, n, round(qty * price, 4)::numeric AS cost, qty::numeric AS held FROM ordered WHERE n = 1
    UNION ALL
    SELECT o.security_id, o.n,
           (CASE WHEN o.qty > 0 THEN round(w.cost + o.qty * o.price, 4)
                 WHEN w.held + o.qty = 0 THEN 0
                 ELSE round(w.cost * (w.held + o.qty) / w.held, 4) END)::numeric,
           (w.held + o.qty)::numeric
      FROM walk w JOIN ordered o ON o.security_id = w.security_id AND o.n = w.n + 1
  ),
  start AS (
    SELECT least((SELECT min(date) FROM valuations WHERE account_id = $1), (SELECT min(date) FROM trades WHERE account_id = $1),
                 (SELECT min(date) FROM transactions WHERE account_id = $1)) - 1 AS day
  ),
  lines AS (
    SELECT t.security_id,
           least(min(t.date), (SELECT min(p.date) FROM security_prices p
                                WHERE p.security_id = t.security_id AND p.currency = 'USD' AND p.date >= (SELECT day FROM start))) AS first
      FROM trades t WHERE t.account_id = $1 AND t.qty <> 0 GROUP BY t.security_id
  ),
  days AS (
    SELECT l.security_id, d::date AS date FROM lines l CROSS JOIN generate_series(l.first, CURRENT_DATE, interval '1 day') d
  )
  SELECT d.date::text AS date, d.security_id, s.ticker, q.held, coalesce(c.cost, 0) AS cost, x.price, round(q.held * x.price, 4) AS value
    FROM days d
    JOIN securities s ON s.id = d.security_id
    CROSS JOIN LATERAL (SELECT coalesce(sum(t.qty), 0) AS held FROM trades t
                         WHERE t.account_id = $1 AND t.security_id = d.security_id AND t.date <= d.date) q
    LEFT JOIN LATERAL (SELECT w.cost FROM walk w JOIN ordered o ON o.security_id = w.security_id AND o.n = w.n
                        WHERE w.security_id = d.security_id AND o.date <= d.date ORDER BY w.n DESC LIMIT 1) c ON true
    CROSS JOIN LATERAL (SELECT ${upstreamPrice("$1", "d.security_id", "'USD'", "d.date")} AS price) x
   WHERE d.date >= coalesce($2::date, '-infinity') AND d.date <= coalesce($3::date, 'infinity')
   ORDER BY d.date, s.ticker COLLATE "C", d.security_id`;

/** What a page of GET /holdings is worth comparing, one string a row. */
const holdingText = (row: { date: string; security: string; held: string; cost: string | null; price: string | null; value: string }) =>
  `${row.date} ${row.security} ${Number(row.held)}@${Number(row.price)}=${Number(row.value)} cost ${Number(row.cost)}`;

type Paging = { perPage: number; pick: number; from: number; span: number };

/**
 * GET /holdings' pages of the account against the oracle: the default window (every day to today) and
 * the days from `from` to `from − span` days ago, each total and one page of them (picked among the
 * pages there are); a row of it read by its id is the same row.
 */
async function holdingPages(user: TestUser, accountId: string, paging: Paging): Promise<{ actual: string[]; expected: string[] }> {
  const actual: string[] = [];
  const expected: string[] = [];
  const windows: Array<{ startDate?: string; endDate?: string }> = [
    {},
    { startDate: day(-paging.from - paging.span), endDate: day(-paging.from) },
  ];
  for (const window of windows) {
    const oracle = await rows<{ date: string; security_id: string; held: string; cost: string; price: string; value: string }>(
      HOLDING_DAYS_ORACLE,
      [accountId, window.startDate ?? null, window.endDate ?? null],
    );
    const pages = Math.max(1, Math.ceil(oracle.length / paging.perPage));
    const page = 1 + (paging.pick % pages);
    const listed = await app.runtime.services.banking.holdings(user.actor, { accountId, ...window }, page, paging.perPage);
    const label = `${JSON.stringify(window)} page ${page} of ${paging.perPage}`;
    actual.push(`${label}: ${listed.pagination.totalCount} rows`);
    expected.push(`${label}: ${oracle.length} rows`);
    for (const row of listed.items) {
      actual.push(
        holdingText({
          date: row.date,
          security: row.securityId,
          held: row.quantity,
          cost: row.costBasis,
          price: row.price,
          value: row.value,
        }),
      );
    }
    for (const row of oracle.slice((page - 1) * paging.perPage, page * paging.perPage)) {
      expected.push(
        holdingText({ date: row.date, security: row.security_id, held: row.held, cost: row.cost, price: row.price, value: row.value }),
      );
    }
    const sample = listed.items[paging.pick % Math.max(1, listed.items.length)];
    if (sample) expect(await app.runtime.services.banking.holding(user.actor, sample.id)).toEqual(sample);
  }
  return { actual, expected };
}

type Figures = { holdings: string; cash: string; balance: string; api: string; daily: string; ledger: string };

async function figures(user: TestUser, accountId: string): Promise<{ actual: Figures; expected: Figures }> {
  const oracle = await rows<{ security_id: string; held: string; cost: string; value: string }>(ORACLE, [accountId]);
  const [sums] = await rows<{ flows: string; anchor: string }>(
    `SELECT coalesce((SELECT sum(amount) FROM trades WHERE account_id = $1), 0) AS flows,
            (SELECT amount FROM valuations WHERE account_id = $1 AND kind = 'opening_anchor') AS anchor`,
    [accountId],
  );
  const cash = (
    await rows<{ cash: string }>(`SELECT ($1::numeric - $2::numeric)::numeric(19, 4)::text AS cash`, [sums.anchor, sums.flows])
  )[0].cash;
  // In SQL, not in floating point: a balance ending in 5 thousandths (…0.0050) must round to cents as the API rounds it.
  const [{ balance, cents }] = await rows<{ balance: string; cents: string }>(
    `SELECT b::text AS balance, round(b * 100)::bigint::text AS cents
       FROM (SELECT ($1::numeric + (SELECT coalesce(sum(v::numeric), 0) FROM unnest($2::text[]) AS v))::numeric(19, 4) AS b) AS total`,
    [cash, oracle.map((row) => row.value)],
  );
  const latest = (await app.runtime.services.banking.holdings(user.actor, { accountId, date: day(0) }, 1, 100)).items
    .map((row) => ({ security_id: row.securityId, quantity: row.quantity, cost_basis: row.costBasis ?? "", value: row.value }))
    .sort((a, b) => (a.security_id < b.security_id ? -1 : 1));
  const daily = await rows<{ date: string; value: string }>(DAILY_ORACLE, [accountId]);
  const stored = await rows<{ date: string; value: string }>(
    `SELECT date::text AS date, value FROM portfolio_days WHERE account_id = $1 ORDER BY date`,
    [accountId],
  );
  const ledger = await rows<{ date: string; value: string }>(
    `SELECT date::text AS date, holdings AS value FROM ledger_days WHERE account_id = $1 AND date = ANY($2::date[]) ORDER BY date`,
    [accountId, daily.map((row) => row.date)],
  );
  const days = (list: Array<{ date: string; value: string | null }>) => list.map((row) => `${row.date}=${Number(row.value)}`).join(",");
  const [account] = await rows<{ balance: string; cash_balance: string }>(
    `SELECT balance::text, cash_balance::text FROM accounts WHERE id = $1`,
    [accountId],
  );
  const response = await fetch(`${app.url}/api/v1/accounts/${accountId}`, { headers: { "x-api-key": user.key } });
  const api = (await response.json()) as { balance_cents: number };
  const norm = (held: string, cost: string, worth: string) => `${Number(held)}:${Number(cost)}:${Number(worth)}`;
  return {
    actual: {
      holdings: latest
        .filter((row) => Number(row.quantity) !== 0)
        .map((row) => `${row.security_id}=${norm(row.quantity, row.cost_basis, row.value)}`)
        .join(","),
      cash: account.cash_balance,
      balance: account.balance,
      api: String(api.balance_cents),
      daily: days(stored),
      ledger: days(ledger),
    },
    expected: {
      holdings: oracle.map((row) => `${row.security_id}=${norm(row.held, row.cost, row.value)}`).join(","),
      cash,
      balance,
      api: cents,
      daily: days(daily),
      ledger: days(daily),
    },
  };
}

async function snapshot(accountId: string): Promise<string> {
  const [row] = await rows<{ state: string }>(
    `SELECT concat_ws('|', (SELECT string_agg(id::text || qty::text || date::text, ',' ORDER BY id) FROM trades WHERE account_id = $1),
                          (SELECT string_agg(id::text || quantity::text || cost_basis::text || date::text, ',' ORDER BY id) FROM positions WHERE account_id = $1),
                          (SELECT string_agg(date::text || value::text, ',' ORDER BY date) FROM portfolio_days WHERE account_id = $1),
                          (SELECT balance::text || cash_balance::text FROM accounts WHERE id = $1),
                          (SELECT string_agg(date::text || coalesce(holdings::text, '') || flow::text, ',' ORDER BY date) FROM ledger_days WHERE account_id = $1)) AS state`,
    [accountId],
  );
  return row.state;
}

const step = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("buy" as const),
      ticker: fc.constantFrom("AAA", "BBB", "CCC"),
      qty: fc.integer({ min: 1, max: 40 }),
      cents: fc.integer({ min: 100, max: 50_000 }),
      ago: fc.integer({ min: 0, max: 120 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("sell" as const),
      ticker: fc.constantFrom("AAA", "BBB", "CCC"),
      qty: fc.integer({ min: 1, max: 40 }),
      cents: fc.integer({ min: 100, max: 50_000 }),
      ago: fc.integer({ min: 0, max: 120 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }) },
  // Cash trades: a dividend of a security (traded or not), interest and a fee on the account's cash security.
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom("dividend" as const, "interest" as const, "fee" as const),
      ticker: fc.constantFrom("AAA", "BBB", "CCC", null),
      cents: fc.integer({ min: 1, max: 20_000 }),
      ago: fc.integer({ min: 0, max: 120 }),
    }),
  },
);

test("holdings, cost basis, cash and balance equal the SQL oracle after every step; a refused sell or delete changes nothing", async () => {
  const { services } = app.runtime;
  await fc.assert(
    fc.asyncProperty(
      fc.array(step, { minLength: 4, maxLength: 14 }),
      // One price per security and day: a second in the same write is not a price upstream could record.
      fc.uniqueArray(
        fc.record({
          ticker: fc.constantFrom("AAA", "BBB"),
          ago: fc.integer({ min: 0, max: 150 }),
          cents: fc.integer({ min: 100, max: 60_000 }),
        }),
        { maxLength: 4, selector: (price) => `${price.ticker}|${price.ago}` },
      ),
      fc.record({
        perPage: fc.integer({ min: 1, max: 60 }),
        pick: fc.nat(),
        from: fc.integer({ min: 0, max: 160 }),
        span: fc.integer({ min: 0, max: 90 }),
      }),
      async (steps, prices, paging) => {
        const user = await createUser(services);
        const account = await createAccount(services, user, { name: "Brokerage", accountType: "investment", balance: OPENING });
        let priced = false;
        for (const action of steps) {
          const before = await snapshot(account.id);
          let refused = false;
          try {
            if (action.kind === "delete") {
              const trades = (await services.trades.trades(user.actor, { accountId: account.id }, 1, 100)).items;
              if (trades.length === 0) continue;
              await services.trades.delete(user.actor, trades[action.pick % trades.length].id);
            } else if ("qty" in action) {
              await services.trades.create(user.actor, {
                accountId: account.id,
                type: action.kind,
                date: day(-action.ago),
                qty: String(action.qty),
                price: (action.cents / 100).toFixed(2),
                fee: action.kind === "buy" ? "0.5" : null,
                ticker: action.ticker,
              });
            } else {
              await services.trades.create(user.actor, {
                accountId: account.id,
                type: action.kind,
                date: day(-action.ago),
                amount: (action.cents / 100).toFixed(2),
                ticker: action.kind === "dividend" ? (action.ticker ?? "AAA") : action.ticker,
              });
            }
          } catch (error) {
            expect((error as Error).message).toMatch(/qty exceeds the quantity held/);
            refused = true;
          }
          if (refused) expect(await snapshot(account.id)).toBe(before);
          if (!priced && prices.length > 0) {
            // Prices of the securities traded so far, once: every account trading them is revalued.
            const securities = await rows<{ id: string; ticker: string }>(
              `SELECT DISTINCT s.id, s.ticker FROM securities s JOIN trades t ON t.security_id = s.id WHERE t.account_id = $1`,
              [account.id],
            );
            const known = prices.filter((price) => securities.some((security) => security.ticker === price.ticker));
            if (known.length > 0) {
              await app.runtime.sequelize.transaction((transaction) =>
                services.trades.recordPrices(
                  known.map((price) => ({
                    securityId: securities.find((security) => security.ticker === price.ticker)!.id,
                    date: day(-price.ago),
                    price: (price.cents / 100).toFixed(2),
                    currency: "USD",
                  })),
                  transaction,
                ),
              );
              priced = true;
            }
          }
          const { actual, expected } = await figures(user, account.id);
          expect(actual).toEqual(expected);
          const pages = await holdingPages(user, account.id, paging);
          expect(pages.actual).toEqual(pages.expected);
        }
      },
    ),
    { numRuns: RUNS, endOnFailure: true },
  );
  // The daily oracle values each day and security by subqueries: slow by design, and the machine is shared.
}, 120_000);

test("a provider-fed account's snapshots and a manual account's days list in one order, paged without a gap or a repeat", async () => {
  const { services } = app.runtime;
  const user = await createUser(services);
  const manual = await createAccount(services, user, { name: "By hand", accountType: "investment", balance: "5000" });
  const linked = await createAccount(services, user, { name: "Linked", accountType: "investment", balance: "0" });
  // Tickers of this test alone: the securities are shared, and the other test's prices are not this one's.
  for (const [type, ticker, qty, price, ago] of [
    ["buy", "MIXA", "5", "10.5", 9],
    ["buy", "MIXB", "2", "40", 6],
    ["sell", "MIXA", "5", "12", 3],
    ["buy", "MIXC", "1", "7.25", 0],
  ] as const) {
    await services.trades.create(user.actor, { accountId: manual.id, type, ticker, qty, price, date: day(-ago) });
  }
  // A price of MIXB two days before its first trade: two rows of quantity 0 before it.
  const [mixb] = await rows<{ id: string }>(`SELECT security_id AS id FROM trades WHERE account_id = $1 AND name LIKE '%MIXB'`, [
    manual.id,
  ]);
  await app.runtime.sequelize.transaction((transaction) =>
    services.trades.recordPrices([{ securityId: mixb.id, date: day(-8), price: "39", currency: "USD" }], transaction),
  );
  // Snapshots as a bank sync writes them: three securities on two days, one of them a day the manual account also has.
  const reported = (ticker: string, quantity: string, value: string) => ({
    ticker,
    name: ticker,
    isin: null,
    figi: null,
    cusip: null,
    quantity,
    price: null,
    value,
    costBasis: null,
    currency: "USD",
    securityKey: `prop-linked-${ticker}`,
  });
  const bank = new BankAccountRepository(app.runtime.sequelize);
  for (const ago of [4, 12]) {
    await bank.replaceHoldings(user.familyId, linked.id, day(-ago), [
      reported("LA", "1", "30"),
      reported("LB", "2", "80"),
      reported("LC", "3", "30"),
    ]);
  }
  const expected = await rows<{ text: string; id: string | null }>(
    `SELECT concat_ws(' ', x.date, x.account_id, x.security_id, x.held::numeric, x.value::numeric) AS text FROM (
       SELECT o.date, $1::uuid AS account_id, o.security_id, o.ticker, NULL::uuid AS id, o.held, o.value FROM (${HOLDING_DAYS_ORACLE}) o
       UNION ALL
       SELECT h.date::text, h.account_id, h.security_id, NULL, h.id, h.quantity, h.value FROM holdings h WHERE h.account_id = $4
     ) x
     ORDER BY x.date, x.account_id, x.ticker COLLATE "C", CASE WHEN x.id IS NULL THEN x.security_id END, x.value DESC, x.id`,
    [manual.id, null, null, linked.id],
  );
  // The manual account's three securities, from each first day to today (MIXA sold out but listed, MIXB from its price), and six snapshot rows.
  expect(expected.length).toBe(10 + 9 + 1 + 6);
  for (const perPage of [1, 4, 7, 25]) {
    const listed: string[] = [];
    for (let page = 1; page <= Math.ceil(expected.length / perPage) + 1; page++) {
      const { items, pagination } = await services.banking.holdings(user.actor, { accountIds: [linked.id, manual.id] }, page, perPage);
      expect(pagination.totalCount).toBe(expected.length);
      listed.push(...items.map((row) => `${row.date} ${row.accountId} ${row.securityId} ${Number(row.quantity)} ${Number(row.value)}`));
      for (const row of items) expect(await services.banking.holding(user.actor, row.id)).toEqual(row);
    }
    expect(listed).toEqual(
      expected.map((row) => row.text.replace(/ (\S+) (\S+)$/, (_, held, value) => ` ${Number(held)} ${Number(value)}`)),
    );
  }
  // Another family's rows are not found, nor is a day the id's position does not hold.
  const stranger = await createUser(services);
  const [first] = (await services.banking.holdings(user.actor, { accountId: manual.id }, 1, 1)).items;
  await expect(services.banking.holding(stranger.actor, first.id)).rejects.toThrow(/not found/i);
  // The id's last 32 bits carry the day's number (days since 1970-01-01): the same position's id of another day.
  const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / 86_400_000;
  const dayId = (date: string) =>
    `${first.id.slice(0, -8)}${((parseInt(first.id.slice(-8), 16) ^ dayNumber(first.date) ^ dayNumber(date)) >>> 0).toString(16).padStart(8, "0")}`;
  // The list's first row is its oldest: MIXA's first day, the buy nine days ago.
  expect([first.date, Number(first.quantity)]).toEqual([day(-9), 5]);
  // The same position's id of its last day (the day before the sell) is that day's row.
  const [beforeSell] = (
    await services.banking.holdings(user.actor, { accountId: manual.id, securityId: first.securityId, date: day(-4) }, 1, 1)
  ).items;
  expect(beforeSell.id).toBe(dayId(day(-4)));
  expect(await services.banking.holding(user.actor, beforeSell.id)).toEqual(beforeSell);
  // Not a day the position holds: before MIXA's first day, from the sell on (another position's), or after today.
  for (const date of [day(-10), day(-3), day(1)]) {
    await expect(services.banking.holding(user.actor, dayId(date))).rejects.toThrow(/not found/i);
  }
}, 60_000);
