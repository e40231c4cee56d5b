import fc from "fast-check";
import { BuiltinProvider } from "../../src/finance/assistant/builtin.provider";
import { ToolRunner } from "../../src/finance/assistant/tools";
import { FamilyVocabulary } from "../../src/finance/assistant/vocabulary";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { graphqlClient, type Json } from "../helpers/graphql";
import { apiKeyClient } from "../helpers/http";
import { cents, expectMatchesOracle, ORACLE_DAYS } from "../helpers/ledger-oracle";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { sqlOnOwnConnection } from "../helpers/sql";

/**
 * A family with accounts in three currencies (docs/ledger.md#currencies): its totals are in its own
 * currency, another currency is converted only with a rate the family entered for a day on or before
 * the one totalled, and what has no rate is listed and totalled apart, never added as if it were
 * dollars. Every figure is compared with SQL written here (helpers/ledger-oracle.ts for the sheet).
 */
let app: TestApp;
let user: TestUser;
let gql: ReturnType<typeof graphqlClient>;
const ids: Record<string, string> = {};
const isoDay = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  app = await startTestApp();
  user = await createUser(app.runtime.services, { currency: "USD" });
  gql = graphqlClient(app, user.key);
  const services = app.runtime.services;
  ids.checking = (await createAccount(services, user, { name: "Checking", currency: "USD", balance: "1000.00" })).id;
  ids.euro = (await createAccount(services, user, { name: "Sparkonto", currency: "EUR", balance: "500.00" })).id;
  ids.pound = (await createAccount(services, user, { name: "UK card", accountType: "credit_card", currency: "GBP", balance: "200.00" })).id;
  const api = apiKeyClient(`${app.url}/api/v1`, user.key);
  for (const [account, offset, amount, nature] of [
    ["euro", -20, "120.00", "income"],
    ["euro", -8, "45.50", "expense"],
    ["pound", -12, "30.25", "expense"],
    ["checking", -5, "99.99", "expense"],
  ] as const) {
    const created = await api.post("/transactions", {
      transaction: { account_id: ids[account], date: isoDay(offset), amount, name: `${nature} ${offset}`, nature },
    });
    expect(created.status).toBe(201);
  }
});
afterAll(() => app.stop());

const SET_RATE = `mutation ($input: ExchangeRateInput!) {
  setExchangeRate(input: $input) { created exchangeRate { id fromCurrency toCurrency date rate } }
}`;
const setRate = (fromCurrency: string, date: string, rate: string, toCurrency = "USD") =>
  gql.ok(SET_RATE, { input: { fromCurrency, toCurrency, date, rate } }).then((data) => data.setExchangeRate);

async function clearRates(): Promise<void> {
  const { exchangeRates } = await gql.ok(`{ exchangeRates(perPage: 100) { items { id } } }`);
  for (const { id } of exchangeRates.items) await gql.ok(`mutation ($id: ID!) { deleteExchangeRate(id: $id) { id } }`, { id });
}

const sheet = () => apiKeyClient(`${app.url}/api/v1`, user.key).get("/balance_sheet");

const sql = sqlOnOwnConnection(() => app.database.url);

/**
 * The net worth series by SQL: each account's balance at the end of each day (its newest oracle day on
 * or before it), times the newest rate into the family's currency on or before that day (1 for its
 * own); where there is none, the account is totalled in its own currency.
 */
async function seriesBySql(days: string[]): Promise<Array<{ date: string; currency: string; assets: string; liabilities: string }>> {
  return sql(
    `WITH od AS MATERIALIZED (${ORACLE_DAYS}),
          fam AS (SELECT currency FROM families WHERE id = $1),
          bal AS (
            SELECT d.day, a.currency, a.classification,
                   (SELECT o.balance FROM od o WHERE o.account_id = a.id AND o.date::date <= d.day ORDER BY o.date DESC LIMIT 1) AS balance,
                   CASE WHEN a.currency = fam.currency THEN 1
                        ELSE (SELECT x.rate FROM exchange_rates x
                               WHERE x.family_id = $1 AND x.from_currency = a.currency AND x.to_currency = fam.currency AND x.date <= d.day
                               ORDER BY x.date DESC LIMIT 1) END AS rate,
                   fam.currency AS family_currency
              FROM unnest($2::date[]) AS d(day) CROSS JOIN accounts a CROSS JOIN fam
             WHERE a.family_id = $1
          )
     SELECT day::text AS date, CASE WHEN rate IS NULL THEN currency ELSE family_currency END AS currency,
            round(coalesce(sum(balance * coalesce(rate, 1)) FILTER (WHERE classification = 'asset'), 0), 2)::text AS assets,
            round(coalesce(sum(balance * coalesce(rate, 1)) FILTER (WHERE classification = 'liability'), 0), 2)::text AS liabilities
       FROM bal WHERE balance IS NOT NULL
      GROUP BY 1, 2 ORDER BY 1, 2`,
    [user.familyId, days],
  );
}

/** The built-in assistant's answer, with real tools on the real database (as the golden tests ask). */
async function ask(question: string): Promise<string> {
  const { repositories } = app.runtime.services;
  const today = isoDay(0);
  const vocabulary = new FamilyVocabulary(await repositories.finance.vocabulary(user.familyId));
  const tools = new ToolRunner(
    { familyId: user.familyId, currency: "USD", today, vocabulary },
    { finance: repositories.finance, accounts: repositories.accounts },
  );
  const { content } = await new BuiltinProvider().respond({
    model: "builtin",
    history: [{ role: "user", content: question }],
    context: { currency: "USD", today, vocabulary },
    tools,
    onDelta: () => undefined,
  });
  return content;
}

const usd = (amount: number) => new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(amount);

/** Net worth in dollars at the end of a day, by the SQL series (what had no rate that day is not in it). */
async function netWorthBySql(day: string): Promise<number> {
  const row = (await seriesBySql([day])).find((candidate) => candidate.currency === "USD")!;
  return Number(row.assets) - Number(row.liabilities);
}

const SERIES = `query ($from: Date, $to: Date) {
  netWorthSeries(from: $from, to: $to, interval: DAY) { date currency assets liabilities netWorth includedCurrencies unconvertedCurrencies }
}`;

async function expectSeriesMatchesSql(from: string, to: string): Promise<Json[]> {
  const { netWorthSeries } = await gql.ok(SERIES, { from, to });
  const days = [...new Set<string>(netWorthSeries.map((point: Json) => point.date))];
  const wanted = await seriesBySql(days);
  const order = (a: Json, b: Json) => a.date.localeCompare(b.date) || a.currency.localeCompare(b.currency);
  expect(netWorthSeries.map((point: Json) => [point.date, point.currency, cents(point.assets), cents(point.liabilities)]).sort()).toEqual(
    wanted
      .sort(order)
      .map((row) => [row.date, row.currency, cents(row.assets), cents(row.liabilities)])
      .sort(),
  );
  for (const point of netWorthSeries.filter((candidate: Json) => candidate.currency === "USD"))
    expect(point.unconvertedCurrencies).toEqual(
      wanted.filter((row) => row.date === point.date && row.currency !== "USD").map((row) => row.currency),
    );
  return netWorthSeries;
}

test("without a rate nothing is converted: the sheet is in dollars, lists the euro and pound accounts and totals them apart", async () => {
  const { body, status } = await sheet();
  expect(status).toBe(200);
  expect(body).toMatchObject({
    currency: "USD",
    net_worth: { amount: "900.01", currency: "USD" },
    complete: false,
    conversions: [],
    other_currencies: [
      { currency: "EUR", assets: { amount: "574.5" }, liabilities: { amount: "0" } },
      { currency: "GBP", assets: { amount: "0" }, liabilities: { amount: "230.25" } },
    ],
  });
  expect(body.unconverted_accounts.map((account: Json) => [account.name, account.currency, account.balance])).toEqual([
    ["Sparkonto", "EUR", "€574.50"],
    ["UK card", "GBP", "£230.25"],
  ]);
  await expectMatchesOracle(app, user);
  await expectSeriesMatchesSql(isoDay(-25), isoDay(0));
});

test("a rate converts from its day on, a later one replaces it, a same-day one updates it; each write is audited with its actor", async () => {
  const first = await setRate("EUR", isoDay(-10), "1.1");
  expect(first).toMatchObject({ created: true, exchangeRate: { fromCurrency: "EUR", toCurrency: "USD", date: isoDay(-10), rate: "1.1" } });
  const again = await setRate("eur", isoDay(-10), "1.08");
  expect([again.created, again.exchangeRate.id, again.exchangeRate.rate]).toEqual([false, first.exchangeRate.id, "1.08"]);
  await setRate("EUR", isoDay(-3), "1.0856");
  await setRate("GBP", isoDay(3), "1.27"); // tomorrow's rate: not in force today

  const { body } = await sheet();
  // 1,000.00 − 99.99 in dollars + 574.50 € × 1.0856 = 623.6772 → 1,523.69; the card in pounds stays apart.
  expect(body).toMatchObject({
    currency: "USD",
    assets: { amount: "1523.69" },
    liabilities: { amount: "0" },
    complete: false,
    conversions: [{ currency: "EUR", rate: "1.0856", date: isoDay(-3) }],
    other_currencies: [{ currency: "GBP", liabilities: { amount: "230.25" } }],
  });
  expect(body.unconverted_accounts.map((account: Json) => account.name)).toEqual(["UK card"]);
  await expectMatchesOracle(app, user);

  const series = await expectSeriesMatchesSql(isoDay(-25), isoDay(0));
  const usd = (date: string) => series.find((point) => point.date === date && point.currency === "USD")!;
  expect(usd(isoDay(-11))).toMatchObject({ includedCurrencies: ["USD"], unconvertedCurrencies: ["EUR", "GBP"] });
  expect(usd(isoDay(-10))).toMatchObject({ includedCurrencies: ["USD", "EUR"], unconvertedCurrencies: ["GBP"] });

  const events = await sql<{ event_type: string; user_email: string; resource_label: string }>(
    `SELECT event_type, user_email, resource_label FROM audit_events WHERE resource_type = 'exchange_rate' ORDER BY occurred_at`,
    [],
  );
  expect(events.map((event) => [event.event_type, event.user_email])).toEqual(
    Array.from({ length: 4 }, () => ["exchange_rate.set", user.email]),
  );
  expect(events[0].resource_label).toBe(`EUR→USD ${isoDay(-10)}`);
});

test("the assistant's tools and the sheet agree; deleting the rate in force falls back to the older one", async () => {
  const now = await netWorthBySql(isoDay(0));
  const worth = await ask("What is my net worth?");
  expect(worth).toContain(`**${usd(now)}**`);
  expect(worth).toContain(`Converted into USD: EUR at 1.0856 (rate of ${isoDay(-3)})`);
  expect(worth).toContain("Not included, for want of an exchange rate into USD: UK card (£230.25)");
  const yearEnd = `${Number(isoDay(0).slice(0, 4)) - 1}-12-31`;
  const change = await ask("How did my net worth change this year?");
  expect(change).toContain(`from ${usd(await netWorthBySql(yearEnd))} at the end of ${yearEnd}`);
  expect(change).toContain(`to **${usd(now)}**`);
  // At the end of last year no euro rate was in force: the euro account is named, not counted as dollars.
  expect(change).toMatch(/Not included, for want of an exchange rate into USD: .*Sparkonto \(€/);

  const { exchangeRates } = await gql.ok(`{ exchangeRates(filter: { fromCurrency: "EUR" }) { items { id date rate } } }`);
  expect(exchangeRates.items.map((rate: Json) => [rate.date, rate.rate])).toEqual([
    [isoDay(-3), "1.0856"],
    [isoDay(-10), "1.08"],
  ]);
  const deleted = await gql.ok(`mutation ($id: ID!) { deleteExchangeRate(id: $id) { date } }`, { id: exchangeRates.items[0].id });
  expect(deleted.deleteExchangeRate.date).toBe(isoDay(-3));
  // 900.01 + 574.50 × 1.08 = 620.46 → 1,520.47
  expect((await sheet()).body.assets.amount).toBe("1520.47");
  await expectMatchesOracle(app, user);
  const [event] = await sql<{ event_type: string; severity: string }>(
    `SELECT event_type, severity FROM audit_events WHERE resource_type = 'exchange_rate' ORDER BY occurred_at DESC LIMIT 1`,
    [],
  );
  expect(event).toEqual({ event_type: "exchange_rate.deleted", severity: "warning" });
});

test("bad rates are refused with the reason, another family's rates are not seen and never change these totals", async () => {
  for (const [input, reason] of [
    [{ fromCurrency: "EUR", toCurrency: "USD", date: isoDay(0), rate: "0" }, "Rate must be greater than 0"],
    [{ fromCurrency: "EUR", toCurrency: "USD", date: isoDay(0), rate: "-1.2" }, "Rate must be a positive decimal number"],
    [{ fromCurrency: "XXY", toCurrency: "USD", date: isoDay(0), rate: "1" }, "From currency is not a valid ISO 4217 code"],
    [{ fromCurrency: "USD", toCurrency: "USD", date: isoDay(0), rate: "1" }, "From currency and to currency must differ"],
    [{ fromCurrency: "EUR", toCurrency: "USD", date: isoDay(0), rate: "1.1234567890123" }, "Rate must have at most 12 decimal places"],
  ] as const) {
    const error = await gql.fail(SET_RATE, { input });
    expect(JSON.stringify(error)).toContain(reason);
  }
  const before = (await sheet()).body;
  const other = await createUser(app.runtime.services, { currency: "USD" });
  await graphqlClient(app, other.key).ok(SET_RATE, { input: { fromCurrency: "GBP", toCurrency: "USD", date: isoDay(-1), rate: "1.3" } });
  expect((await sheet()).body).toEqual(before);
  const seen = await graphqlClient(app, other.key).ok(
    `{ exchangeRates { items { fromCurrency } pagination { total_count: totalCount } } }`,
  );
  expect(seen.exchangeRates.items).toEqual([{ fromCurrency: "GBP" }]);
  const read = await graphqlClient(app, user.readKey).raw(SET_RATE, {
    input: { fromCurrency: "GBP", toCurrency: "USD", date: isoDay(0), rate: "1" },
  });
  expect(read.body.errors?.[0]?.extensions?.code).toBeDefined();
});

test("property: any rates on any days give a sheet and a series equal to SQL", async () => {
  const rate = fc.integer({ min: 1, max: 40_000 }).map((units) => (units / 10_000).toString());
  const entry = fc.record({ currency: fc.constantFrom("EUR", "GBP"), offset: fc.integer({ min: -30, max: 2 }), rate });
  await fc.assert(
    fc.asyncProperty(fc.array(entry, { maxLength: 5 }), async (entries) => {
      await clearRates();
      for (const { currency, offset, rate: value } of entries) await setRate(currency, isoDay(offset), value);
      await expectMatchesOracle(app, user);
      await expectSeriesMatchesSql(isoDay(-32), isoDay(0));
    }),
    { numRuns: 8 },
  );
});
