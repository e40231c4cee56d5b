/**
 * The transactions REST API (/api/v1/transactions) over real HTTP, against real PostgreSQL and Redis,
 * checked against the contract in docs/rest-compat.md: JSON shape, sign convention, currencies,
 * idempotent imports, validation and error bodies, filters and paging, updates, deletes, transfers,
 * verbatim text and API-key scopes.
 */
import { randomUUID } from "node:crypto";
import type { AccountRow } from "../../src/finance/accounts/account.repository";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, client, type HttpResponse } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

type Api = ReturnType<typeof apiKeyClient>;
type Json = Record<string, any>;
type Family = { user: TestUser; account: AccountRow; api: Api };

const TRANSACTION_KEYS = (
  "account amount amount_cents category classification created_at currency date " +
  "id merchant name notes pending signed_amount_cents tags transfer updated_at"
).split(" ");
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const WRITE_SCOPE_REQUIRED = { error: "insufficient_scope", message: "This action requires the 'write' scope" };

const services = () => app.runtime.services;

/** A user in a new family, with one account (USD "Checking" unless told) and a read_write REST client. */
async function newFamily(account: { name?: string; accountType?: string; currency?: string } = {}): Promise<Family> {
  const user = await createUser(services());
  return { user, account: await createAccount(services(), user, account), api: apiKeyClient(`${app.url}/api/v1`, user.key) };
}

/** POST /transactions for the family's account; `fields` override a valid $10 expense (undefined removes a field). */
function post(family: Family, fields: Json = {}, api: Api = family.api): Promise<HttpResponse> {
  return api.post("/transactions", {
    transaction: { account_id: family.account.id, date: "2024-01-15", amount: 10, name: "Coffee", ...fields },
  });
}

async function create(family: Family, fields: Json = {}): Promise<Json> {
  const response = await post(family, fields);
  expect(response.status).toBe(201);
  return response.body;
}

function patch(family: Family, id: string, fields: Json, api: Api = family.api): Promise<HttpResponse> {
  return api.patch(`/transactions/${id}`, { transaction: fields });
}

function list(family: Family, params: Record<string, string | string[]> = {}): Promise<HttpResponse> {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) for (const item of [value].flat()) query.append(key, item);
  return family.api.get(`/transactions?${query}`);
}

/** Names of the listed transactions, in the order served. */
async function names(family: Family, params: Record<string, string | string[]> = {}): Promise<string[]> {
  const response = await list(family, params);
  expect(response.status).toBe(200);
  return response.body.transactions.map((transaction: Json) => transaction.name);
}

async function countOf(family: Family): Promise<number> {
  const response = await list(family, { per_page: "1" });
  expect(response.status).toBe(200);
  return response.body.pagination.total_count;
}

/** The one REST error shape: `{error, message, errors?}`. */
function expectError(response: HttpResponse, status: number, error: string, extra: Json = {}): void {
  expect({ status: response.status, body: response.body }).toEqual({ status, body: { error, message: expect.any(String), ...extra } });
}

function expectInvalid(response: HttpResponse, ...errors: string[]): void {
  expectError(response, 422, "validation_failed", { errors });
}

// ---------------------------------------------------------------------------------------------
// Create
// ---------------------------------------------------------------------------------------------

describe("POST /api/v1/transactions", () => {
  let family: Family;
  beforeAll(async () => {
    family = await newFamily();
  });

  test("answers 201 with the full transaction, category, merchant and tags attached", async () => {
    const { actor } = family.user;
    const category = await services().categories.create(actor, {
      name: "Food & Drink",
      classification: "expense",
      color: "#eb5429",
      icon: "utensils",
    });
    const merchant = await services().merchants.create(actor, { name: "Whole Foods" });
    const travel = await services().tags.create(actor, { name: "Travel", color: "#4da568" });
    const essential = await services().tags.create(actor, { name: "Essential", color: "#e99537" });

    const response = await post(family, {
      amount: 75.5,
      name: "Groceries",
      notes: "weekly shop",
      category_id: category.id,
      merchant_id: merchant.id,
      tag_ids: [travel.id, essential.id],
    });

    expect(response.status).toBe(201);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      id: expect.stringMatching(UUID),
      date: "2024-01-15",
      amount: "$75.50",
      amount_cents: 7550,
      signed_amount_cents: -7550,
      currency: "USD",
      name: "Groceries",
      notes: "weekly shop",
      pending: false,
      classification: "expense",
      account: { id: family.account.id, name: "Checking", account_type: "depository" },
      category: { id: category.id, name: "Food & Drink", classification: "expense", color: "#eb5429", icon: "utensils" },
      merchant: { id: merchant.id, name: "Whole Foods" },
      tags: [
        { id: essential.id, name: "Essential", color: "#e99537" },
        { id: travel.id, name: "Travel", color: "#4da568" },
      ],
      transfer: null,
      created_at: expect.stringMatching(ISO_TIMESTAMP),
      updated_at: expect.stringMatching(ISO_TIMESTAMP),
    });
    const read = await family.api.get(`/transactions/${response.body.id}`);
    expect(read.body).toEqual(response.body);
  });

  test("always serves every key: absent objects are null and tags an empty array", async () => {
    const body = await create(family);
    expect(Object.keys(body).sort()).toEqual(TRANSACTION_KEYS);
    expect(body).toMatchObject({ notes: null, category: null, merchant: null, tags: [], transfer: null });
  });

  test("accepts the amount as a decimal string", async () => {
    expect(await create(family, { amount: "1234.5" })).toMatchObject({ amount: "$1,234.50", amount_cents: 123450 });
  });

  test("takes `description` as an alias of `name`", async () => {
    expect((await create(family, { name: undefined, description: "Bakery" })).name).toBe("Bakery");
  });
});

describe("sign convention", () => {
  let family: Family;
  beforeAll(async () => {
    family = await newFamily();
  });

  test.each([
    // nature, amount sent, formatted stored amount, classification, signed_amount_cents
    ["income", 2, "-$2.00", "income", 200],
    ["income", -2, "-$2.00", "income", 200],
    ["inflow", 2, "-$2.00", "income", 200],
    ["expense", -2, "$2.00", "expense", -200],
    ["expense", 2, "$2.00", "expense", -200],
    ["outflow", -2, "$2.00", "expense", -200],
    [undefined, -2, "-$2.00", "income", 200],
    [undefined, 2, "$2.00", "expense", -200],
  ])("nature %s with amount %d stores %s (%s)", async (nature, amount, formatted, classification, signed) => {
    const body = await create(family, { nature, amount });
    expect(body).toMatchObject({ amount: formatted, amount_cents: 200, classification, signed_amount_cents: signed });
  });

  test("an unknown nature is 422", async () => {
    expectInvalid(await post(family, { nature: "refund" }), "Nature must be one of income, inflow, expense, outflow");
  });
});

describe("currencies", () => {
  test("default to the account's currency", async () => {
    const family = await newFamily({ currency: "EUR" });
    expect(await create(family, { amount: 75.5 })).toMatchObject({ currency: "EUR", amount: "€75.50", amount_cents: 7550 });
  });

  test("are accepted in lower case and stored upper case", async () => {
    const family = await newFamily();
    expect(await create(family, { currency: "eur", amount: 3 })).toMatchObject({ currency: "EUR", amount: "€3.00" });
  });

  test("an unknown currency is 422", async () => {
    const family = await newFamily();
    expectInvalid(await post(family, { currency: "ABC" }), "Currency is not a valid ISO 4217 code");
  });

  test.each([
    // account currency, amount sent, formatted, minor units
    ["USD", 75.5, "$75.50", 7550],
    ["JPY", 7550, "¥7,550", 7550],
    ["KWD", 1.234, "KWD\u00a01.234", 1234], // Intl puts a no-break space after a currency code
  ])("minor units follow the currency: %s %d", async (currency, amount, formatted, cents) => {
    const family = await newFamily({ currency });
    expect(await create(family, { amount })).toMatchObject({
      currency,
      amount: formatted,
      amount_cents: cents,
      signed_amount_cents: -cents,
    });
  });
});

describe("idempotent imports by external_id", () => {
  test("a replay for the same account and source answers 200 with the existing transaction and writes nothing", async () => {
    const family = await newFamily();
    const first = await post(family, { external_id: "bank-1", source: "plaid", amount: 12 });
    expect(first.status).toBe(201);

    const replay = await post(family, { external_id: "bank-1", source: "plaid", amount: 99, name: "Changed" });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect(await countOf(family)).toBe(1);
  });

  test("another source, no source or another account creates a new transaction", async () => {
    const family = await newFamily();
    const savings = await createAccount(services(), family.user, { name: "Savings" });
    const first = await create(family, { external_id: "bank-1", source: "plaid" });

    const others = [
      await post(family, { external_id: "bank-1", source: "simplefin" }),
      await post(family, { external_id: "bank-1" }),
      await post(family, { external_id: "bank-1", source: "plaid", account_id: savings.id }),
    ];
    expect(others.map((response) => response.status)).toEqual([201, 201, 201]);
    expect(new Set([first.id, ...others.map((response) => response.body.id)]).size).toBe(4);
    expect(await countOf(family)).toBe(4);
  });

  test("a blank external_id is no key: every such POST creates a transaction", async () => {
    const family = await newFamily();
    const responses = [await post(family, { external_id: "" }), await post(family, { external_id: "" })];
    expect(responses.map((response) => response.status)).toEqual([201, 201]);
    expect(await countOf(family)).toBe(2);
  });
});

// ---------------------------------------------------------------------------------------------
// Request errors
// ---------------------------------------------------------------------------------------------

describe("validation (422)", () => {
  let family: Family;
  let stranger: Family;
  beforeAll(async () => {
    family = await newFamily();
    stranger = await newFamily();
  });
  afterEach(async () => {
    // A refused create writes nothing: the family never gets a transaction in this block.
    expect(await countOf(family)).toBe(0);
  });

  test.each([
    ["missing account_id", { account_id: undefined }, "Account can't be blank"],
    ["unknown account_id", { account_id: randomUUID() }, "Account not found"],
    ["malformed account_id", { account_id: "42" }, "Account not found"],
    ["unknown category_id", { category_id: randomUUID() }, "Category not found"],
    ["unknown merchant_id", { merchant_id: randomUUID() }, "Merchant not found"],
    ["unknown tag id", { tag_ids: [randomUUID()] }, "Tag not found"],
    ["malformed amount", { amount: "abc" }, "Amount must be a number"],
    ["missing amount", { amount: undefined }, "Amount can't be blank"],
    ["malformed date", { date: "2024-13-01" }, "Date is not a calendar date"],
    ["missing date", { date: undefined }, "Date can't be blank"],
    ["blank name", { name: "  " }, "Name can't be blank"],
    ["over-long name", { name: "x".repeat(501) }, "Name is too long (maximum is 500 characters)"],
  ])("%s", async (_case, fields, message) => {
    expectInvalid(await post(family, fields), message);
  });

  test("reports every problem at once", async () => {
    expectInvalid(
      await post(family, { name: "", nature: "sideways" }),
      "Name can't be blank",
      "Nature must be one of income, inflow, expense, outflow",
    );
  });

  test("another family's account, category, merchant or tag reads exactly as an unknown one", async () => {
    const { actor } = stranger.user;
    const category = await services().categories.create(actor, { name: "Theirs" });
    const merchant = await services().merchants.create(actor, { name: "Theirs" });
    const tag = await services().tags.create(actor, { name: "Theirs" });
    const cases: [Json, Json][] = [
      [{ account_id: stranger.account.id }, { account_id: randomUUID() }],
      [{ category_id: category.id }, { category_id: randomUUID() }],
      [{ merchant_id: merchant.id }, { merchant_id: randomUUID() }],
      [{ tag_ids: [tag.id] }, { tag_ids: [randomUUID()] }],
    ];
    for (const [foreign, unknown] of cases) {
      const [foreignResponse, unknownResponse] = [await post(family, foreign), await post(family, unknown)];
      expect(foreignResponse.status).toBe(422);
      expect(foreignResponse.body).toEqual(unknownResponse.body);
    }
    expect(await countOf(stranger)).toBe(0);
  });
});

describe("malformed requests (400, 413)", () => {
  let family: Family;
  beforeAll(async () => {
    family = await newFamily();
  });
  afterEach(async () => {
    expect(await countOf(family)).toBe(0);
  });
  const valid = () => ({ account_id: family.account.id, date: "2024-01-15", amount: 10, name: "Coffee" });

  test("a body that is not JSON", async () => {
    expectError(await family.api.post("/transactions", '{"transaction": {"name": '), 400, "bad_request");
  });

  test("a body without the `transaction` key", async () => {
    expectError(await family.api.post("/transactions", valid()), 400, "bad_request");
  });

  test.each([
    ["a string", "Coffee"],
    ["an array", [{}]],
    ["null", null],
    ["a number", 42],
  ])("`transaction` being %s", async (_case, value) => {
    expectError(await family.api.post("/transactions", { transaction: value }), 400, "bad_request");
  });

  test("a body that is not declared as JSON", async () => {
    const response = await family.api.post("/transactions", JSON.stringify({ transaction: valid() }), { "content-type": "text/plain" });
    expectError(response, 400, "bad_request");
  });

  test("a PATCH body that is not JSON", async () => {
    expectError(await family.api.patch(`/transactions/${randomUUID()}`, "{oops"), 400, "bad_request");
  });

  test("a body over 1 MB is 413", async () => {
    const response = await family.api.post("/transactions", { transaction: { ...valid(), notes: "x".repeat(1024 * 1024 + 1) } });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ error: expect.any(String), message: expect.any(String) });
  });
});

// ---------------------------------------------------------------------------------------------
// Read
// ---------------------------------------------------------------------------------------------

describe("GET /api/v1/transactions/{id}", () => {
  let family: Family;
  let stranger: Family;
  let transaction: Json;
  beforeAll(async () => {
    [family, stranger] = await Promise.all([newFamily(), newFamily()]);
    transaction = await create(family, { name: "Lunch" });
  });

  test("answers 200 with the transaction", async () => {
    const response = await family.api.get(`/transactions/${transaction.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(transaction);
  });

  test.each([
    ["an unknown id", randomUUID()],
    ["a malformed id", "not-a-uuid"],
    ["a malformed percent-encoding", "%E0%A4%A"],
  ])("%s is 404 not_found", async (_case, id) => {
    expectError(await family.api.get(`/transactions/${id}`), 404, "not_found");
  });

  test("another family's transaction is 404, exactly as an unknown one", async () => {
    const [theirs, unknown] = [
      await stranger.api.get(`/transactions/${transaction.id}`),
      await stranger.api.get(`/transactions/${randomUUID()}`),
    ];
    expectError(theirs, 404, "not_found");
    expect(theirs.body).toEqual(unknown.body);
  });
});

describe("GET /api/v1/transactions", () => {
  let family: Family;
  let savings: AccountRow;
  let food: { id: string };
  let wholeFoods: { id: string };
  let essential: { id: string };
  let travel: { id: string };
  const ALL_NEWEST_FIRST = [
    "Refund",
    "snakeXcase hat",
    "snake_case socks",
    "100 pure juice",
    "100% juice",
    "Pharmacy",
    "Flight",
    "Groceries",
    "Salary",
  ];

  beforeAll(async () => {
    family = await newFamily();
    const { actor } = family.user;
    savings = await createAccount(services(), family.user, { name: "Savings" });
    food = await services().categories.create(actor, { name: "Food" });
    wholeFoods = await services().merchants.create(actor, { name: "Whole Foods" });
    essential = await services().tags.create(actor, { name: "Essential" });
    travel = await services().tags.create(actor, { name: "Travel" });
    // Created out of date order, so "newest first" cannot come from insertion order.
    const fixtures: Json[] = [
      { date: "2024-01-20", name: "Pharmacy", amount: 20, tag_ids: [essential.id, travel.id] },
      { date: "2024-01-05", name: "Salary", amount: 3000, nature: "income" },
      { date: "2024-02-03", name: "Refund", amount: -100, account_id: savings.id },
      { date: "2024-01-10", name: "Groceries", amount: 75.5, category_id: food.id, merchant_id: wholeFoods.id, tag_ids: [essential.id] },
      { date: "2024-01-15", name: "Flight", amount: 420, account_id: savings.id, tag_ids: [travel.id], notes: "Trip to Lisbon" },
      { date: "2024-01-25", name: "100% juice", amount: 4.5, account_id: savings.id },
      { date: "2024-01-26", name: "100 pure juice", amount: 5, account_id: savings.id },
      { date: "2024-01-31", name: "snake_case socks", amount: 12 },
      { date: "2024-02-01", name: "snakeXcase hat", amount: 30 },
    ];
    for (const fields of fixtures) await create(family, fields);
  });

  test("lists newest first, each item in the transaction shape, with pagination", async () => {
    const response = await list(family);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(["pagination", "transactions"]);
    expect(response.body.transactions.map((transaction: Json) => transaction.name)).toEqual(ALL_NEWEST_FIRST);
    expect(response.body.pagination).toEqual({ page: 1, per_page: 25, total_count: 9, total_pages: 1 });
    const groceries = response.body.transactions.find((transaction: Json) => transaction.name === "Groceries");
    expect(groceries).toEqual((await family.api.get(`/transactions/${groceries.id}`)).body);
  });

  test("never shows another family's transactions", async () => {
    const stranger = await newFamily();
    expect(await names(stranger)).toEqual([]);
    expect(await names(stranger, { account_id: family.account.id })).toEqual([]);
  });

  test.each([
    ["account_id", () => ({ account_id: family.account.id }), ["snakeXcase hat", "snake_case socks", "Pharmacy", "Groceries", "Salary"]],
    ["category_id", () => ({ category_id: food.id }), ["Groceries"]],
    ["merchant_id", () => ({ merchant_id: wholeFoods.id }), ["Groceries"]],
    ["one tag_ids[]", () => ({ "tag_ids[]": [travel.id] }), ["Pharmacy", "Flight"]],
    ["repeated tag_ids[] (any of them)", () => ({ "tag_ids[]": [essential.id, travel.id] }), ["Pharmacy", "Flight", "Groceries"]],
    [
      "start_date and end_date, inclusive",
      () => ({ start_date: "2024-01-15", end_date: "2024-01-25" }),
      ["100% juice", "Pharmacy", "Flight"],
    ],
    [
      "min_amount and max_amount on the signed stored amount (as upstream), inclusive",
      () => ({ min_amount: "20", max_amount: "100" }),
      ["snakeXcase hat", "Pharmacy", "Groceries"],
    ],
    ["max_amount=0: income only (stored negative)", () => ({ max_amount: "0" }), ["Refund", "Salary"]],
    ["a negative min_amount reaches into income", () => ({ min_amount: "-150", max_amount: "-50" }), ["Refund"]],
    ["type=income", () => ({ type: "income" }), ["Refund", "Salary"]],
    ["type=expense", () => ({ type: "expense" }), ALL_NEWEST_FIRST.filter((name) => name !== "Refund" && name !== "Salary")],
    ["several filters together", () => ({ account_id: savings.id, type: "expense" }), ["100 pure juice", "100% juice", "Flight"]],
    ["search on name", () => ({ search: "juice" }), ["100 pure juice", "100% juice"]],
    ["search on notes", () => ({ search: "lisbon" }), ["Flight"]],
    ["search on merchant name", () => ({ search: "WHOLE" }), ["Groceries"]],
    ["search with a literal %", () => ({ search: "100%" }), ["100% juice"]],
    ["search with a literal _", () => ({ search: "e_c" }), ["snake_case socks"]],
  ])("filters by %s", async (_case, params, expected) => {
    expect(await names(family, params())).toEqual(expected);
  });

  test.each([
    ["a malformed account_id", { account_id: "not-a-uuid" }, "account_id is not a valid id"],
    ["an unknown type", { type: "transfer" }, "type must be income or expense"],
    ["a malformed min_amount", { min_amount: "abc" }, "Min amount must be a number"],
  ])("%s is 422", async (_case, params, message) => {
    expectInvalid(await list(family, params), message);
  });

  test.each([
    [
      "per_page=2 page=2",
      { per_page: "2", page: "2" },
      { page: 2, per_page: 2, total_count: 9, total_pages: 5 },
      ALL_NEWEST_FIRST.slice(2, 4),
    ],
    ["the last page", { per_page: "2", page: "5" }, { page: 5, per_page: 2, total_count: 9, total_pages: 5 }, ["Salary"]],
    ["a page past the end", { per_page: "2", page: "6" }, { page: 6, per_page: 2, total_count: 9, total_pages: 5 }, []],
    ["page=0", { page: "0", per_page: "3" }, { page: 1, per_page: 3, total_count: 9, total_pages: 3 }, ALL_NEWEST_FIRST.slice(0, 3)],
    ["page=-3", { page: "-3", per_page: "3" }, { page: 1, per_page: 3, total_count: 9, total_pages: 3 }, ALL_NEWEST_FIRST.slice(0, 3)],
    ["per_page=abc", { per_page: "abc" }, { page: 1, per_page: 25, total_count: 9, total_pages: 1 }, ALL_NEWEST_FIRST],
    ["per_page beyond 32 bits", { per_page: "99999999999" }, { page: 1, per_page: 25, total_count: 9, total_pages: 1 }, ALL_NEWEST_FIRST],
  ])("pages: %s", async (_case, params, pagination, expected) => {
    const response = await list(family, params);
    expect(response.status).toBe(200);
    expect(response.body.pagination).toEqual(pagination);
    expect(response.body.transactions.map((transaction: Json) => transaction.name)).toEqual(expected);
  });

  test("per_page up to 100 is taken, above it is upstream's default of 25", async () => {
    const big = await newFamily();
    const inputs = Array.from({ length: 105 }, (_, index) => ({
      accountId: big.account.id,
      date: "2024-03-01",
      amount: String(index + 1),
      name: `Item ${index + 1}`,
    }));
    for (let start = 0; start < inputs.length; start += 15) {
      await Promise.all(inputs.slice(start, start + 15).map((input) => services().transactions.create(big.user.actor, input)));
    }
    const full = await list(big, { per_page: "100" });
    expect(full.body.pagination).toEqual({ page: 1, per_page: 100, total_count: 105, total_pages: 2 });
    expect(full.body.transactions).toHaveLength(100);
    const response = await list(big, { per_page: "500" });
    expect(response.body.pagination).toEqual({ page: 1, per_page: 25, total_count: 105, total_pages: 5 });
    expect(response.body.transactions).toHaveLength(25);
  });
});

// ---------------------------------------------------------------------------------------------
// Update and delete
// ---------------------------------------------------------------------------------------------

describe("PATCH /api/v1/transactions/{id}", () => {
  let family: Family;
  beforeEach(async () => {
    family = await newFamily();
  });

  test("changes only the fields sent", async () => {
    const before = await create(family, { amount: 10, name: "Coffee", notes: "old" });
    const response = await patch(family, before.id, { notes: "flat white" });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...before, notes: "flat white", updated_at: expect.stringMatching(ISO_TIMESTAMP) });
    expect(Date.parse(response.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
    expect((await family.api.get(`/transactions/${before.id}`)).body).toEqual(response.body);
  });

  test("updates name (or description), date, amount, account and currency", async () => {
    const savings = await createAccount(services(), family.user, { name: "Savings" });
    const { id } = await create(family);
    const response = await patch(family, id, {
      description: "Espresso",
      date: "2024-02-29",
      amount: "3.25",
      account_id: savings.id,
      currency: "eur",
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      name: "Espresso",
      date: "2024-02-29",
      amount: "€3.25",
      amount_cents: 325,
      currency: "EUR",
      account: { id: savings.id, name: "Savings", account_type: "depository" },
    });
  });

  test("a nature alone flips the sign of the stored amount", async () => {
    const { id } = await create(family, { amount: 10 });
    expect((await patch(family, id, { nature: "income" })).body).toMatchObject({
      amount: "-$10.00",
      classification: "income",
      signed_amount_cents: 1000,
    });
    expect((await patch(family, id, { nature: "outflow" })).body).toMatchObject({
      amount: "$10.00",
      classification: "expense",
      signed_amount_cents: -1000,
    });
    expect((await patch(family, id, { amount: 4, nature: "inflow" })).body).toMatchObject({ amount: "-$4.00", classification: "income" });
  });

  test("tag_ids replaces the tags; category_id and merchant_id null clear them", async () => {
    const { actor } = family.user;
    const [a, b, c] = await Promise.all(["A", "B", "C"].map((name) => services().tags.create(actor, { name })));
    const category = await services().categories.create(actor, { name: "Food" });
    const merchant = await services().merchants.create(actor, { name: "Cafe" });
    const { id } = await create(family, { tag_ids: [a.id, b.id], category_id: category.id, merchant_id: merchant.id });

    const replaced = await patch(family, id, { tag_ids: [c.id] });
    expect(replaced.body.tags.map((tag: Json) => tag.id)).toEqual([c.id]);
    expect(replaced.body.category.id).toBe(category.id);

    const cleared = await patch(family, id, { tag_ids: [], category_id: null, merchant_id: null });
    expect(cleared.body).toMatchObject({ tags: [], category: null, merchant: null });
  });

  test("an unknown, malformed or another family's id is 404 and changes nothing", async () => {
    const stranger = await newFamily();
    const theirs = await create(stranger, { name: "Theirs" });
    expectError(await patch(family, randomUUID(), { name: "X" }), 404, "not_found");
    expectError(await patch(family, "not-a-uuid", { name: "X" }), 404, "not_found");
    expectError(await patch(family, theirs.id, { name: "X" }), 404, "not_found");
    expect((await stranger.api.get(`/transactions/${theirs.id}`)).body).toEqual(theirs);
  });

  test("moving an imported transaction into an account that already holds its external_id is 422", async () => {
    const savings = await createAccount(services(), family.user, { name: "Savings" });
    const before = await create(family, { external_id: "bank-1" });
    await create(family, { external_id: "bank-1", account_id: savings.id });
    expectInvalid(await patch(family, before.id, { account_id: savings.id }), "External id has already been imported into that account");
    expect((await family.api.get(`/transactions/${before.id}`)).body).toEqual(before);
  });

  test.each([
    ["a malformed amount", { amount: "abc" }, "Amount must be a number"],
    ["a null amount", { amount: null }, "Amount can't be blank"],
    ["a malformed date", { date: "2024-02-30" }, "Date is not a calendar date"],
    ["a blank name", { name: "" }, "Name can't be blank"],
    ["an unknown nature", { nature: "sideways" }, "Nature must be one of income, inflow, expense, outflow"],
    ["an unknown currency", { currency: "ABC" }, "Currency is not a valid ISO 4217 code"],
    ["an unknown account", { account_id: randomUUID() }, "Account not found"],
    ["an unknown category", { category_id: randomUUID() }, "Category not found"],
    ["an unknown tag", { tag_ids: [randomUUID()] }, "Tag not found"],
  ])("%s is 422 and writes nothing, not even the valid fields", async (_case, fields, message) => {
    const before = await create(family, { notes: "unchanged" });
    expectInvalid(await patch(family, before.id, { notes: "changed", ...fields }), message);
    expect((await family.api.get(`/transactions/${before.id}`)).body).toEqual(before);
  });
});

describe("DELETE /api/v1/transactions/{id}", () => {
  test("answers 200 with a message; the transaction is gone", async () => {
    const family = await newFamily();
    const { id } = await create(family);
    const response = await family.api.delete(`/transactions/${id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ message: "Transaction deleted successfully" });
    expectError(await family.api.get(`/transactions/${id}`), 404, "not_found");
    expect(await countOf(family)).toBe(0);
    expectError(await family.api.delete(`/transactions/${id}`), 404, "not_found");
  });

  test("another family's transaction is 404 and survives", async () => {
    const [family, stranger] = await Promise.all([newFamily(), newFamily()]);
    const theirs = await create(stranger);
    expectError(await family.api.delete(`/transactions/${theirs.id}`), 404, "not_found");
    expect((await stranger.api.get(`/transactions/${theirs.id}`)).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------
// Transfers
// ---------------------------------------------------------------------------------------------

describe("transfers", () => {
  const CREATE_TRANSFER = `mutation($input: TransferInput!) { createTransfer(input: $input) { id outflow { id } inflow { id } } }`;

  async function transfer(family: Family, input: Json): Promise<{ id: string; outflow: { id: string }; inflow: { id: string } }> {
    const response = await client(app.url, { "x-api-key": family.user.key }).graphql(CREATE_TRANSFER, {
      input: { date: "2024-01-15", ...input },
    });
    expect(response.body.errors).toBeUndefined();
    return response.body.data.createTransfer;
  }

  test("each leg shows the transfer with the absolute amount and the other account", async () => {
    const family = await newFamily();
    const card = await createAccount(services(), family.user, { name: "Visa", accountType: "credit_card" });
    const created = await transfer(family, { fromAccountId: family.account.id, toAccountId: card.id, amount: "250" });

    const outflow = (await family.api.get(`/transactions/${created.outflow.id}`)).body;
    expect(outflow).toMatchObject({ amount: "$250.00", classification: "expense", account: { id: family.account.id } });
    expect(outflow.transfer).toEqual({
      id: created.id,
      amount: "$250.00",
      currency: "USD",
      other_account: { id: card.id, name: "Visa", account_type: "credit_card" },
    });

    const inflow = (await family.api.get(`/transactions/${created.inflow.id}`)).body;
    expect(inflow).toMatchObject({ amount: "-$250.00", classification: "income", account: { id: card.id } });
    expect(inflow.transfer).toEqual({
      id: created.id,
      amount: "$250.00",
      currency: "USD",
      other_account: { id: family.account.id, name: "Checking", account_type: "depository" },
    });
  });

  test("across currencies each leg carries its own amount and currency", async () => {
    const family = await newFamily();
    const euros = await createAccount(services(), family.user, { name: "Euro account", currency: "EUR" });
    const created = await transfer(family, { fromAccountId: family.account.id, toAccountId: euros.id, amount: "100", toAmount: "92.5" });
    const inflow = (await family.api.get(`/transactions/${created.inflow.id}`)).body;
    expect(inflow.transfer).toMatchObject({ amount: "€92.50", currency: "EUR", other_account: { id: family.account.id } });
  });

  test("deleting one leg leaves the other, no longer a transfer", async () => {
    const family = await newFamily();
    const savings = await createAccount(services(), family.user, { name: "Savings" });
    const created = await transfer(family, { fromAccountId: family.account.id, toAccountId: savings.id, amount: "5" });
    expect((await family.api.delete(`/transactions/${created.outflow.id}`)).status).toBe(200);
    const inflow = await family.api.get(`/transactions/${created.inflow.id}`);
    expect(inflow.status).toBe(200);
    expect(inflow.body.transfer).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------
// Text is data
// ---------------------------------------------------------------------------------------------

describe("text is stored and returned verbatim", () => {
  let family: Family;
  beforeAll(async () => {
    family = await newFamily();
  });

  test.each([
    "Café ☕️ 🍕👩‍👩‍👧 family dinner",
    "مرحبا بالعالم",
    "家族の食費 가족 식비",
    "'; DROP TABLE transactions; --",
    "<script>alert('x')</script>",
    "%_\\",
  ])("%s", async (text) => {
    const created = await create(family, { name: text, notes: `${text}\n  second line  ` });
    expect(created).toMatchObject({ name: text, notes: `${text}\n  second line  ` });
    expect((await family.api.get(`/transactions/${created.id}`)).body).toEqual(created);
    expect(await names(family, { search: text })).toEqual([text]);
  });

  test("and the table is still there", async () => {
    expect(await countOf(family)).toBe(6);
  });

  test("a NUL character, which PostgreSQL text cannot hold, is 422 rather than silently changed", async () => {
    expectError(await post(family, { name: "bad\u0000name", notes: "x\u0000" }), 422, "validation_failed", {
      errors: ["Name must not contain NUL characters", "Notes must not contain NUL characters"],
    });
    // Nothing stored can contain NUL, so searching for one finds nothing (and is no server error).
    expect(await names(family, { search: "a\u0000b" })).toEqual([]);
    expect(await countOf(family)).toBe(6);
  });
});

// ---------------------------------------------------------------------------------------------
// Credentials and scopes
// ---------------------------------------------------------------------------------------------

describe("API key scopes", () => {
  let family: Family;
  let reader: Api;
  let existing: Json;
  beforeAll(async () => {
    family = await newFamily();
    reader = apiKeyClient(`${app.url}/api/v1`, family.user.readKey);
    existing = await create(family, { name: "Existing" });
  });
  afterEach(async () => {
    // Whatever the read key tried, the family still has exactly the one, unchanged, transaction.
    expect(await countOf(family)).toBe(1);
    expect((await family.api.get(`/transactions/${existing.id}`)).body).toEqual(existing);
  });

  test("a read key cannot create", async () => {
    const response = await post(family, {}, reader);
    expect({ status: response.status, body: response.body }).toEqual({ status: 403, body: WRITE_SCOPE_REQUIRED });
  });

  test("a read key cannot update", async () => {
    const response = await patch(family, existing.id, { name: "Hijacked" }, reader);
    expect({ status: response.status, body: response.body }).toEqual({ status: 403, body: WRITE_SCOPE_REQUIRED });
  });

  test("a read key cannot delete", async () => {
    const response = await reader.delete(`/transactions/${existing.id}`);
    expect({ status: response.status, body: response.body }).toEqual({ status: 403, body: WRITE_SCOPE_REQUIRED });
  });

  test("a read key can read one transaction and the list", async () => {
    expect((await reader.get(`/transactions/${existing.id}`)).body).toEqual(existing);
    expect((await reader.get("/transactions")).body.transactions).toEqual([existing]);
  });

  test("no key or a wrong key is 401", async () => {
    const unauthorized = { error: "unauthorized", message: "Access token or API key is invalid, expired, or missing" };
    for (const api of [client(`${app.url}/api/v1`), apiKeyClient(`${app.url}/api/v1`, "not-a-key")]) {
      const response = await api.post("/transactions", {
        transaction: { account_id: family.account.id, date: "2024-01-15", amount: 1, name: "X" },
      });
      expect({ status: response.status, body: response.body }).toEqual({ status: 401, body: unauthorized });
    }
  });
});
