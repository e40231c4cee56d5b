import { seedDemo } from "../../src/app/cli/demo";
import { apiKeyClient } from "../helpers/http";
import { expectMatchesOracle } from "../helpers/ledger-oracle";
import { startTestApp, type TestApp } from "../helpers/test-app";
import type { TestUser } from "../helpers/fixtures";

/**
 * sure-cli's `balances` and `valuations` commands and the MCP server's account tools, replayed on the
 * demo family as the clients send them (sure-cli: X-Api-Key, Accept: application/json, query keys
 * only when their flags are given, writes as `{"valuation": {…}}` with `upsert` at the top level).
 */
/** The fields of upstream's balance and valuation partials (app/views/api/v1/{balances,valuations}/_*.json.jbuilder at 0252787). */
const FIGURES = ["balance", "cash_balance", "start_cash_balance", "start_non_cash_balance", "start_balance", "cash_inflows"];
FIGURES.push("cash_outflows", "non_cash_inflows", "non_cash_outflows", "net_market_flows", "cash_adjustments");
FIGURES.push("non_cash_adjustments", "end_cash_balance", "end_non_cash_balance", "end_balance");
const UPSTREAM_BALANCE_KEYS = ["id", "date", "currency", "flows_factor", "account", "created_at", "updated_at"];
UPSTREAM_BALANCE_KEYS.push(...FIGURES, ...FIGURES.map((figure) => `${figure}_cents`));
UPSTREAM_BALANCE_KEYS.sort();
const UPSTREAM_VALUATION_KEYS = ["id", "date", "amount", "currency", "notes", "kind", "account", "created_at", "updated_at"].sort();

let app: TestApp;
let cli: ReturnType<typeof apiKeyClient>;
let family: TestUser;
let checking: Record<string, any>;

beforeAll(async () => {
  app = await startTestApp();
  const demo = await seedDemo(app.runtime.sequelize, app.runtime.services);
  cli = apiKeyClient(`${app.url}/api/v1`, demo.api_key);
  family = { familyId: demo.family_id, key: demo.api_key } as TestUser;
  checking = (await cli.get("/accounts")).body.accounts.find((account: Record<string, any>) => account.name === "Everyday Checking");
  // The demo family is seeded first: seconds on an idle machine, more on a busy one.
}, 120_000);
afterAll(() => app.stop());

test("the demo family's balances are its ledger's: accounts, balance sheet and every /balances row equal the SQL oracle", async () => {
  await expectMatchesOracle(app, family);
});

test("sure-cli `balances list --account-id … --start-date …` and `balances show <id>`", async () => {
  const start = new Date(Date.now() - 60 * 86_400_000).toISOString().slice(0, 10);
  const list = await cli.get(`/balances?account_id=${checking.id}&start_date=${start}`);
  expect(list.status).toBe(200);
  expect(list.body.pagination).toMatchObject({ page: 1, per_page: 25 });
  const [newest] = list.body.balances;
  expect(newest).toMatchObject({
    currency: "USD",
    flows_factor: 1,
    account: { id: checking.id, name: "Everyday Checking", account_type: "depository" },
  });
  expect(newest.end_balance_cents).toBe(checking.balance_cents);
  expect(Object.keys(newest).sort()).toEqual(UPSTREAM_BALANCE_KEYS);
  expect(Object.keys(newest.account).sort()).toEqual(["account_type", "id", "name"]);
  expect(list.body.balances.every((row: Record<string, any>) => row.date >= start)).toBe(true);
  expect((await cli.get(`/balances/${newest.id}`)).body).toEqual(newest);
  expect((await cli.get("/balances?account_id=checking")).status).toBe(422);
});

test("a client's $1,000.00 expense moves GET /accounts (MCP get_accounts, sure-cli `status`) at once; deleting it moves it back", async () => {
  const before = checking.balance_cents;
  const created = await cli.post("/transactions", {
    transaction: { account_id: checking.id, date: new Date().toISOString().slice(0, 10), amount: 1000, name: "Laptop", nature: "expense" },
  });
  expect(created.status).toBe(201);
  const after = (await cli.get("/accounts")).body.accounts.find((account: Record<string, any>) => account.id === checking.id);
  expect(after.balance_cents).toBe(before - 100000);
  await expectMatchesOracle(app, family);
  await cli.delete(`/transactions/${created.body.id}`);
  expect((await cli.get(`/accounts/${checking.id}`)).body.balance_cents).toBe(before);
});

test("sure-cli `valuations list`, `create --upsert --apply`, `update --apply` and `show`", async () => {
  const listed = await cli.get(`/valuations?account_id=${checking.id}`);
  expect(listed.body.valuations.map((v: Record<string, any>) => v.kind)).toEqual(["opening_anchor"]);

  const date = new Date(Date.now() - 5 * 86_400_000).toISOString().slice(0, 10);
  const payload = { valuation: { account_id: checking.id, amount: "123.45", date }, upsert: true };
  const created = await cli.post("/valuations", payload);
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ date, amount: "$123.45", currency: "USD", kind: "reconciliation", notes: null });
  expect(Object.keys(created.body).sort()).toEqual(UPSTREAM_VALUATION_KEYS);
  expect(created.body.account).toEqual({ id: checking.id, name: "Everyday Checking", account_type: "depository" });
  expect(Object.keys(listed.body).sort()).toEqual(["pagination", "valuations"]);
  expect(Object.keys(listed.body.pagination).sort()).toEqual(["page", "per_page", "total_count", "total_pages"]);
  const again = await cli.post("/valuations", { ...payload, valuation: { ...payload.valuation, amount: "150.00" } });
  expect([again.status, again.body.id, again.body.amount]).toEqual([200, created.body.id, "$150.00"]);

  const notes = await cli.patch(`/valuations/${created.body.id}`, { valuation: { notes: "Counted at the branch" } });
  expect(notes.body).toMatchObject({ amount: "$150.00", notes: "Counted at the branch" });
  const moved = await cli.patch(`/valuations/${created.body.id}`, { valuation: { amount: "175.00", date } });
  expect(moved.body.amount).toBe("$175.00");
  expect((await cli.get(`/valuations/${created.body.id}`)).body).toEqual(moved.body);

  const [row] = (await cli.get(`/balances?account_id=${checking.id}&start_date=${date}&end_date=${date}`)).body.balances;
  expect(row.end_balance).toBe("$175.00");
  const account = (await cli.get(`/accounts/${checking.id}`)).body;
  const sinceThen = (await cli.get(`/balances?account_id=${checking.id}&start_date=${date}`)).body.balances[0];
  expect(account.balance_cents).toBe(sinceThen.end_balance_cents);
  await expectMatchesOracle(app, family);
});
