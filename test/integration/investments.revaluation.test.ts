import { loadConfig } from "../../src/platform/config/config";
import { startRuntime } from "../../src/app/runtime";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { redisUrl } from "../helpers/database-urls";
import { apiKeyClient } from "../helpers/http";
import { expectMatchesOracle } from "../helpers/ledger-oracle";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { sqlOnOwnConnection } from "../helpers/sql";

/**
 * Migration 0043: a manual investment account whose positions, values per day and ledger days an earlier
 * price rule derived is listed, and the service revalues it by the current rule when it starts (one account
 * per transaction, taken off the list in it). Here the derived rows are knocked off what the current rule
 * gives (as an older release's rows differ from it), the account is listed, and a second process starting
 * on the same database must put every derived row back, the list left empty.
 */
let app: TestApp;
let user: TestUser;
let brokerage: { id: string };

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

const sql = sqlOnOwnConnection(() => app.database.url);

/** Every row the account's holdings derive, in one text: positions, values per day, ledger days, balance. */
async function derived(accountId: string): Promise<string> {
  const [row] = await sql<{ state: string }>(
    `SELECT concat_ws('|',
       (SELECT string_agg(security_id::text || date::text || quantity::text || cost_basis::text || trade_price::text, ',' ORDER BY security_id, date)
          FROM positions WHERE account_id = $1),
       (SELECT string_agg(date::text || value::text, ',' ORDER BY date) FROM portfolio_days WHERE account_id = $1),
       (SELECT string_agg(date::text || flow::text || coalesce(holdings::text, ''), ',' ORDER BY date) FROM ledger_days WHERE account_id = $1),
       (SELECT balance::text || cash_balance::text FROM accounts WHERE id = $1)) AS state`,
    [accountId],
  );
  return row.state;
}

beforeAll(async () => {
  app = await startTestApp();
  user = await createUser(app.runtime.services);
  brokerage = await createAccount(app.runtime.services, user, { name: "Brokerage", accountType: "investment", balance: "10000" });
  const rest = apiKeyClient(`${app.url}/api/v1`, user.key);
  for (const trade of [
    { date: day(-30), type: "buy", qty: "10", price: "200", ticker: "VTI" },
    { date: day(-20), type: "buy", qty: "4", price: "150", ticker: "AAPL" },
    { date: day(-12), type: "sell", qty: "3", price: "210", ticker: "VTI" },
    { date: day(-12), type: "buy", qty: "2", price: "208", ticker: "VTI" },
  ])
    expect((await rest.post("/trades", { trade: { account_id: brokerage.id, ...trade } })).status).toBe(201);
});
afterAll(() => app.stop());

test("a fresh database lists nothing to revalue", async () => {
  expect(await sql("SELECT * FROM holdings_revaluations")).toEqual([]);
  expect(await app.runtime.services.trades.revaluePending()).toEqual({ revalued: 0, failed: [] });
});

test("an account an earlier rule valued is revalued when the service starts: every derived row as the current rule gives it", async () => {
  const current = await derived(brokerage.id);
  // What an older release left: other trade prices and day values, and the ledger's days and balance carrying them.
  await sql(
    `UPDATE positions SET trade_price = trade_price + 1 WHERE account_id = $1;
     UPDATE portfolio_days SET value = value + 7 WHERE account_id = $1;
     UPDATE ledger_days SET holdings = holdings + 7 WHERE account_id = $1 AND holdings IS NOT NULL;
     UPDATE accounts SET balance = balance + 7 WHERE id = $1;
     INSERT INTO holdings_revaluations (account_id) VALUES ($1)`.replace(/\$1/g, `'${brokerage.id}'`),
  );
  expect(await derived(brokerage.id)).not.toEqual(current);

  const config = loadConfig({
    DATABASE_URL: app.database.url,
    REDIS_URL: redisUrl(),
    REDIS_PREFIX: `fgtest_revalue_${process.pid}`,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
  });
  const second = await startRuntime(config, { api: false, workers: false });
  await second.stop();

  expect(await derived(brokerage.id)).toEqual(current);
  expect(await sql("SELECT * FROM holdings_revaluations")).toEqual([]);
  await expectMatchesOracle(app, user);
});

test("an account whose trades no longer add up stays listed, is reported, and does not stop the others", async () => {
  const other = await createAccount(app.runtime.services, user, { name: "Second brokerage", accountType: "investment", balance: "500" });
  const rest = apiKeyClient(`${app.url}/api/v1`, user.key);
  expect(
    (await rest.post("/trades", { trade: { account_id: other.id, date: day(-5), type: "buy", qty: "1", price: "100", ticker: "VTI" } }))
      .status,
  ).toBe(201);
  // A sell beyond what was held, written past the service (as no write through it can): its rebuild refuses it.
  await sql(
    `INSERT INTO trades (id, family_id, account_id, security_id, date, qty, price, amount, currency, fee, name)
     SELECT gen_random_uuid(), family_id, account_id, security_id, date, -50, price, -50 * price, currency, 0, 'Sell VTI'
       FROM trades WHERE account_id = $1 AND qty = 10`,
    [brokerage.id],
  );
  await sql("INSERT INTO holdings_revaluations (account_id) VALUES ($1), ($2)", [brokerage.id, other.id]);
  const result = await app.runtime.services.trades.revaluePending();
  expect(result.revalued).toBe(1);
  expect(result.failed).toEqual([{ accountId: brokerage.id, error: expect.stringContaining("qty exceeds the quantity held") }]);
  expect(await sql<{ account_id: string }>("SELECT account_id FROM holdings_revaluations")).toEqual([{ account_id: brokerage.id }]);
});
