import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CLI } from "../helpers/cli";
import { apiKeyClient } from "../helpers/http";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { graphqlClient } from "../helpers/graphql";
import { upstreamPrice } from "../helpers/ledger-oracle";
import { redisUrl } from "../helpers/database-urls";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { sqlOnOwnConnection } from "../helpers/sql";

/**
 * Issue 29, Deliver 1: prices entered through the API (an instance administrator's recordSecurityPrices)
 * and imported (`finance-gateway prices import`). A price is shared by every family: an administrator of
 * another family prices VTI, and the family holding it by hand sees its holding, balances and balance
 * sheet follow, each checked against SQL written here from trades and prices.
 */
let app: TestApp;
let holder: TestUser;
let admin: TestUser;
let brokerage: { id: string };

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const RECORD = `mutation($prices: [SecurityPriceInput!]!) {
  recordSecurityPrices(prices: $prices) { changedCount revaluedAccountCount prices { date price currency security { ticker } } }
}`;

const sql = sqlOnOwnConnection(() => app.database.url);

/**
 * The oracle: the account's cash (its opening 5,000 less its trades' cash) and its holdings on `date`, each security's quantity at
 * its price on the day as upstream's calculator prices it (upstreamPrice: the newest day with a USD price or a trade, the stored
 * price first on a day with both).
 */
async function expectedOn(date: string): Promise<{ cash: number; holdings: number }> {
  const [row] = await sql<{ cash: string; holdings: string }>(
    `SELECT 5000 - (SELECT coalesce(sum(amount), 0) FROM trades WHERE account_id = $1 AND date <= $2::date) AS cash,
            (SELECT coalesce(sum(round(held.qty * ${upstreamPrice("$1", "held.security_id", "'USD'", "$2::date")}, 4)), 0)
               FROM (SELECT security_id, sum(qty) AS qty FROM trades WHERE account_id = $1 AND date <= $2::date AND qty <> 0 GROUP BY security_id) held
            ) AS holdings`,
    [brokerage.id, date],
  );
  return { cash: Number(row.cash), holdings: Number(row.holdings) };
}

async function expectFiguresFollowPrices(): Promise<void> {
  const rest = apiKeyClient(`${app.url}/api/v1`, holder.key);
  const now = await expectedOn(day(0));
  const [holding] = (await rest.get(`/holdings?account_id=${brokerage.id}&date=${day(0)}`)).body.holdings;
  expect(Number(holding.amount.replace(/[$,]/g, ""))).toBeCloseTo(now.holdings, 2);
  const balances = (await rest.get(`/balances?account_id=${brokerage.id}&start_date=${day(-12)}&per_page=100`)).body.balances as Array<{
    date: string;
    end_cash_balance_cents: number;
    end_non_cash_balance_cents: number;
  }>;
  expect(balances.length).toBeGreaterThan(0);
  for (const row of balances) {
    const expected = await expectedOn(row.date);
    expect([row.date, row.end_cash_balance_cents, row.end_non_cash_balance_cents]).toEqual([
      row.date,
      Math.round(expected.cash * 100),
      Math.round(expected.holdings * 100),
    ]);
  }
  expect(Number((await rest.get("/balance_sheet")).body.net_worth.amount)).toBeCloseTo(now.cash + now.holdings, 2);
}

beforeAll(async () => {
  app = await startTestApp();
  holder = await createUser(app.runtime.services, { role: "member" });
  admin = await createUser(app.runtime.services, { role: "admin" });
  brokerage = await createAccount(app.runtime.services, holder, { name: "Brokerage", accountType: "investment", balance: "5000" });
  const bought = await apiKeyClient(`${app.url}/api/v1`, holder.key).post("/trades", {
    trade: { account_id: brokerage.id, date: day(-10), type: "buy", qty: "10", price: "200", ticker: "VTI" },
  });
  expect(bought.status).toBe(201);
});
afterAll(() => app.stop());

test("an administrator's prices revalue a manual holding in another family from the earliest changed day: /holdings, /balances and the balance sheet follow", async () => {
  const admins = graphqlClient(app, admin.key);
  const recorded = await admins.ok(RECORD, {
    prices: [
      { ticker: "vti", date: day(-5), price: "210", currency: "USD" },
      { ticker: "VTI", date: day(-2), price: "220.5", currency: "usd" },
    ],
  });
  expect(recorded.recordSecurityPrices).toEqual({
    changedCount: 2,
    revaluedAccountCount: 1,
    prices: [
      { date: day(-5), price: "210", currency: "USD", security: { ticker: "VTI" } },
      { date: day(-2), price: "220.5", currency: "USD", security: { ticker: "VTI" } },
    ],
  });
  expect((await expectedOn(day(0))).holdings).toBe(2205);
  await expectFiguresFollowPrices();

  // The same prices again change nothing and revalue nothing; one corrected price revalues from its day.
  const again = await admins.ok(RECORD, { prices: [{ ticker: "VTI", date: day(-5), price: "210.0", currency: "USD" }] });
  expect(again.recordSecurityPrices).toMatchObject({ changedCount: 0, revaluedAccountCount: 0 });
  await admins.ok(RECORD, { prices: [{ ticker: "VTI", date: day(-2), price: "230", currency: "USD" }] });
  await expectFiguresFollowPrices();

  const [event] = await sql<{ user_email: string; action: string; changes: Record<string, { new: unknown }> }>(
    `SELECT user_email, action, changes FROM audit_events WHERE event_type = 'security_prices.recorded' ORDER BY occurred_at DESC LIMIT 1`,
    [],
  );
  expect(event).toMatchObject({ user_email: admin.email, action: "record" });
  expect(event.changes.securities.new).toEqual(["VTI"]);
});

test("a price revalues the days until the next day with a price or a trade, not beyond; a day's first trade prices it", async () => {
  const rest = apiKeyClient(`${app.url}/api/v1`, holder.key);
  // Two trades on day −3, the buy recorded first: upstream's calculator keeps the first trade price of a day.
  for (const trade of [
    { type: "buy", qty: "3", price: "215" },
    { type: "sell", qty: "1", price: "218" },
  ])
    expect((await rest.post("/trades", { trade: { account_id: brokerage.id, date: day(-3), ticker: "VTI", ...trade } })).status).toBe(201);
  const admins = graphqlClient(app, admin.key);
  // Day −7 is valued until day −5's price, day −4 until day −3's trades (newer than it).
  await admins.ok(RECORD, {
    prices: [
      { ticker: "VTI", date: day(-7), price: "205", currency: "USD" },
      { ticker: "VTI", date: day(-4), price: "212", currency: "USD" },
    ],
  });
  const stored = await sql<{ date: string; value: string }>(
    `SELECT date::text, trim_scale(value)::text AS value FROM portfolio_days WHERE account_id = $1 AND date >= $2::date ORDER BY date`,
    [brokerage.id, day(-10)],
  );
  expect(stored.map((row) => [row.date, row.value])).toEqual([
    [day(-10), "2000"],
    [day(-7), "2050"],
    [day(-5), "2100"],
    [day(-4), "2120"],
    // 12 held at the buy's 215 (the sell's 218 is the day's second trade price), not at day −4's stored 212.
    [day(-3), "2580"],
    [day(-2), "2760"],
  ]);
  const [holding] = (await rest.get(`/holdings?account_id=${brokerage.id}&date=${day(-3)}`)).body.holdings;
  expect([holding.qty, holding.price, holding.amount]).toEqual(["12.0", "$215.00", "$2,580.00"]);
  await expectFiguresFollowPrices();
});

test("a member's key is refused (FORBIDDEN, 403 over REST's mapping), an administrator's read key lacks the scope; bad entries are named and nothing is written", async () => {
  const before = await sql<{ count: string }>(`SELECT count(*) FROM security_prices`, []);
  const price = { ticker: "VTI", date: day(-1), price: "1", currency: "USD" };
  const member = await graphqlClient(app, holder.key).fail(RECORD, { prices: [price] });
  expect(member.extensions).toMatchObject({ code: "FORBIDDEN", restError: "forbidden" });
  const readOnly = await graphqlClient(app, admin.readKey).fail(RECORD, { prices: [price] });
  expect(readOnly.extensions).toMatchObject({ restError: "insufficient_scope" });

  const refused = await graphqlClient(app, admin.key).fail(RECORD, {
    prices: [
      price,
      { ticker: "VTI", date: day(-1), price: "0", currency: "USD" },
      { ticker: "NOPE", date: day(-1), price: "1", currency: "USD" },
      { ticker: "VTI", date: day(3), price: "1", currency: "XXZ" },
      { ticker: "VTI", date: day(-1), price: "2", currency: "USD" },
    ],
  });
  expect(refused.extensions.errors).toEqual([
    "prices[1].price must be greater than 0",
    `prices[3].date ${day(3)} is in the future`,
    "prices[3].currency XXZ is not an ISO 4217 code",
    "prices[2].ticker NOPE names no known security",
    "prices[4].date repeats the security, date and currency of prices[0].date",
  ]);
  const tooMany = await graphqlClient(app, admin.key).fail(RECORD, { prices: Array.from({ length: 1001 }, () => price) });
  expect(tooMany.extensions.errors).toEqual(["prices holds 1001 prices; one call takes at most 1000"]);
  expect(await sql<{ count: string }>(`SELECT count(*) FROM security_prices`, [])).toEqual(before);
});

test("`prices import FILE`: one bad row writes nothing and is named; a good file is recorded, revalues the holding and is audited as the CLI", async () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "prices-import-"));
  const env = {
    ...process.env,
    DATABASE_URL: app.database.url,
    REDIS_URL: redisUrl(),
    REDIS_PREFIX: app.runtime.config.redisPrefix,
    LOG_LEVEL: "silent",
  };
  const run = (lines: string[]) => {
    const file = path.join(folder, "prices.csv");
    fs.writeFileSync(file, lines.join("\n"));
    const cli = spawnSync(process.execPath, [CLI, "prices", "import", file, "--json"], { env, encoding: "utf8" });
    return { status: cli.status, json: JSON.parse(cli.stdout.trim()) as Record<string, unknown> };
  };
  try {
    const before = await sql<{ count: string }>(`SELECT count(*) FROM security_prices`, []);
    const bad = run(["ticker,date,price,currency", `VTI,${day(-4)},240,USD`, `VTI,${day(-3)},-1,USD`, `VTI,${day(-1)},250,USD`]);
    expect(bad).toEqual({ status: 1, json: { error: "row 2: price must be a positive decimal number" } });
    expect(await sql<{ count: string }>(`SELECT count(*) FROM security_prices`, [])).toEqual(before);

    const good = run(["Ticker,Date,Price,Currency", `VTI,${day(-4)},240,USD`, `"VTI",${day(-1)},250.125,USD`]);
    expect(good).toEqual({ status: 0, json: { prices: 2, changed: 2, revalued_accounts: 1 } });
    await expectFiguresFollowPrices();
    const [event] = await sql<{ user_id: string | null; user_agent: string; action: string }>(
      `SELECT user_id, user_agent, action FROM audit_events WHERE event_type = 'security_prices.recorded' ORDER BY occurred_at DESC LIMIT 1`,
      [],
    );
    expect(event).toEqual({ user_id: null, user_agent: "finance-gateway-cli", action: "import" });
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
});
