import { seedDemo } from "../../src/app/cli/demo";
import { client } from "../helpers/http";
import { graphqlClient, type Json } from "../helpers/graphql";
import { cents, expectMatchesOracle, oracle, upstreamPrice } from "../helpers/ledger-oracle";
import { startTestApp, type TestApp } from "../helpers/test-app";
import type { TestUser } from "../helpers/fixtures";
import { sqlOnOwnConnection } from "../helpers/sql";

/**
 * we-promise/sure-mcp-server's account tools, replayed on the demo family byte for byte as its httpx
 * client sends them (src/sure_mcp_server/server.py): `get_accounts` is `GET /api/v1/accounts` with no
 * query; `create_transaction` / `update_transaction` send `{"transaction": {…}}` with the amount as a
 * Python float; `delete_transaction` is a bare DELETE. Its headers are httpx's defaults plus
 * X-Api-Key. It reads `accounts` from the body. Every figure is compared with SQL written in the
 * tests (helpers/ledger-oracle.ts and the statements below), including the demo's house and car,
 * valued a few times over the last two years.
 */
// Each write is followed by reads of every account over the demo's history: seconds apiece on a loaded machine.
jest.setTimeout(90_000);
let app: TestApp;
let family: TestUser;
let mcp: ReturnType<typeof client>;
let accounts: Json[];

const HTTPX_HEADERS = { accept: "*/*", "accept-encoding": "gzip, deflate", "user-agent": "python-httpx/0.28.1" };
const isoDay = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/** json.dumps as Python writes it: ", " and ": " separators, floats with a point. */
const pythonJson = (value: Json): string =>
  JSON.stringify(value)
    .replace(/,"/g, ', "')
    .replace(/":/g, '": ')
    .replace(/": (-?\d+)([,}])/g, '": $1.0$2');

const sql = sqlOnOwnConnection(() => app.database.url);

async function getAccounts(): Promise<Json[]> {
  const response = await mcp.get("/api/v1/accounts");
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const data = response.body.accounts ?? response.body.data ?? response.body;
  expect(Array.isArray(data)).toBe(true);
  return data;
}

const byName = (name: string) => accounts.find((account) => account.name === name)!;

/**
 * A brokerage's balance by SQL over its trades and prices: the opening cash less what its trades and transactions moved, plus each
 * security's quantity at its price today as upstream's calculator prices it (upstreamPrice).
 */
async function brokerageBalanceCents(accountId: string): Promise<number> {
  const [figures] = await sql<{ balance: string }>(
    `SELECT (cash + coalesce(value, 0))::text AS balance FROM (
       SELECT (SELECT v.amount FROM valuations v WHERE v.account_id = $1 AND v.kind = 'opening_anchor')
                - (SELECT coalesce(sum(amount), 0) FROM trades WHERE account_id = $1)
                - (SELECT coalesce(sum(amount), 0) FROM transactions WHERE account_id = $1) AS cash,
              (SELECT sum(round(q.qty * ${upstreamPrice("$1", "q.security_id", "'USD'", "CURRENT_DATE")}, 4))
                 FROM (SELECT security_id, sum(qty) AS qty FROM trades WHERE account_id = $1 AND qty <> 0 GROUP BY security_id) q) AS value) AS figures`,
    [accountId],
  );
  return cents(figures.balance);
}

beforeAll(async () => {
  app = await startTestApp();
  const demo = await seedDemo(app.runtime.sequelize, app.runtime.services);
  family = { familyId: demo.family_id, key: demo.api_key } as TestUser;
  mcp = client(app.url, { ...HTTPX_HEADERS, "x-api-key": demo.api_key });
  accounts = await getAccounts();
  // The demo family is seeded first: seconds on an idle machine, more on a busy one.
}, 120_000);
afterAll(() => app.stop());

test("get_accounts: the demo's six accounts, every balance the ledger's by SQL; the house and car hold their newest value and no cash", async () => {
  expect(accounts.map((account) => account.name).sort()).toEqual(
    ["Brokerage", "Everyday Checking", "Family Car", "Family Home", "High-Yield Savings", "Rewards Credit Card"].sort(),
  );
  const expected = await oracle(app.database.url, family.familyId);
  for (const account of accounts)
    expect([account.name, account.balance_cents]).toEqual([account.name, cents(expected.balances.get(account.id)!)]);
  const newest = await sql<{ name: string; amount: string }>(
    `SELECT a.name, (SELECT v.amount FROM valuations v WHERE v.account_id = a.id ORDER BY v.date DESC LIMIT 1)::text AS amount
       FROM accounts a WHERE a.family_id = $1 AND a.account_type IN ('property', 'vehicle') ORDER BY a.name`,
    [family.familyId],
  );
  expect(newest.map((row) => [row.name, cents(row.amount)])).toEqual([
    ["Family Car", byName("Family Car").balance_cents],
    ["Family Home", byName("Family Home").balance_cents],
  ]);
  expect(byName("Family Home")).toMatchObject({
    account_type: "property",
    classification: "asset",
    cash_balance: "$0.00",
    cash_balance_cents: 0,
  });
  expect(byName("Family Car")).toMatchObject({
    account_type: "vehicle",
    classification: "asset",
    cash_balance: "$0.00",
    cash_balance_cents: 0,
  });
  await expectMatchesOracle(app, family);
});

test("the house's history: sure-cli `valuations list` and `balances list`, and balanceHistory by month, each equal to SQL", async () => {
  const house = byName("Family Home");
  const valuations = await sql<{ date: string; amount: string; kind: string }>(
    `SELECT date::text, amount::text, kind FROM valuations WHERE account_id = $1 ORDER BY date DESC`,
    [house.id],
  );
  expect(valuations.map((row) => row.kind)).toEqual([
    "reconciliation",
    "reconciliation",
    "reconciliation",
    "reconciliation",
    "opening_anchor",
  ]);
  const listed = (await mcp.get(`/api/v1/valuations?account_id=${house.id}`)).body.valuations;
  expect(listed.map((row: Json) => [row.date, row.kind, row.amount])).toEqual(
    valuations.map((row) => [
      row.date,
      row.kind,
      new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(Number(row.amount)),
    ]),
  );
  // A row for every calendar day from the opening anchor to the newest valuation, newest first (a page of 25), each
  // ending at the newest valuation on or before it.
  const listedBalances = (await mcp.get(`/api/v1/balances?account_id=${house.id}`)).body;
  const days = await sql<{ date: string; amount: string; total: number }>(
    `SELECT (x.last - n)::text AS date, x.last - x.first + 1 AS total,
            (SELECT v.amount FROM valuations v WHERE v.account_id = $1 AND v.date <= x.last - n ORDER BY v.date DESC LIMIT 1)::text AS amount
       FROM (SELECT min(date) AS first, max(date) AS last FROM valuations WHERE account_id = $1) x, generate_series(0, x.last - x.first) n
      ORDER BY n LIMIT 25`,
    [house.id],
  );
  expect(listedBalances.pagination.total_count).toBe(days[0].total);
  expect(
    listedBalances.balances.map((row: Json) => [
      row.date,
      row.end_balance_cents,
      row.end_non_cash_balance_cents,
      row.end_cash_balance_cents,
    ]),
  ).toEqual(days.map((row) => [row.date, cents(row.amount), cents(row.amount), 0]));

  const from = isoDay(-365);
  const { account } = await graphqlClient(app, family.key).ok(
    `query ($id: ID!, $from: Date) { account(id: $id) { balanceHistory(from: $from, interval: MONTH) { date balance } } }`,
    { id: house.id, from },
  );
  const points = account.balanceHistory as Json[];
  expect(points.length).toBeGreaterThanOrEqual(12);
  const wanted = await sql<{ date: string; amount: string }>(
    `SELECT d::text AS date, (SELECT v.amount FROM valuations v WHERE v.account_id = $1 AND v.date <= d ORDER BY v.date DESC LIMIT 1)::text AS amount
       FROM unnest($2::date[]) AS d`,
    [house.id, points.map((point) => point.date)],
  );
  expect(points.map((point) => [point.date, cents(point.balance)])).toEqual(wanted.map((row) => [row.date, cents(row.amount)]));
  // It moved: the history is not one flat line.
  expect(new Set(points.map((point) => point.balance)).size).toBeGreaterThan(1);
});

test("create_transaction, update_transaction, delete_transaction as the MCP server sends them: get_accounts follows each at once", async () => {
  const checking = byName("Everyday Checking");
  const date = isoDay(-10);
  const created = await mcp.post(
    "/api/v1/transactions",
    pythonJson({ transaction: { account_id: checking.id, amount: 1000, name: "Laptop", date, nature: "expense" } }),
    { "content-type": "application/json" },
  );
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ name: "Laptop", date, classification: "expense", account: { id: checking.id } });
  expect((await getAccounts()).find((account) => account.id === checking.id)!.balance_cents).toBe(checking.balance_cents - 100_000);
  await expectMatchesOracle(app, family);

  const updated = await mcp.patch(`/api/v1/transactions/${created.body.id}`, pythonJson({ transaction: { amount: 250.5 } }), {
    "content-type": "application/json",
  });
  expect(updated.status).toBe(200);
  expect((await getAccounts()).find((account) => account.id === checking.id)!.balance_cents).toBe(checking.balance_cents - 25_050);
  await expectMatchesOracle(app, family);

  const deleted = await mcp.delete(`/api/v1/transactions/${created.body.id}`);
  expect(deleted.status).toBe(200);
  expect((await getAccounts()).find((account) => account.id === checking.id)!.balance_cents).toBe(checking.balance_cents);
  await expectMatchesOracle(app, family);
});

test("get_trades, get_trade, get_holdings on the demo brokerage: its 14 trades, and holdings, cash and balance equal SQL over its trades and prices", async () => {
  const brokerage = byName("Brokerage");
  const listed = await mcp.get(`/api/v1/trades?per_page=25&account_ids=${brokerage.id}`);
  expect(listed.status).toBe(200);
  expect(listed.body.trades).toHaveLength(14);
  expect(listed.body.trades.every((trade: Json) => trade.account.id === brokerage.id)).toBe(true);
  const [newest] = listed.body.trades;
  expect((await mcp.get(`/api/v1/trades/${newest.id}`)).body).toEqual(newest);

  const held = await sql<{ ticker: string; qty: string; cost: string }>(
    `SELECT s.ticker, sum(t.qty)::numeric::text AS qty, sum(CASE WHEN t.qty > 0 THEN t.qty * t.price ELSE 0 END)::text AS cost
       FROM trades t JOIN securities s ON s.id = t.security_id WHERE t.account_id = $1 GROUP BY s.ticker ORDER BY s.ticker`,
    [brokerage.id],
  );
  expect(held.map((row) => [row.ticker, Number(row.qty)])).toEqual([
    ["AAPL", 25],
    ["BND", 130],
    ["VTI", 65],
  ]);
  const newestDay = (await sql<{ date: string }>(`SELECT max(date)::text AS date FROM positions WHERE account_id = $1`, [brokerage.id]))[0]
    .date;
  const holdings = await mcp.get(`/api/v1/holdings?per_page=25&account_id=${brokerage.id}&date=${newestDay}`);
  expect(holdings.body.holdings.map((holding: Json) => [holding.security.ticker, Number(holding.qty), holding.cost_basis_source])).toEqual(
    expect.arrayContaining([
      ["AAPL", 25, "calculated"],
      ["BND", 130, "calculated"],
      ["VTI", 65, "calculated"],
    ]),
  );
  expect(brokerage.balance_cents).toBe(await brokerageBalanceCents(brokerage.id));
  const securities = await mcp.get("/api/v1/securities");
  expect(securities.body.securities.map((security: Json) => security.ticker)).toEqual(["AAPL", "BND", "VTI"]);
  // The demo's history (issue 29): a few years of trades, and a price of each security every month.
  const [span] = await sql<{ years: string; months: string[] }>(
    `SELECT (SELECT (max(date) - min(date)) / 365.0 FROM trades WHERE account_id = $1)::text AS years,
            (SELECT array_agg(DISTINCT to_char(p.date, 'YYYY-MM') ORDER BY to_char(p.date, 'YYYY-MM'))
               FROM security_prices p JOIN trades t ON t.security_id = p.security_id WHERE t.account_id = $1) AS months`,
    [brokerage.id],
  );
  expect(Number(span.years)).toBeGreaterThan(3);
  for (const security of securities.body.securities) {
    const prices = (await mcp.get(`/api/v1/security_prices?security_id=${security.id}&per_page=100`)).body.security_prices;
    expect([security.ticker, prices.map((price: Json) => price.date.slice(0, 7)).sort()]).toEqual([security.ticker, span.months]);
  }
  // Every month from the first to the last, none missing.
  const index = (month: string) => Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7));
  expect(span.months.length).toBe(index(span.months.at(-1)!) - index(span.months[0]) + 1);
  expect(span.months.length).toBeGreaterThanOrEqual(36);
});

test("create_trade, update_trade, delete_trade (MCP) and sure-cli's trades, securities, security-prices and holdings commands on the demo brokerage: upstream's shapes, figures by SQL", async () => {
  const brokerage = byName("Brokerage");
  // sure-cli: X-Api-Key, query keys only for the flags given.
  const cli = client(`${app.url}/api/v1`, { "x-api-key": family.key });
  const balance = async () => (await getAccounts()).find((account) => account.id === brokerage.id)!.balance_cents;
  const before = await balance();
  const securities = await cli.get("/securities");
  expect(securities.body.securities.map((security: Json) => security.ticker)).toEqual(["AAPL", "BND", "VTI"]);
  const vti = securities.body.securities.find((security: Json) => security.ticker === "VTI");
  expect((await cli.get(`/securities/${vti.id}`)).body).toEqual(vti);

  const created = await mcp.post(
    "/api/v1/trades",
    pythonJson({ trade: { account_id: brokerage.id, type: "buy", date: isoDay(-1), security_id: vti.id, qty: 2, price: 100, fee: 1 } }),
  );
  expect(created.status).toBe(201);
  // A ticker without its exchange names the demo's VTI (on ARCX), as upstream resolves it: a sell of what is held.
  const byTicker = await mcp.post(
    "/api/v1/trades",
    pythonJson({ trade: { account_id: brokerage.id, type: "sell", date: isoDay(-1), ticker: "VTI", qty: 1, price: 100 } }),
  );
  expect([byTicker.status, byTicker.body.security?.id]).toEqual([201, vti.id]);
  expect((await mcp.delete(`/api/v1/trades/${byTicker.body.id}`)).status).toBe(200);
  expect(Object.keys(created.body).sort()).toEqual(
    [
      "id",
      "date",
      "amount",
      "currency",
      "name",
      "notes",
      "qty",
      "price",
      "investment_activity_label",
      "account",
      "security",
      "category",
      "created_at",
      "updated_at",
    ].sort(),
  );
  expect(created.body).toMatchObject({
    amount: "$201.00",
    qty: "2.0",
    name: "Buy 2.0 shares of VTI",
    security: { id: vti.id, ticker: "VTI" },
  });
  const updated = await mcp.patch(`/api/v1/trades/${created.body.id}`, pythonJson({ trade: { qty: 3, price: 101.5, notes: "demo" } }));
  expect(updated.status).toBe(200);
  expect(updated.body).toMatchObject({ amount: "$305.50", qty: "3.0", name: "Buy 3.0 shares of VTI", notes: "demo" });

  const listed = await cli.get(`/trades?account_id=${brokerage.id}`);
  expect(listed.body.trades).toContainEqual(updated.body);
  expect(listed.body.pagination.total_count).toBe(15);
  expect((await cli.get(`/trades/${created.body.id}`)).body).toEqual(updated.body);

  const prices = await cli.get(`/security_prices?security_id=${vti.id}`);
  const [newestPrice] = await sql<{ date: string; price: string }>(
    `SELECT date::text AS date, to_char(price, 'FM999999990.0000') AS price FROM security_prices WHERE security_id = $1 ORDER BY date DESC LIMIT 1`,
    [vti.id],
  );
  expect([prices.body.security_prices[0].date, prices.body.security_prices[0].price_amount]).toEqual([newestPrice.date, newestPrice.price]);
  expect((await cli.get(`/security_prices/${prices.body.security_prices[0].id}`)).body).toEqual(prices.body.security_prices[0]);

  // The list is oldest first, as upstream's: today's holdings are asked for by their day (`holdings list --date`).
  const holdings = await cli.get(`/holdings?account_id=${brokerage.id}&date=${isoDay(0)}`);
  const held = holdings.body.holdings.find((holding: Json) => holding.security.id === vti.id);
  expect([Number(held.qty), held.cost_basis_source]).toEqual([68, "calculated"]);
  expect((await cli.get(`/holdings/${held.id}`)).body).toEqual(held);
  expect(await balance()).toBe(await brokerageBalanceCents(brokerage.id));

  const deleted = await mcp.delete(`/api/v1/trades/${created.body.id}`);
  expect([deleted.status, deleted.body]).toEqual([200, { message: "Trade deleted successfully" }]);
  expect(await balance()).toBe(before);
  const after = (await cli.get(`/holdings?account_id=${brokerage.id}&date=${isoDay(0)}`)).body.holdings.find(
    (holding: Json) => holding.security.id === vti.id,
  );
  expect(Number(after.qty)).toBe(65);
});
