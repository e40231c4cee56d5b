import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Kind, parse, type OperationDefinitionNode } from "graphql";
import { OPERATIONS_DIR } from "../../rest-adapter/operations";
import { routes } from "../../rest-adapter/routes";
import { knownQueryKeys } from "../../rest-adapter/variables";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * GET /api/v1/transactions filtered exactly as upstream's own clients send it (docs/sure-api-coverage.md):
 * sure-cli (Go, url.Values.Encode: `account_ids%5B%5D=…` repeated), the MCP server (httpx: the plain key
 * with one comma-joined value, `account_ids=a%2Cb`), and the singular keys combined with them. Query
 * strings are written out by hand so the test sends those bytes, not what a helper would encode.
 */

let app: TestApp;
let user: TestUser;
let api: ReturnType<typeof apiKeyClient>;
const ids: Record<string, string> = {};

beforeAll(async () => {
  app = await startTestApp();
  const services = app.runtime.services;
  user = await createUser(services);
  api = apiKeyClient(`${app.url}/api/v1`, user.key);
  ids.checking = (await createAccount(services, user, { name: "Checking" })).id;
  ids.savings = (await createAccount(services, user, { name: "Savings" })).id;
  ids.card = (await createAccount(services, user, { name: "Card", accountType: "credit_card" })).id;
  for (const name of ["Food", "Travel", "Interest"]) ids[name] = (await services.categories.create(user.actor, { name })).id;
  for (const name of ["Shop", "Airline"]) ids[name] = (await services.merchants.create(user.actor, { name })).id;
  ids.trip = (await services.tags.create(user.actor, { name: "Trip" })).id;
  const rows: Array<[string, string, string, string, string | null, string | null, string[]]> = [
    // name, date, amount (stored sign: + expense, - income), account, category, merchant, tags
    ["Bread", "2024-03-01", "4.50", ids.checking, ids.Food, ids.Shop, []],
    ["Flight", "2024-03-02", "320.00", ids.card, ids.Travel, ids.Airline, [ids.trip]],
    ["Hotel", "2024-03-03", "210.00", ids.card, ids.Travel, null, [ids.trip]],
    ["Interest", "2024-03-04", "-12.00", ids.savings, ids.Interest, null, []],
    ["Salary", "2024-03-05", "-2500.00", ids.checking, null, null, []],
    ["Snacks", "2024-03-06", "8.00", ids.savings, ids.Food, ids.Shop, [ids.trip]],
  ];
  for (const [name, date, amount, accountId, categoryId, merchantId, tagIds] of rows) {
    await services.transactions.create(user.actor, { name, date, amount, accountId, categoryId, merchantId, tagIds });
  }
});
afterAll(() => app.stop());

async function names(query: string): Promise<string[]> {
  const response = await api.get(`/transactions?${query}`);
  expect(response.status).toBe(200);
  return response.body.transactions.map((transaction: { name: string }) => transaction.name).sort();
}

const q = (template: string) => template.replace(/\{(\w+)\}/g, (_, key: string) => ids[key]);

describe("sure-cli's transaction filters (bracketed keys, repeated, percent-encoded)", () => {
  test.each([
    ["account_ids%5B%5D once", "account_ids%5B%5D={savings}", ["Interest", "Snacks"]],
    ["account_ids%5B%5D repeated", "account_ids%5B%5D={savings}&account_ids%5B%5D={card}", ["Flight", "Hotel", "Interest", "Snacks"]],
    ["category_ids%5B%5D repeated", "category_ids%5B%5D={Food}&category_ids%5B%5D={Interest}", ["Bread", "Interest", "Snacks"]],
    ["merchant_ids%5B%5D", "merchant_ids%5B%5D={Airline}", ["Flight"]],
    ["tag_ids%5B%5D", "tag_ids%5B%5D={trip}", ["Flight", "Hotel", "Snacks"]],
    ["unencoded brackets", "account_ids[]={checking}&category_ids[]={Food}", ["Bread"]],
    [
      "with paging, dates and search as `transactions list` sends them",
      "account_ids%5B%5D={card}&end_date=2024-03-02&page=1&per_page=50&search=fli&start_date=2024-03-01",
      ["Flight"],
    ],
  ])("%s", async (_case, query, expected) => {
    expect(await names(q(query))).toEqual(expected);
  });

  test("signed min_amount/max_amount as upstream: expenses are positive, income negative", async () => {
    expect(await names("min_amount=100")).toEqual(["Flight", "Hotel"]);
    expect(await names("max_amount=0")).toEqual(["Interest", "Salary"]);
    expect(await names("min_amount=-100&max_amount=5")).toEqual(["Bread", "Interest"]);
  });
});

describe("the MCP server's transaction filters (plain keys, one comma-joined value)", () => {
  test.each([
    ["one id", "account_ids={savings}", ["Interest", "Snacks"]],
    ["two ids joined with an encoded comma", "account_ids={savings}%2C{card}", ["Flight", "Hotel", "Interest", "Snacks"]],
    ["two ids joined with a raw comma and spaces", "category_ids={Food},%20{Travel}", ["Bread", "Flight", "Hotel", "Snacks"]],
    ["the plain key repeated", "merchant_ids={Shop}&merchant_ids={Airline}", ["Bread", "Flight", "Snacks"]],
    [
      "as get_transactions sends them",
      "per_page=100&start_date=2024-03-01&end_date=2024-03-31&account_ids={checking}&category_ids={Food}",
      ["Bread"],
    ],
  ])("%s", async (_case, query, expected) => {
    expect(await names(q(query))).toEqual(expected);
  });
});

describe("keys combined", () => {
  test("a singular key and a list both hold, as upstream applies both", async () => {
    expect(await names(q("account_id={savings}&account_ids%5B%5D={savings}&account_ids%5B%5D={card}"))).toEqual(["Interest", "Snacks"]);
    expect(await names(q("account_id={checking}&account_ids%5B%5D={card}"))).toEqual([]);
    expect(await names(q("category_id={Travel}&merchant_ids={Airline}"))).toEqual(["Flight"]);
  });

  test("plain and bracketed spellings of one key add up", async () => {
    expect(await names(q("account_ids={checking}&account_ids%5B%5D={card}"))).toEqual(["Bread", "Flight", "Hotel", "Salary"]);
  });

  test("an empty list value filters nothing out, as upstream's `present?`", async () => {
    expect(await names("account_ids=&category_ids%5B%5D=")).toHaveLength(6);
  });

  test("another family's ids match nothing", async () => {
    const stranger = await createUser(app.runtime.services);
    const theirs = apiKeyClient(`${app.url}/api/v1`, stranger.key);
    const response = await theirs.get(q("/transactions?account_ids={savings}%2C{card}"));
    expect(response.status).toBe(200);
    expect(response.body.transactions).toEqual([]);
  });
});

describe("bad filters are refused, never ignored", () => {
  test("a malformed id in a list is 422 naming the key", async () => {
    const response = await api.get(q("/transactions?account_ids%5B%5D={savings}&account_ids%5B%5D=nope"));
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ error: "validation_failed", errors: ["account_ids contains an invalid id"] });
  });

  test("more ids than a request may list is 422", async () => {
    const many = Array.from({ length: 201 }, () => ids.savings).join(",");
    const response = await api.get(`/transactions?category_ids=${many}`);
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual(["category_ids lists more than 200 ids"]);
  });

  test.each([
    ["a misspelt key", "acount_ids=x", ["acount_ids"]],
    ["a key upstream has but we do not filter by", "security_id=x&per_page=5", ["security_id"]],
    ["Rails' nested form", "filter%5Baccount_id%5D=x", ["filter[account_id]"]],
  ])("an unknown query key (%s) is 400 naming it and the keys the route takes", async (_case, query, unknown) => {
    const response = await api.get(`/transactions?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toBe("bad_request");
    expect(response.body.details).toEqual({ unknown_parameters: unknown });
    expect(response.body.message).toContain("account_ids");
  });
});

describe("the MCP server's merge_categories loop", () => {
  test("re-categorising page after page ends, and moves only the source category's transactions", async () => {
    const services = app.runtime.services;
    const family = await createUser(services);
    const client = apiKeyClient(`${app.url}/api/v1`, family.key);
    const account = await createAccount(services, family);
    const from = await services.categories.create(family.actor, { name: "Interest" });
    const into = await services.categories.create(family.actor, { name: "Income" });
    const other = await services.categories.create(family.actor, { name: "Groceries" });
    // More than one page of 100 in the source category, and others that must stay where they are.
    const create = (categoryId: string, count: number) =>
      Promise.all(
        Array.from({ length: count }, (_, i) =>
          services.transactions.create(family.actor, {
            accountId: account.id,
            name: `t${i}`,
            date: `2024-01-${String((i % 28) + 1).padStart(2, "0")}`,
            amount: String(i + 1),
            categoryId,
          }),
        ),
      );
    await create(from.id, 105);
    await create(other.id, 20);

    // The tool's loop: read page 1 of the source category, move each, stop at a short page (bounded here).
    let rounds = 0;
    let moved = 0;
    for (;;) {
      rounds += 1;
      if (rounds > 5) throw new Error("merge_categories did not end: the category filter is not applied");
      const page = await client.get(`/transactions?category_ids=${from.id}&per_page=100&page=1`);
      expect(page.status).toBe(200);
      const batch = page.body.transactions as Array<{ id: string; category: { id: string } }>;
      for (const transaction of batch) {
        expect(transaction.category.id).toBe(from.id);
        const patched = await client.patch(`/transactions/${transaction.id}`, { transaction: { category_id: into.id } });
        expect(patched.status).toBe(200);
        moved += 1;
      }
      if (batch.length < 100) break;
    }

    expect({ rounds, moved }).toEqual({ rounds: 2, moved: 105 });
    const count = async (categoryId: string) =>
      (await client.get(`/transactions?category_ids=${categoryId}&per_page=1`)).body.pagination.total_count;
    expect(await count(from.id)).toBe(0);
    expect(await count(into.id)).toBe(105);
    expect(await count(other.id)).toBe(20);
  }, 90_000);
});

describe("a list filter that names nothing is refused, on every route (issue 27)", () => {
  /** Every list key of every GET route, as the routes declare them (the bracketed spelling marks a list). */
  function listKeys(): Array<[string, string]> {
    const schema = app.runtime.schema!;
    return routes
      .filter((route) => route.method === "GET")
      .flatMap((route) => {
        const source = parse(fs.readFileSync(path.join(OPERATIONS_DIR, `${route.operation}.graphql`), "utf8"));
        const operation = source.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
        const params = Object.fromEntries([...route.path.matchAll(/\{(\w+)\}/g)].map((match) => [match[1], ""]));
        return knownQueryKeys(schema, operation, { params, queryKeys: route.queryKeys })
          .filter((key) => key.endsWith("[]"))
          .map((key): [string, string] => [route.path, key.slice(0, -2)]);
      });
  }

  test("`key=,,,`, `key[]=,` and `key= , ` answer 422 naming the key, instead of widening to every row", async () => {
    const cases = listKeys();
    expect(cases).toEqual(
      expect.arrayContaining([
        ["/transactions", "tag_ids"],
        ["/transactions", "account_ids"],
      ]),
    );
    for (const [routePath, key] of cases) {
      const url = routePath.replace(/\{\w+\}/g, randomUUID());
      for (const query of [`${key}=,,,`, `${key}%5B%5D=,`, `${key}=%20,%20`]) {
        const response = await api.get(`${url}?${query}`);
        expect({ url, query, status: response.status, body: response.body }).toEqual({
          url,
          query,
          status: 422,
          body: expect.objectContaining({
            error: "validation_failed",
            errors: [`${key} names no value: give at least one, or leave the key out`],
          }),
        });
      }
    }
    // A key left empty is simply not given, as for every key.
    expect(await names("tag_ids=")).toEqual(["Bread", "Flight", "Hotel", "Interest", "Salary", "Snacks"]);
  });
});
