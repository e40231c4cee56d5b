import { randomUUID } from "node:crypto";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * Accounts, categories and tags as upstream's clients call them: sure-cli (`accounts`, `status`,
 * `categories --roots-only --parent-id`, `tags`, `propose rules --apply`) and the MCP server's tools
 * (get_accounts, get_categories, create_category, get_tags, create_tag, delete_tag). Each test sends
 * the request those clients send (headers, query keys, body) and checks the keys they read.
 */

let app: TestApp;
let user: TestUser;
let api: ReturnType<typeof apiKeyClient>;
let reader: ReturnType<typeof apiKeyClient>;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** sure-cli's resty client: Accept: application/json and X-Api-Key on every request. */
const cliHeaders = { accept: "application/json" };

beforeAll(async () => {
  app = await startTestApp();
  user = await createUser(app.runtime.services);
  api = apiKeyClient(`${app.url}/api/v1`, user.key);
  reader = apiKeyClient(`${app.url}/api/v1`, user.readKey);
});
afterAll(() => app.stop());

describe("GET /api/v1/accounts (sure-cli accounts/status, MCP get_accounts)", () => {
  let family: TestUser;
  let familyApi: ReturnType<typeof apiKeyClient>;
  beforeAll(async () => {
    family = await createUser(app.runtime.services);
    familyApi = apiKeyClient(`${app.url}/api/v1`, family.key);
    const services = app.runtime.services;
    await createAccount(services, family, { name: "savings", balance: "15000.5" });
    await createAccount(services, family, { name: "Amex", accountType: "credit_card", balance: "1234.56" });
    await createAccount(services, family, { name: "Yen wallet", currency: "JPY", balance: "7550" });
  });

  test("lists accounts by name with upstream's keys and pagination", async () => {
    const response = await familyApi.get("/accounts?page=1&per_page=2", cliHeaders);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(["accounts", "pagination"]);
    expect(response.body.pagination).toEqual({ page: 1, per_page: 2, total_count: 3, total_pages: 2 });
    const [amex, savings] = response.body.accounts;
    expect(amex).toEqual({
      id: expect.any(String),
      name: "Amex",
      balance: "$1,234.56",
      balance_cents: 123456,
      cash_balance: "$1,234.56",
      cash_balance_cents: 123456,
      currency: "USD",
      classification: "liability",
      account_type: "credit_card",
      status: "active",
      institution_name: null,
      created_at: expect.stringMatching(ISO_INSTANT),
      updated_at: expect.stringMatching(ISO_INSTANT),
    });
    expect(savings).toMatchObject({ name: "savings", balance: "$15,000.50", balance_cents: 1500050, classification: "asset" });
    const last = await familyApi.get("/accounts?page=2&per_page=2");
    expect(last.body.accounts.map((account: { name: string }) => account.name)).toEqual(["Yen wallet"]);
    expect(last.body.accounts[0]).toMatchObject({ balance: "¥7,550", balance_cents: 7550, currency: "JPY" });
  });

  test("the MCP server's bare call, and upstream's include_disabled, answer the whole list", async () => {
    const bare = await familyApi.get("/accounts");
    expect(bare.body.accounts).toHaveLength(3);
    expect(bare.body.pagination.per_page).toBe(25);
    expect((await familyApi.get("/accounts?include_disabled=true")).body.accounts).toHaveLength(3);
  });

  test("GET /accounts/{id} answers one account; another family's or a malformed id is 404", async () => {
    const [first] = (await familyApi.get("/accounts")).body.accounts;
    const one = await familyApi.get(`/accounts/${first.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(first);
    for (const id of [first.id, "not-a-uuid", randomUUID()]) {
      const response = await api.get(`/accounts/${id}`);
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: "not_found", message: "Account not found" });
    }
    expect((await api.get("/accounts")).body.accounts).toEqual([]);
  });

  test("a read-only key may list; no key is 401", async () => {
    expect((await reader.get("/accounts")).status).toBe(200);
    expect((await client(`${app.url}/api/v1`).get("/accounts")).status).toBe(401);
  });
});

describe("categories (sure-cli categories, MCP get_categories/get_category/create_category)", () => {
  let family: TestUser;
  let familyApi: ReturnType<typeof apiKeyClient>;
  let food: { id: string };
  beforeAll(async () => {
    family = await createUser(app.runtime.services);
    familyApi = apiKeyClient(`${app.url}/api/v1`, family.key);
  });

  test("POST /categories as create_category sends it: 201 with the category shape", async () => {
    const created = await familyApi.post("/categories", { category: { name: "Food", color: "#eb5429", icon: "utensils" } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: "Food",
      classification: "expense",
      color: "#eb5429",
      icon: "utensils",
      parent: null,
      subcategories_count: 0,
      created_at: expect.stringMatching(ISO_INSTANT),
      updated_at: expect.stringMatching(ISO_INSTANT),
    });
    food = created.body;
    const sub = await familyApi.post("/categories", { category: { name: "Groceries", parent_id: food.id } });
    expect(sub.status).toBe(201);
    expect(sub.body.parent).toEqual({ id: food.id, name: "Food" });
    await familyApi.post("/categories", { category: { name: "Restaurants", parent_id: food.id } });
    await familyApi.post("/categories", { category: { name: "Income" } });
  });

  test("a duplicate name, a foreign parent or a read-only key is refused", async () => {
    expect((await familyApi.post("/categories", { category: { name: "Food" } })).status).toBe(422);
    const foreignParent = await familyApi.post("/categories", { category: { name: "X", parent_id: randomUUID() } });
    expect(foreignParent.status).toBe(422);
    const readOnly = apiKeyClient(`${app.url}/api/v1`, family.readKey);
    const refused = await readOnly.post("/categories", { category: { name: "Nope" } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe("insufficient_scope");
  });

  test("GET /categories lists by name with pagination; roots_only and parent_id filter as upstream", async () => {
    const all = await familyApi.get("/categories", cliHeaders);
    expect(all.status).toBe(200);
    expect(all.body.categories.map((c: { name: string }) => c.name)).toEqual(["Food", "Groceries", "Income", "Restaurants"]);
    expect(all.body.pagination).toEqual({ page: 1, per_page: 25, total_count: 4, total_pages: 1 });
    expect(all.body.categories[0].subcategories_count).toBe(2);
    const roots = await familyApi.get("/categories?page=1&per_page=10&roots_only=true");
    expect(roots.body.categories.map((c: { name: string }) => c.name)).toEqual(["Food", "Income"]);
    const children = await familyApi.get(`/categories?parent_id=${food.id}`);
    expect(children.body.categories.map((c: { name: string }) => c.name)).toEqual(["Groceries", "Restaurants"]);
    expect((await familyApi.get("/categories?roots_only=false")).body.categories).toHaveLength(4);
    expect((await familyApi.get("/categories?parent_id=nope")).status).toBe(422);
    expect((await api.get(`/categories?parent_id=${food.id}`)).body.categories).toEqual([]);
  });

  test("GET /categories/{id} answers one; another family's is 404", async () => {
    const one = await familyApi.get(`/categories/${food.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: food.id, name: "Food", subcategories_count: 2, parent: null });
    expect((await api.get(`/categories/${food.id}`)).status).toBe(404);
  });
});

describe("tags (sure-cli tags, MCP get_tags/create_tag/delete_tag)", () => {
  test("the list is a bare array ordered by name, as upstream; sure-cli's page/per_page are accepted", async () => {
    const family = await createUser(app.runtime.services);
    const familyApi = apiKeyClient(`${app.url}/api/v1`, family.key);
    for (const name of ["Travel", "essential", "Business"]) expect((await familyApi.post("/tags", { tag: { name } })).status).toBe(201);
    const list = await familyApi.get("/tags?page=1&per_page=25", cliHeaders);
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body.map((tag: { name: string }) => tag.name)).toEqual(["Business", "essential", "Travel"]);
    expect(Object.keys(list.body[0]).sort()).toEqual(["color", "created_at", "id", "name", "updated_at"]);
  });

  test("create, show, update (PATCH and PUT), delete (204)", async () => {
    const created = await api.post("/tags", { tag: { name: "Holiday", color: "#3b82f6" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "Holiday", color: "#3b82f6" });
    const id = created.body.id;
    expect((await api.get(`/tags/${id}`)).body).toEqual(created.body);
    const patched = await api.patch(`/tags/${id}`, { tag: { name: "Holidays" } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, name: "Holidays", color: "#3b82f6" });
    const put = await api.put(`/tags/${id}`, { tag: { color: "#e99537" } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ id, name: "Holidays", color: "#e99537" });
    const deleted = await api.delete(`/tags/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    expect((await api.get(`/tags/${id}`)).status).toBe(404);
  });

  test("a duplicate name is 422, a read-only key may read but not write, another family's tag is 404", async () => {
    await api.post("/tags", { tag: { name: "Dup" } });
    expect((await api.post("/tags", { tag: { name: "Dup" } })).status).toBe(422);
    expect((await reader.get("/tags")).status).toBe(200);
    expect((await reader.post("/tags", { tag: { name: "No" } })).status).toBe(403);
    const stranger = apiKeyClient(`${app.url}/api/v1`, (await createUser(app.runtime.services)).key);
    const mine = (await api.get("/tags")).body[0];
    expect((await stranger.get(`/tags/${mine.id}`)).status).toBe(404);
    expect((await stranger.delete(`/tags/${mine.id}`)).status).toBe(404);
  });
});

describe("PUT /api/v1/transactions/{id} (sure-cli propose rules --apply)", () => {
  test("PUT updates like PATCH", async () => {
    const account = await createAccount(app.runtime.services, user);
    const category = await app.runtime.services.categories.create(user.actor, { name: "Coffee" });
    const created = await api.post("/transactions", {
      transaction: { account_id: account.id, name: "Latte", amount: 4.2, date: "2024-05-01" },
    });
    const put = await api.put(`/transactions/${created.body.id}`, { transaction: { category_id: category.id } }, cliHeaders);
    expect(put.status).toBe(200);
    expect(put.body.category).toMatchObject({ id: category.id, name: "Coffee" });
    expect((await api.get(`/transactions/${created.body.id}`)).body.category.id).toBe(category.id);
    expect((await reader.put(`/transactions/${created.body.id}`, { transaction: { name: "x" } })).status).toBe(403);
  });
});

describe("GET /api/v1/transfers and /balance_sheet", () => {
  test("transfers list and show both legs; account_id matches either leg; status is upstream's", async () => {
    const family = await createUser(app.runtime.services, { currency: "USD" });
    const familyApi = apiKeyClient(`${app.url}/api/v1`, family.key);
    const services = app.runtime.services;
    const checking = await createAccount(services, family, { name: "Checking", balance: "1000" });
    const savings = await createAccount(services, family, { name: "Savings", balance: "5000" });
    const other = await createAccount(services, family, { name: "Other" });
    const made = await services.transactions.createTransfer(family.actor, {
      fromAccountId: checking.id,
      toAccountId: savings.id,
      date: "2024-06-01",
      amount: "250",
      notes: "monthly",
    });
    const list = await familyApi.get("/transfers?page=1&per_page=10");
    expect(list.status).toBe(200);
    expect(list.body.pagination).toEqual({ page: 1, per_page: 10, total_count: 1, total_pages: 1 });
    const [transfer] = list.body.transfers;
    expect(transfer).toEqual({
      id: made.id,
      status: "confirmed",
      date: "2024-06-01",
      amount: "$250.00",
      amount_cents: 25000,
      currency: "USD",
      notes: "monthly",
      inflow_transaction: expect.objectContaining({
        id: made.inflow.id,
        account: { id: savings.id, name: "Savings", account_type: "depository" },
      }),
      outflow_transaction: expect.objectContaining({
        id: made.outflow.id,
        amount: "$250.00",
        account: expect.objectContaining({ id: checking.id }),
      }),
      created_at: expect.stringMatching(ISO_INSTANT),
    });
    expect((await familyApi.get(`/transfers/${made.id}`)).body).toEqual(transfer);
    expect((await familyApi.get(`/transfers?account_id=${savings.id}`)).body.transfers).toHaveLength(1);
    expect((await familyApi.get(`/transfers?account_id=${other.id}`)).body.transfers).toEqual([]);
    expect((await familyApi.get("/transfers?start_date=2024-06-02")).body.transfers).toEqual([]);
    expect((await familyApi.get("/transfers?status=pending")).body.transfers).toEqual([]);
    expect((await familyApi.get("/transfers?status=confirmed")).body.transfers).toHaveLength(1);
    expect((await familyApi.get("/transfers?status=odd")).status).toBe(422);
    expect((await api.get(`/transfers/${made.id}`)).status).toBe(404);

    const sheet = await familyApi.get("/balance_sheet");
    expect(sheet.status).toBe(200);
    expect(sheet.body).toEqual({
      currency: "USD",
      net_worth: { amount: "6000", currency: "USD", formatted: "$6,000.00" },
      assets: { amount: "6000", currency: "USD", formatted: "$6,000.00" },
      liabilities: { amount: "0", currency: "USD", formatted: "$0.00" },
      // Ours beyond upstream's four keys: every account is in the totals, nothing needed converting.
      complete: true,
      conversions: [],
      unconverted_accounts: [],
      other_currencies: [],
    });
  });

  test("the balance sheet nets liabilities and totals other currencies apart", async () => {
    const family = await createUser(app.runtime.services, { currency: "USD" });
    const services = app.runtime.services;
    await createAccount(services, family, { name: "Checking", balance: "1000" });
    await createAccount(services, family, { name: "Card", accountType: "credit_card", balance: "300.5" });
    await createAccount(services, family, { name: "Konto", currency: "EUR", balance: "200" });
    const sheet = (await apiKeyClient(`${app.url}/api/v1`, family.key).get("/balance_sheet")).body;
    expect(sheet.net_worth).toEqual({ amount: "699.5", currency: "USD", formatted: "$699.50" });
    expect(sheet.liabilities.amount).toBe("300.5");
    expect(sheet.other_currencies).toEqual([
      {
        currency: "EUR",
        net_worth: { amount: "200", currency: "EUR", formatted: "€200.00" },
        assets: { amount: "200", currency: "EUR", formatted: "€200.00" },
        liabilities: { amount: "0", currency: "EUR", formatted: "€0.00" },
      },
    ]);
  });
});
