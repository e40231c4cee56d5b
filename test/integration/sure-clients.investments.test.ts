import { apiKeyClient, client } from "../helpers/http";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { graphqlClient } from "../helpers/graphql";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { sqlOnOwnConnection } from "../helpers/sql";

/**
 * sure-cli's `trades`, `securities`, `security-prices` and `holdings` commands and the MCP server's
 * five trade tools, replayed as the clients send them: sure-cli sends X-Api-Key, `{"trade": {…}}`
 * with every value a string, `page=1&per_page=25` on every list (its flags' defaults), other query
 * keys only for the flags given and `--account-ids` as repeated `account_ids[]`; the MCP server
 * (src/sure_mcp_server/server.py) sends `{"trade": {…}}` with qty, price and fee as Python floats,
 * `per_page` on every list, `account_ids` comma-separated. Figures are checked against SQL written here.
 */
let app: TestApp;
let family: TestUser;
let other: TestUser;
let cli: ReturnType<typeof apiKeyClient>;
let mcp: ReturnType<typeof client>;
let brokerage: { id: string };
let checking: { id: string };

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const pythonJson = (value: unknown): string =>
  JSON.stringify(value)
    .replace(/,"/g, ', "')
    .replace(/":/g, '": ')
    .replace(/": (-?\d+)([,}])/g, '": $1.0$2');

const sql = sqlOnOwnConnection(() => app.database.url);

beforeAll(async () => {
  app = await startTestApp();
  family = await createUser(app.runtime.services);
  other = await createUser(app.runtime.services);
  brokerage = await createAccount(app.runtime.services, family, { name: "Brokerage", accountType: "investment", balance: "10000" });
  checking = await createAccount(app.runtime.services, family, { name: "Checking", balance: "500" });
  cli = apiKeyClient(`${app.url}/api/v1`, family.key);
  mcp = client(app.url, {
    accept: "*/*",
    "user-agent": "python-httpx/0.28.1",
    "x-api-key": family.key,
    "content-type": "application/json",
  });
});
afterAll(() => app.stop());

test("sure-cli `trades create --apply` buys, the MCP server's create_trade buys and sells; the cash, holdings and balance follow", async () => {
  const bought = await cli.post("/trades", {
    trade: { account_id: brokerage.id, date: day(-30), type: "buy", qty: "10", price: "150.25", ticker: "AAPL|XNAS" },
  });
  expect(bought.status).toBe(201);
  expect(bought.body).toMatchObject({
    date: day(-30),
    amount: "$1,502.50",
    currency: "USD",
    name: "Buy 10.0 shares of AAPL",
    notes: null,
    qty: "10.0",
    price: "$150.25",
    investment_activity_label: "Buy",
    account: { id: brokerage.id, name: "Brokerage", account_type: "investment" },
    security: { ticker: "AAPL", name: "AAPL" },
    category: null,
  });

  const mcpBuy = await mcp.post(
    "/api/v1/trades",
    pythonJson({ trade: { account_id: brokerage.id, type: "buy", date: day(-20), ticker: "VTI", qty: 4, price: 200.5, fee: 1 } }),
  );
  expect(mcpBuy.status).toBe(201);
  expect(mcpBuy.body).toMatchObject({ amount: "$803.00", qty: "4.0", name: "Buy 4.0 shares of VTI" });
  const mcpSell = await mcp.post(
    "/api/v1/trades",
    pythonJson({
      trade: { account_id: brokerage.id, type: "sell", date: day(-10), security_id: bought.body.security.id, qty: 4, price: 160 },
    }),
  );
  expect(mcpSell.status).toBe(201);
  expect(mcpSell.body).toMatchObject({
    amount: "-$640.00",
    qty: "-4.0",
    name: "Sell 4.0 shares of AAPL",
    investment_activity_label: "Sell",
  });

  // Cash: 10,000 − 1,502.50 − 803 + 640; holdings at the newest trade prices: 6 AAPL × 160 + 4 VTI × 200.5.
  const [account] = await sql<{ balance: string; cash_balance: string }>(`SELECT balance, cash_balance FROM accounts WHERE id = $1`, [
    brokerage.id,
  ]);
  expect(account).toEqual({ cash_balance: "8334.5000", balance: String((8334.5 + 6 * 160 + 4 * 200.5).toFixed(4)) });
  const listed = (await cli.get("/accounts")).body.accounts.find((row: { id: string }) => row.id === brokerage.id);
  expect(listed.balance_cents).toBe(Math.round((8334.5 + 960 + 802) * 100));
});

test("get_trades / sure-cli `trades list` filter as upstream; get_trade and `trades show` answer the trade", async () => {
  const all = await mcp.get(`/api/v1/trades?per_page=25&account_ids=${brokerage.id},${checking.id}`);
  expect(all.status).toBe(200);
  expect(all.body.trades.map((trade: { name: string }) => trade.name)).toEqual([
    "Sell 4.0 shares of AAPL",
    "Buy 4.0 shares of VTI",
    "Buy 10.0 shares of AAPL",
  ]);
  expect(all.body.pagination).toEqual({ page: 1, per_page: 25, total_count: 3, total_pages: 1 });
  // sure-cli `trades list --account-ids A --account-ids B`: Go's url.Values, sorted, brackets escaped.
  const repeated = await cli.get(`/trades?account_ids%5B%5D=${brokerage.id}&account_ids%5B%5D=${checking.id}&page=1&per_page=25`);
  expect(repeated.body).toEqual(all.body);
  const ranged = await cli.get(`/trades?account_id=${brokerage.id}&end_date=${day(-15)}&page=1&per_page=25&start_date=${day(-25)}`);
  expect(ranged.body.trades.map((trade: { name: string }) => trade.name)).toEqual(["Buy 4.0 shares of VTI"]);
  const shown = await mcp.get(`/api/v1/trades/${ranged.body.trades[0].id}`);
  expect(shown.body).toEqual(ranged.body.trades[0]);
  expect((await cli.get(`/trades?start_date=yesterday`)).status).toBe(422);
  expect((await cli.get(`/trades?account_id=nope`)).status).toBe(422);
});

test("selling more than held is a 422 naming qty and changes nothing; so is an update or a delete that would leave a sell uncovered", async () => {
  const before = await sql(
    `SELECT (SELECT count(*) FROM trades) AS trades, (SELECT balance FROM accounts WHERE id = $1) AS balance,
      (SELECT md5(string_agg(h.security_id::text || h.date::text || h.quantity::text || h.value::text, ',' ORDER BY h.date, h.security_id)) FROM holdings h WHERE h.account_id = $1) AS holdings`,
    [brokerage.id],
  );
  const oversell = await cli.post("/trades", {
    trade: { account_id: brokerage.id, date: day(-5), type: "sell", qty: "7", price: "150", ticker: "AAPL|XNAS" },
  });
  expect(oversell.status).toBe(422);
  expect(oversell.body.error).toBe("validation_failed");
  expect(oversell.body.errors[0]).toMatch(/^qty exceeds the quantity held: 7 AAPL sold on .* with 6 held$/);
  const trades = (await cli.get(`/trades?account_id=${brokerage.id}`)).body.trades;
  const firstBuy = trades.find((trade: { name: string }) => trade.name === "Buy 10.0 shares of AAPL");
  expect((await cli.patch(`/trades/${firstBuy.id}`, { trade: { qty: "3" } })).status).toBe(422);
  expect((await cli.delete(`/trades/${firstBuy.id}`)).status).toBe(422);
  const after = await sql(
    `SELECT (SELECT count(*) FROM trades) AS trades, (SELECT balance FROM accounts WHERE id = $1) AS balance,
      (SELECT md5(string_agg(h.security_id::text || h.date::text || h.quantity::text || h.value::text, ',' ORDER BY h.date, h.security_id)) FROM holdings h WHERE h.account_id = $1) AS holdings`,
    [brokerage.id],
  );
  expect(after).toEqual(before);
});

test("other families' trades are 404, read-only keys are refused every write (403), a bank account takes no trades (422)", async () => {
  const [trade] = (await cli.get(`/trades?account_id=${brokerage.id}`)).body.trades;
  const stranger = apiKeyClient(`${app.url}/api/v1`, other.key);
  expect((await stranger.get(`/trades/${trade.id}`)).status).toBe(404);
  expect((await stranger.patch(`/trades/${trade.id}`, { trade: { notes: "mine" } })).status).toBe(404);
  expect((await stranger.delete(`/trades/${trade.id}`)).status).toBe(404);
  expect((await stranger.get(`/trades`)).body.trades).toEqual([]);
  expect((await stranger.get(`/securities/${trade.security.id}`)).status).toBe(404);
  const created = await stranger.post("/trades", {
    trade: { account_id: brokerage.id, date: day(-1), type: "buy", qty: "1", price: "1", ticker: "X" },
  });
  expect([created.status, created.body.message]).toEqual([404, "Account not found"]);

  const reader = apiKeyClient(`${app.url}/api/v1`, family.readKey);
  expect((await reader.get(`/trades/${trade.id}`)).status).toBe(200);
  expect(
    (await reader.post("/trades", { trade: { account_id: brokerage.id, date: day(-1), type: "buy", qty: "1", price: "1", ticker: "X" } }))
      .status,
  ).toBe(403);
  expect((await reader.patch(`/trades/${trade.id}`, { trade: { notes: "x" } })).status).toBe(403);
  expect((await reader.put(`/trades/${trade.id}`, { trade: { notes: "x" } })).status).toBe(403);
  expect((await reader.delete(`/trades/${trade.id}`)).status).toBe(403);

  const onChecking = await cli.post("/trades", {
    trade: { account_id: checking.id, date: day(-1), type: "buy", qty: "1", price: "1", ticker: "X" },
  });
  expect([onChecking.status, onChecking.body.errors]).toEqual([422, ["Account must be an investment or crypto exchange account"]]);
  const badType = await cli.post("/trades", {
    trade: { account_id: brokerage.id, date: day(-1), type: "short", qty: "1", price: "1", ticker: "X" },
  });
  expect(badType.status).toBe(422);
  const noQty = await cli.post("/trades", {
    trade: { account_id: brokerage.id, date: day(-1), type: "buy", qty: "0", price: "1", ticker: "X" },
  });
  expect([noQty.status, noQty.body.errors]).toEqual([422, ["qty must be present and positive"]]);
});

test("update_trade (MCP) and sure-cli `trades update --apply` (PATCH and PUT) re-derive amount and name; `trades delete --apply` deletes", async () => {
  const created = await cli.post("/trades", {
    trade: { account_id: brokerage.id, date: day(-3), type: "buy", qty: "2", price: "50", ticker: "MSFT" },
  });
  const patched = await mcp.patch(`/api/v1/trades/${created.body.id}`, pythonJson({ trade: { qty: 3, price: 55.5, notes: "topped up" } }));
  expect(patched.status).toBe(200);
  expect(patched.body).toMatchObject({
    qty: "3.0",
    price: "$55.50",
    amount: "$166.50",
    name: "Buy 3.0 shares of MSFT",
    notes: "topped up",
  });
  const put = await cli.put(`/trades/${created.body.id}`, { trade: { type: "sell", qty: "1" } });
  expect([put.status, put.body.name, put.body.amount, put.body.qty]).toEqual([422, undefined, undefined, undefined]);
  const relabelled = await cli.put(`/trades/${created.body.id}`, { trade: { investment_activity_label: "Reinvestment" } });
  expect([relabelled.status, relabelled.body.investment_activity_label]).toEqual([200, "Reinvestment"]);

  const deleted = await mcp.delete(`/api/v1/trades/${created.body.id}`);
  expect([deleted.status, deleted.body]).toEqual([200, { message: "Trade deleted successfully" }]);
  expect((await cli.get(`/trades/${created.body.id}`)).status).toBe(404);
  const [{ count }] = await sql<{ count: string }>(
    `SELECT count(*) FROM holdings h JOIN securities s ON s.id = h.security_id WHERE s.ticker = 'MSFT'`,
    [],
  );
  expect(count).toBe("0");
  const audit = await sql<{ type: string }>(`SELECT event_type AS type FROM audit_events WHERE resource_id = $1 ORDER BY occurred_at, id`, [
    created.body.id,
  ]);
  expect(audit.map((row) => row.type)).toEqual(["trade.created", "trade.updated", "trade.updated", "trade.deleted"]);
});

test("sure-cli `securities list/show`, `security-prices list/show` and `holdings list/show`: the family's securities, their prices, calculated holdings", async () => {
  const securities = await cli.get("/securities");
  expect(securities.body.securities.map((s: { ticker: string }) => s.ticker)).toEqual(["AAPL", "VTI"]);
  const [aapl] = securities.body.securities;
  // Exactly the keys of upstream's securities/_security view.
  expect(Object.keys(aapl).sort()).toEqual(
    [
      ...["id", "ticker", "name", "kind", "country_code", "exchange_mic", "exchange_acronym", "exchange_operating_mic", "exchange_name"],
      ...["offline", "offline_reason", "website_url", "logo_url", "first_provider_price_on", "created_at", "updated_at"],
    ].sort(),
  );
  expect(aapl).toMatchObject({ kind: "standard", exchange_operating_mic: "XNAS", offline: false, logo_url: null });
  expect((await cli.get(`/securities/${aapl.id}`)).body).toEqual(aapl);
  expect((await cli.get("/securities?ticker=aapl&exchange_operating_mic=xnas")).body.securities).toHaveLength(1);
  expect((await cli.get("/securities?kind=bond")).status).toBe(422);
  // `securities list --offline …`: true/false/1/0 filter, anything else is refused as upstream refuses it.
  expect((await cli.get("/securities?offline=false&page=1&per_page=25")).body.securities).toHaveLength(2);
  expect((await cli.get("/securities?offline=1&page=1&per_page=25")).body.securities).toEqual([]);
  const offline = await cli.get("/securities?offline=maybe&page=1&per_page=25");
  expect([offline.status, offline.body.error]).toEqual([422, "validation_failed"]);

  const sequelize = app.runtime.sequelize;
  await sequelize.transaction((transaction) =>
    app.runtime.services.trades.recordPrices(
      [
        { securityId: aapl.id, date: day(-12), price: "155", currency: "USD" },
        { securityId: aapl.id, date: day(-8), price: "170", currency: "USD" },
        { securityId: aapl.id, date: day(-2), price: "180.125", currency: "USD" },
      ],
      transaction,
    ),
  );
  const prices = await cli.get(`/security_prices?security_id=${aapl.id}&start_date=${day(-9)}`);
  expect(prices.body.security_prices.map((p: { price: string; price_amount: string }) => [p.price, p.price_amount])).toEqual([
    ["$180.13", "180.1250"],
    ["$170.00", "170.0000"],
  ]);
  // Exactly the keys of upstream's security_prices/_security_price view.
  expect(Object.keys(prices.body.security_prices[0]).sort()).toEqual(
    ["id", "date", "price", "price_amount", "currency", "provisional", "security", "created_at", "updated_at"].sort(),
  );
  expect(prices.body.security_prices[0].security).toEqual({ id: aapl.id, ticker: "AAPL", name: "AAPL", exchange_operating_mic: "XNAS" });
  expect((await cli.get(`/security_prices/${prices.body.security_prices[0].id}`)).body).toEqual(prices.body.security_prices[0]);
  // A family that neither holds nor trades AAPL sees none of its prices.
  const stranger = apiKeyClient(`${app.url}/api/v1`, other.key);
  expect((await stranger.get(`/security_prices/${prices.body.security_prices[0].id}`)).status).toBe(404);
  expect((await stranger.get(`/security_prices?security_id=${aapl.id}`)).body.security_prices).toEqual([]);
  expect((await cli.get(`/security_prices?start_date=2024-13-01`)).status).toBe(422);
  // `security-prices list --currency USD --provisional false` with paging, as sure-cli sends every flag.
  const flagged = await cli.get(
    `/security_prices?currency=usd&page=1&per_page=25&provisional=false&security_id=${aapl.id}&start_date=${day(-9)}`,
  );
  expect(flagged.body.security_prices).toEqual(prices.body.security_prices);
  expect((await cli.get(`/security_prices?provisional=true&security_id=${aapl.id}`)).body.security_prices).toEqual([]);
  expect((await cli.get(`/security_prices?provisional=perhaps`)).status).toBe(422);

  const holdings = await cli.get(`/holdings?account_id=${brokerage.id}&security_id=${aapl.id}&date=${day(-2)}`);
  expect(holdings.body.holdings).toHaveLength(1);
  expect(holdings.body.holdings[0]).toMatchObject({
    qty: "6.0",
    price: "$180.13",
    amount: "$1,080.75",
    cost_basis_source: "calculated",
    avg_cost: "$150.25",
    security: { id: aapl.id, ticker: "AAPL" },
  });
  // As upstream's forward calculator stores them: a holding of every day from the first trade (day −30) to today,
  // oldest first as upstream's controller orders them (`chronological`), each with its own id; a row by id is that day's.
  const every = await cli.get(`/holdings?account_id=${brokerage.id}&security_id=${aapl.id}&per_page=100`);
  expect(every.body.pagination).toMatchObject({ total_count: 31, total_pages: 1 });
  expect(every.body.holdings.map((row: { date: string }) => row.date)).toEqual(Array.from({ length: 31 }, (_, n) => day(n - 30)));
  expect(new Set(every.body.holdings.map((row: { id: string }) => row.id)).size).toBe(31);
  expect(every.body.holdings[28]).toEqual(holdings.body.holdings[0]);
  // Each day valued as upstream's calculator values it: at the price of the newest day on or before it that has one,
  // stored or a trade's (a stored one first on a day with both): the buy's 150.25 from day −30, the stored 155 from
  // day −12, the sell's 160 from day −10 (newer than 155), the stored 170 from day −8 and 180.125 from day −2.
  expect(every.body.holdings.map((row: { qty: string; price: string }) => [row.qty, row.price]).slice(-14)).toEqual([
    ["10.0", "$150.25"],
    ...Array.from({ length: 2 }, () => ["10.0", "$155.00"]),
    ...Array.from({ length: 11 }, (_, n) => ["6.0", n < 2 ? "$160.00" : n < 8 ? "$170.00" : "$180.13"]),
  ]);
  expect((await cli.get(`/holdings/${holdings.body.holdings[0].id}`)).body).toEqual(holdings.body.holdings[0]);
  expect((await cli.get(`/holdings/${every.body.holdings[0].id}`)).body).toEqual(every.body.holdings[0]);
  // As upstream: a malformed id, or another family's holding, is a 404.
  for (const [client, id] of [
    [cli, "not-a-uuid"],
    [cli, "00000000-0000-0000-0000-000000000000"],
    [stranger, every.body.holdings[30].id],
  ] as const) {
    const missing = await client.get(`/holdings/${id}`);
    expect([missing.status, missing.body.error]).toEqual([404, "not_found"]);
  }
  expect((await cli.get(`/holdings?account_id=${brokerage.id}&security_id=${aapl.id}&start_date=${day(1)}`)).body.holdings).toEqual([]);
  // sure-cli `holdings list --account-ids …` sends them as repeated `account_ids[]`, with paging.
  const repeated = await cli.get(
    `/holdings?account_ids%5B%5D=${brokerage.id}&account_ids%5B%5D=${checking.id}&page=2&per_page=25&security_id=${aapl.id}`,
  );
  expect(repeated.body.holdings).toEqual(every.body.holdings.slice(25));
  expect(repeated.body.pagination).toEqual({ page: 2, per_page: 25, total_count: 31, total_pages: 2 });
  const [account] = await sql<{ balance: string }>(`SELECT balance FROM accounts WHERE id = $1`, [brokerage.id]);
  expect(account.balance).toBe((8334.5 + 1080.75 + 802).toFixed(4));
  // `balances list`: the newest day (the 180.125 price) splits the same balance into cash and holdings.
  const [newest] = (await cli.get(`/balances?account_id=${brokerage.id}&page=1&per_page=1`)).body.balances;
  expect([newest.date, newest.end_cash_balance_cents, newest.end_non_cash_balance_cents, newest.end_balance_cents]).toEqual([
    day(-2),
    833_450,
    Math.round((1080.75 + 802) * 100),
    Math.round((8334.5 + 1080.75 + 802) * 100),
  ]);
});

test("hostile trade values are 4xx, never 500: an overflowing quantity or price, a malformed ticker or MIC, a far date", async () => {
  const base = { account_id: brokerage.id, date: day(-1), type: "buy", qty: "1", price: "1", ticker: "ZZZ" };
  for (const trade of [
    { ...base, qty: "1e30" },
    { ...base, price: "99999999999999999999999" },
    { ...base, fee: "-1" },
    { ...base, ticker: "DROP TABLE" },
    { ...base, ticker: "AAPL|NASDAQ" },
    { ...base, ticker: "X".repeat(40) },
    { ...base, date: "0000-01-01" },
    { ...base, qty: "abc" },
    { ...base, currency: "EUR" },
    { ...base, security_id: "not-a-uuid", ticker: undefined },
  ]) {
    const response = await cli.post("/trades", { trade });
    expect([JSON.stringify(trade), response.status >= 400 && response.status < 500]).toEqual([JSON.stringify(trade), true]);
  }
});

test("a brokerage account's positions and day values go with the account, and no other account's", async () => {
  const doomed = await createAccount(app.runtime.services, family, { name: "Closed brokerage", accountType: "investment", balance: "100" });
  const bought = await cli.post("/trades", {
    trade: { account_id: doomed.id, date: day(-4), type: "buy", qty: "1", price: "10", ticker: "AAPL|XNAS" },
  });
  expect(bought.status).toBe(201);
  const stored = async (accountId: string) =>
    (
      await sql<{ positions: number; days: number }>(
        `SELECT (SELECT count(*)::int FROM positions WHERE account_id = $1) AS positions,
                (SELECT count(*)::int FROM portfolio_days WHERE account_id = $1) AS days`,
        [accountId],
      )
    )[0];
  const kept = await stored(brokerage.id);
  expect((await stored(doomed.id)).positions).toBeGreaterThan(0);
  expect((await stored(doomed.id)).days).toBeGreaterThan(0);
  await graphqlClient(app, family.key).ok(`mutation($id: ID!) { deleteAccount(id: $id) { id } }`, { id: doomed.id });
  expect(await stored(doomed.id)).toEqual({ positions: 0, days: 0 });
  expect(await stored(brokerage.id)).toEqual(kept);
  expect(kept.positions).toBeGreaterThan(0);
});

test("create_trade's cash types as the MCP server sends them: a dividend, interest and a fee move cash only; sweep_in buys; deposit and withdrawal make a transaction or a transfer", async () => {
  const account = await createAccount(app.runtime.services, family, { name: "Cash trades", accountType: "investment", balance: "1000" });
  const post = (trade: Record<string, unknown>) =>
    mcp.post("/api/v1/trades", pythonJson({ trade: { account_id: account.id, date: day(-5), ...trade } }));
  const bought = await post({ type: "buy", ticker: "VTI", qty: 2, price: 100 });
  expect(bought.status).toBe(201);
  const dividend = await post({ type: "dividend", ticker: "VTI", amount: 12.5 });
  expect(dividend.status).toBe(201);
  expect(dividend.body).toMatchObject({
    amount: "-$12.50",
    qty: "0.0",
    price: "$0.00",
    name: "Dividend: VTI",
    investment_activity_label: "Dividend",
    security: { id: bought.body.security.id, ticker: "VTI" },
  });
  const interest = await post({ type: "interest", amount: 3 });
  expect(interest.status).toBe(201);
  expect(interest.body).toMatchObject({ amount: "-$3.00", qty: "0.0", name: "Interest", investment_activity_label: "Interest" });
  expect(interest.body.security.ticker).toBe(`CASH-${account.id}`.toUpperCase());
  const fee = await post({ type: "fee", amount: 1.25 });
  expect(fee.status).toBe(201);
  expect(fee.body).toMatchObject({ amount: "$1.25", name: "Fee", security: { id: interest.body.security.id } });
  const sweep = await post({ type: "sweep_in", ticker: "SPAXX", qty: 5, price: 1 });
  expect(sweep.status).toBe(201);
  expect(sweep.body).toMatchObject({
    amount: "$5.00",
    qty: "5.0",
    name: "Sweep In 5.0 shares of SPAXX",
    investment_activity_label: "Sweep In",
  });

  // As upstream: a dividend names its security, every cash trade a positive amount; deposit and withdrawal are not trades here.
  expect((await post({ type: "dividend", amount: 1 })).body.errors).toEqual(["Provide security_id, ticker, or manual_ticker"]);
  expect((await post({ type: "interest" })).body.errors).toEqual(["amount must be present for interest"]);
  expect((await post({ type: "fee", amount: -2 })).body.errors).toEqual(["amount must be a valid positive number"]);
  // Deposit and withdrawal: upstream's transaction on the account (its transactions/show shape), or a transfer (transfers/show).
  const deposit = await post({ type: "deposit", amount: 50 });
  expect([deposit.status, deposit.body.name, deposit.body.account.id]).toEqual([201, "Deposit to Cash trades", account.id]);
  expect((await cli.get(`/transactions/${deposit.body.id}`)).body).toEqual(deposit.body);
  const withdrawal = await post({ type: "withdrawal", amount: 20, transfer_account_id: checking.id });
  expect(withdrawal.status).toBe(201);
  expect((await cli.get(`/transfers/${withdrawal.body.id}`)).body).toEqual(withdrawal.body);
  expect((await post({ type: "withdrawal" })).body.errors).toEqual(["amount must be present for deposit/withdrawal"]);
  // A cash trade's quantity cannot be re-derived; its amount can change.
  expect((await mcp.patch(`/api/v1/trades/${dividend.body.id}`, pythonJson({ trade: { qty: 1 } }))).status).toBe(422);
  expect((await mcp.patch(`/api/v1/trades/${dividend.body.id}`, pythonJson({ trade: { amount: -15 } }))).body.amount).toBe("-$15.00");

  // Cash by SQL: the opening balance less every trade's and transaction's amount; holdings: only what was bought (no cash security, no dividend position).
  const [figures] = await sql<{ expected: string; cash_balance: string; balance: string }>(
    `SELECT (1000 - (SELECT sum(amount) FROM trades WHERE account_id = $1)
                  - (SELECT sum(amount) FROM transactions WHERE account_id = $1))::numeric(19, 4)::text AS expected,
            cash_balance::text, balance::text
       FROM accounts WHERE id = $1`,
    [account.id],
  );
  expect(figures.cash_balance).toBe(figures.expected);
  expect(Number(figures.cash_balance)).toBe(1000 - 200 + 15 + 3 - 1.25 - 5 + 50 - 20);
  expect(Number(figures.balance)).toBe(Number(figures.cash_balance) + 2 * 100 + 5 * 1);
  // Today's holdings: what was bought, by ticker (no cash security, no dividend position); a row for each of the six days
  // since, oldest first as upstream lists them: today's are the last two.
  const listed = (await cli.get(`/holdings?account_id=${account.id}`)).body;
  expect(listed.pagination.total_count).toBe(12);
  expect(listed.holdings[0].date).toBe(day(-5));
  const holdings = listed.holdings.slice(-2);
  expect(holdings.map((holding: { date: string; security: { ticker: string } }) => [holding.date, holding.security.ticker])).toEqual([
    [day(0), "SPAXX"],
    [day(0), "VTI"],
  ]);
  for (const holding of holdings) expect([typeof holding.created_at, typeof holding.updated_at]).toEqual(["string", "string"]);
  expect((await cli.get(`/holdings/${holdings[0].id}`)).body).toEqual(holdings[0]);
});
