/**
 * The GraphQL API over POST /graphql with X-Api-Key: identity, accounts, categories, tags, merchants,
 * transactions and transfers, API keys, and how errors reach clients (extensions.code, no stacks).
 */
import { createHash, randomUUID } from "node:crypto";
import { QueryTypes } from "sequelize";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, client, type HttpResponse } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

type Json = Record<string, any>;

let app: TestApp;
beforeAll(async () => {
  // `finance-gateway start` sets no NODE_ENV, so Apollo runs with its development defaults in
  // production. Start the app the same way, or error responses would look safer here than there.
  const nodeEnv = process.env.NODE_ENV;
  delete process.env.NODE_ENV;
  try {
    app = await startTestApp();
  } finally {
    process.env.NODE_ENV = nodeEnv;
  }
});
afterAll(() => app.stop());

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** A GraphQL client for one key (or none): `raw` returns the HTTP response, `ok` the data, `fail` the one error. */
function graphqlAs(key?: string) {
  const http = key ? apiKeyClient(app.url, key) : client(app.url);
  const raw = (query: string, variables?: Json): Promise<HttpResponse> => http.graphql(query, variables);
  return {
    raw,
    async ok(query: string, variables?: Json): Promise<Json> {
      const response = await raw(query, variables);
      expect(response.body.errors).toBeUndefined();
      expect(response.status).toBe(200);
      return response.body.data;
    },
    async fail(query: string, variables?: Json): Promise<Json> {
      const response = await raw(query, variables);
      expect(response.body.errors).toHaveLength(1);
      return response.body.errors[0];
    },
  };
}
type Gql = ReturnType<typeof graphqlAs>;

/** A user in a new family and a GraphQL client with their read_write key. */
async function newFamily(): Promise<{ user: TestUser; gql: Gql }> {
  const user = await createUser(app.runtime.services);
  return { user, gql: graphqlAs(user.key) };
}

const validationFailed = (...errors: string[]) => ({ extensions: expect.objectContaining({ code: "VALIDATION_FAILED", errors }) });
const notFound = (what: string) => ({ message: `${what} not found`, extensions: expect.objectContaining({ code: "NOT_FOUND" }) });

const CREATE_ACCOUNT = `mutation($input: AccountInput!) { createAccount(input: $input) { id name accountType classification currency balance } }`;
const CREATE_CATEGORY = `mutation($input: CategoryInput!) { createCategory(input: $input) { id name classification color icon parentId } }`;
const CREATE_TAG = `mutation($input: TagInput!) { createTag(input: $input) { id name color } }`;
const CREATE_MERCHANT = `mutation($input: MerchantInput!) { createMerchant(input: $input) { id name color logoUrl } }`;

const TRANSACTION_FIELDS = `
  id date amount formattedAmount amountCents signedAmountCents currency name notes classification pending externalId source
  account { id name accountType }
  category { id name }
  merchant { id name }
  tags { id name color }
  transfer { id amount formattedAmount currency otherAccount { id name } }`;
const CREATE_TRANSACTION = `mutation($input: TransactionInput!) { createTransaction(input: $input) { created transaction { ${TRANSACTION_FIELDS} } } }`;
const GET_TRANSACTION = `query($id: ID!) { transaction(id: $id) { ${TRANSACTION_FIELDS} } }`;
const LIST_TRANSACTIONS = `query($filter: TransactionFilter, $page: Int, $perPage: Int) {
  transactions(filter: $filter, page: $page, perPage: $perPage) {
    items { ${TRANSACTION_FIELDS} }
    pagination { page perPage totalCount totalPages }
  }
}`;
const CREATE_TRANSFER = `mutation($input: TransferInput!) {
  createTransfer(input: $input) { id outflow { ${TRANSACTION_FIELDS} } inflow { ${TRANSACTION_FIELDS} } }
}`;

async function createAccount(gql: Gql, input: Json = {}): Promise<Json> {
  return (await gql.ok(CREATE_ACCOUNT, { input: { name: "Checking", accountType: "depository", ...input } })).createAccount;
}

async function createTransaction(gql: Gql, input: Json): Promise<Json> {
  return (await gql.ok(CREATE_TRANSACTION, { input: { date: "2024-01-15", amount: "10", name: "Coffee", ...input } })).createTransaction
    .transaction;
}

// ---------------------------------------------------------------------------------------------
// Access and errors
// ---------------------------------------------------------------------------------------------

describe("access", () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await createUser(app.runtime.services);
  });

  test("without a key, every field answers UNAUTHENTICATED", async () => {
    const response = await graphqlAs().raw("{ me { id } }");
    expect(response.body.data).toBeNull();
    expect(response.body.errors).toEqual([
      expect.objectContaining({
        message: "Access token or API key is invalid, expired, or missing",
        path: ["me"],
        extensions: expect.objectContaining({ code: "UNAUTHENTICATED" }),
      }),
    ]);
  });

  test("a wrong key is refused with 401 before anything runs", async () => {
    const response = await graphqlAs("fgk_not-a-real-key").raw("{ me { id } }");
    expect(response.status).toBe(401);
    expect(response.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: "UNAUTHENTICATED" }) })]);
  });

  test("a read key can query, but a mutation answers FORBIDDEN and changes nothing", async () => {
    const reader = graphqlAs(user.readKey);
    expect((await reader.ok("{ me { id } }")).me.id).toBe(user.userId);

    const error = await reader.fail(CREATE_TAG, { input: { name: "Nope" } });
    expect(error).toMatchObject({
      message: "This action requires the 'write' scope",
      extensions: { code: "FORBIDDEN", restError: "insufficient_scope" },
    });
    expect((await reader.ok("{ tags { id } }")).tags).toEqual([]);
  });

  test("introspection works without a key", async () => {
    const data = await graphqlAs().ok(
      `{ __schema { queryType { name } mutationType { name } } __type(name: "Transaction") { fields { name } } }`,
    );
    expect(data.__schema).toEqual({ queryType: { name: "Query" }, mutationType: { name: "Mutation" } });
    expect(data.__type.fields.map((field: Json) => field.name)).toEqual(
      expect.arrayContaining(["account", "category", "merchant", "tags", "transfer"]),
    );
  });
});

describe("errors never leak internals", () => {
  let gql: Gql;
  beforeAll(async () => {
    ({ gql } = await newFamily());
  });

  test("an unexpected failure is a bare INTERNAL_SERVER_ERROR: no stack, no SQL", async () => {
    // A real database failure, not a mock: the table the query reads is briefly missing.
    await app.runtime.sequelize.query("ALTER TABLE tags RENAME TO tags_hidden_by_test");
    let response: HttpResponse;
    try {
      response = await gql.raw("{ tags { id } }");
    } finally {
      await app.runtime.sequelize.query("ALTER TABLE tags_hidden_by_test RENAME TO tags");
    }
    expect(response.body).toEqual({
      data: null,
      errors: [{ message: "Internal server error", path: ["tags"], extensions: { code: "INTERNAL_SERVER_ERROR" } }],
    });
    expect(response.text).not.toMatch(/tags_hidden_by_test|relation|SELECT|Sequelize/i);
  });

  test.each([
    ["a syntax error", "{ me { id ", undefined, "GRAPHQL_PARSE_FAILED"],
    ["an unknown field", "{ me { password } }", undefined, "GRAPHQL_VALIDATION_FAILED"],
    [
      "a variable its scalar rejects",
      "query($d: Date) { transactions(filter: { startDate: $d }) { items { id } } }",
      { d: "2024-13-01" },
      "BAD_USER_INPUT",
    ],
  ])("%s says what is wrong, without a stack trace", async (_case, query, variables, code) => {
    const response = await gql.raw(query, variables);
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([expect.objectContaining({ message: expect.any(String), extensions: { code } })]);
    expect(response.text).not.toMatch(/stacktrace|node_modules|\/src\//);
  });
});

// ---------------------------------------------------------------------------------------------
// Identity and data
// ---------------------------------------------------------------------------------------------

describe("me", () => {
  test("is the user the key belongs to", async () => {
    const { user, gql } = await newFamily();
    const { me } = await gql.ok("{ me { id email familyId role name aiEnabled } }");
    expect(me).toEqual({ id: user.userId, email: user.email, familyId: user.familyId, role: "member", name: null, aiEnabled: false });
  });
});

describe("accounts", () => {
  let gql: Gql;
  beforeAll(async () => {
    ({ gql } = await newFamily());
  });

  test("are created in the family's currency unless told, classified by type, and listed by name", async () => {
    const savings = await createAccount(gql, { name: "savings", balance: "1200.50" });
    const card = await createAccount(gql, { name: "Amex", accountType: "credit_card", currency: "eur" });

    expect(savings).toMatchObject({ name: "savings", accountType: "depository", classification: "asset", currency: "USD" });
    expect(Number(savings.balance)).toBe(1200.5);
    expect(card).toMatchObject({ accountType: "credit_card", classification: "liability", currency: "EUR" });

    const { accounts } = await gql.ok("{ accounts { id } }");
    expect(accounts.map((account: Json) => account.id)).toEqual([card.id, savings.id]);
    expect((await gql.ok("query($id: ID!) { account(id: $id) { id name } }", { id: card.id })).account).toEqual({
      id: card.id,
      name: "Amex",
    });
  });

  test("are validated", async () => {
    const error = await gql.fail(CREATE_ACCOUNT, { input: { name: " ", accountType: "piggy_bank", currency: "XYZ" } });
    expect(error).toMatchObject(
      validationFailed(
        "Name can't be blank",
        "Account type must be one of depository, investment, crypto, property, vehicle, other_asset, credit_card, loan, other_liability",
        "Currency is not a valid ISO 4217 code",
      ),
    );
  });

  test("an unknown id is NOT_FOUND", async () => {
    expect(await gql.fail("query($id: ID!) { account(id: $id) { id } }", { id: randomUUID() })).toMatchObject(notFound("Account"));
  });

  test("are updated field by field; a new type brings its classification", async () => {
    const account = await createAccount(gql, { name: "Old", balance: "5" });
    const { updateAccount } = await gql.ok(
      `mutation($id: ID!, $input: AccountInput!) { updateAccount(id: $id, input: $input) { name accountType classification balance } }`,
      {
        id: account.id,
        input: { name: "Mortgage", accountType: "loan" },
      },
    );
    expect(updateAccount).toMatchObject({ name: "Mortgage", accountType: "loan", classification: "liability" });
    expect(Number(updateAccount.balance)).toBe(5);
  });

  test("deleting one deletes its transactions, and only its", async () => {
    const doomed = await createAccount(gql, { name: "Doomed" });
    const kept = await createAccount(gql, { name: "Kept" });
    const gone = await createTransaction(gql, { accountId: doomed.id });
    const stays = await createTransaction(gql, { accountId: kept.id });

    const { deleteAccount } = await gql.ok("mutation($id: ID!) { deleteAccount(id: $id) { id name } }", { id: doomed.id });
    expect(deleteAccount).toEqual({ id: doomed.id, name: "Doomed" });

    expect(await gql.fail("query($id: ID!) { account(id: $id) { id } }", { id: doomed.id })).toMatchObject(notFound("Account"));
    expect(await gql.fail(GET_TRANSACTION, { id: gone.id })).toMatchObject(notFound("Transaction"));
    expect((await gql.ok(GET_TRANSACTION, { id: stays.id })).transaction.id).toBe(stays.id);
    const remaining = (await gql.ok(LIST_TRANSACTIONS, { filter: { accountId: doomed.id } })).transactions;
    expect(remaining.pagination.totalCount).toBe(0);
  });
});

describe("categories", () => {
  let gql: Gql;
  beforeAll(async () => {
    ({ gql } = await newFamily());
  });
  const UPDATE = `mutation($id: ID!, $input: CategoryInput!) { updateCategory(id: $id, input: $input) { id name classification color icon parentId } }`;

  test("get defaults for what is left out", async () => {
    const { createCategory } = await gql.ok(CREATE_CATEGORY, { input: { name: "Misc" } });
    expect(createCategory).toMatchObject({ name: "Misc", classification: "expense", color: "#737373", icon: "shapes", parentId: null });
  });

  test("can be nested under a parent of the family", async () => {
    const parent = (await gql.ok(CREATE_CATEGORY, { input: { name: "Food", color: "#eb5429", icon: "utensils" } })).createCategory;
    const child = (await gql.ok(CREATE_CATEGORY, { input: { name: "Restaurants", parentId: parent.id } })).createCategory;
    expect(child.parentId).toBe(parent.id);
    expect(await gql.fail(UPDATE, { id: parent.id, input: { parentId: parent.id } })).toMatchObject(
      validationFailed("A category cannot be placed under itself"),
    );
    // Food → Restaurants → Food would be a cycle.
    expect(await gql.fail(UPDATE, { id: parent.id, input: { parentId: child.id } })).toMatchObject(
      validationFailed("A category cannot be placed under itself"),
    );
    expect(await gql.fail(CREATE_CATEGORY, { input: { name: "Orphan", parentId: randomUUID() } })).toMatchObject(
      validationFailed("Parent category not found"),
    );
  });

  test.each([
    ["a color that is not #RRGGBB", { name: "Bad color", color: "red" }, "Color must be a hex color like #1a2b3c"],
    [
      "an icon that is not a Lucide name",
      { name: "Bad icon", icon: "Shopping Cart" },
      "Icon must be a Lucide icon name like shopping-cart",
    ],
    ["an unknown classification", { name: "Bad class", classification: "transfer" }, "Classification must be income or expense"],
    ["a blank name", { name: "" }, "Name can't be blank"],
    ["no name at all", { color: "#123456" }, "Name can't be blank"],
  ])("%s is refused", async (_case, input, message) => {
    expect(await gql.fail(CREATE_CATEGORY, { input })).toMatchObject(validationFailed(message));
  });

  test("names are unique in the family, ignoring case", async () => {
    await gql.ok(CREATE_CATEGORY, { input: { name: "Travel" } });
    expect(await gql.fail(CREATE_CATEGORY, { input: { name: "TRAVEL" } })).toMatchObject(validationFailed("Name has already been taken"));
  });

  test("are updated and listed by name", async () => {
    const category = (await gql.ok(CREATE_CATEGORY, { input: { name: "aaa first" } })).createCategory;
    const { updateCategory } = await gql.ok(UPDATE, {
      id: category.id,
      input: { name: "Salary", classification: "income", icon: "briefcase" },
    });
    expect(updateCategory).toMatchObject({
      id: category.id,
      name: "Salary",
      classification: "income",
      icon: "briefcase",
      color: "#737373",
    });
    const names = (await gql.ok("{ categories { name } }")).categories.map((c: Json) => c.name);
    expect(names).toEqual([...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())));
    expect(names).toContain("Salary");
  });

  test("deleting one leaves its transactions uncategorised and its subcategories top-level", async () => {
    const account = await createAccount(gql);
    const parent = (await gql.ok(CREATE_CATEGORY, { input: { name: "Shopping" } })).createCategory;
    const child = (await gql.ok(CREATE_CATEGORY, { input: { name: "Clothes", parentId: parent.id } })).createCategory;
    const transaction = await createTransaction(gql, { accountId: account.id, categoryId: parent.id });

    const { deleteCategory } = await gql.ok("mutation($id: ID!) { deleteCategory(id: $id) { id } }", { id: parent.id });
    expect(deleteCategory.id).toBe(parent.id);

    expect((await gql.ok(GET_TRANSACTION, { id: transaction.id })).transaction.category).toBeNull();
    const categories = (await gql.ok("{ categories { id parentId } }")).categories;
    expect(categories).toContainEqual({ id: child.id, parentId: null });
    expect(categories.map((c: Json) => c.id)).not.toContain(parent.id);
  });
});

describe("tags", () => {
  let gql: Gql;
  beforeAll(async () => {
    ({ gql } = await newFamily());
  });

  test("are created with a default color, validated, updated, and unique by name", async () => {
    const tag = (await gql.ok(CREATE_TAG, { input: { name: "Essential" } })).createTag;
    expect(tag).toMatchObject({ name: "Essential", color: "#e99537" });

    expect(await gql.fail(CREATE_TAG, { input: { name: "Loud", color: "#GGGGGG" } })).toMatchObject(
      validationFailed("Color must be a hex color like #1a2b3c"),
    );
    expect(await gql.fail(CREATE_TAG, { input: { name: "essential" } })).toMatchObject(validationFailed("Name has already been taken"));

    const { updateTag } = await gql.ok(`mutation($id: ID!, $input: TagInput!) { updateTag(id: $id, input: $input) { id name color } }`, {
      id: tag.id,
      input: { color: "#00aa00" },
    });
    expect(updateTag).toEqual({ id: tag.id, name: "Essential", color: "#00aa00" });
  });

  test("deleting one removes it from every transaction", async () => {
    const account = await createAccount(gql);
    const keep = (await gql.ok(CREATE_TAG, { input: { name: "Keep" } })).createTag;
    const drop = (await gql.ok(CREATE_TAG, { input: { name: "Drop" } })).createTag;
    const transaction = await createTransaction(gql, { accountId: account.id, tagIds: [keep.id, drop.id] });
    expect(transaction.tags.map((t: Json) => t.name)).toEqual(["Drop", "Keep"]);

    await gql.ok("mutation($id: ID!) { deleteTag(id: $id) { id } }", { id: drop.id });

    expect((await gql.ok(GET_TRANSACTION, { id: transaction.id })).transaction.tags).toEqual([
      { id: keep.id, name: "Keep", color: "#e99537" },
    ]);
    expect((await gql.ok("{ tags { name } }")).tags.map((t: Json) => t.name)).not.toContain("Drop");
  });
});

describe("merchants", () => {
  test("are paged and ordered by name", async () => {
    const { gql } = await newFamily();
    for (const name of ["Cafe", "bakery", "Deli"]) await gql.ok(CREATE_MERCHANT, { input: { name } });

    const query = `query($page: Int, $perPage: Int) { merchants(page: $page, perPage: $perPage) { items { name } pagination { page perPage totalCount totalPages } } }`;
    const first = (await gql.ok(query, { perPage: 2 })).merchants;
    expect(first.items.map((m: Json) => m.name)).toEqual(["bakery", "Cafe"]);
    expect(first.pagination).toEqual({ page: 1, perPage: 2, totalCount: 3, totalPages: 2 });
    const second = (await gql.ok(query, { page: 2, perPage: 2 })).merchants;
    expect(second.items.map((m: Json) => m.name)).toEqual(["Deli"]);
  });

  test("keep their color and logo", async () => {
    const { gql } = await newFamily();
    const { createMerchant } = await gql.ok(CREATE_MERCHANT, {
      input: { name: "Logo Co", color: "#112233", logoUrl: "https://example.test/l.png" },
    });
    const { merchant } = await gql.ok("query($id: ID!) { merchant(id: $id) { name color logoUrl } }", { id: createMerchant.id });
    expect(merchant).toEqual({ name: "Logo Co", color: "#112233", logoUrl: "https://example.test/l.png" });
  });
});

describe("transactions", () => {
  let gql: Gql;
  let checking: Json;
  let groceries: Json;
  let wholeFoods: Json;
  let essential: Json;
  let weekly: Json;
  beforeAll(async () => {
    ({ gql } = await newFamily());
    checking = await createAccount(gql, { name: "Checking" });
    groceries = (await gql.ok(CREATE_CATEGORY, { input: { name: "Groceries", color: "#eb5429", icon: "shopping-cart" } })).createCategory;
    wholeFoods = (await gql.ok(CREATE_MERCHANT, { input: { name: "Whole Foods" } })).createMerchant;
    essential = (await gql.ok(CREATE_TAG, { input: { name: "Essential" } })).createTag;
    weekly = (await gql.ok(CREATE_TAG, { input: { name: "Weekly" } })).createTag;
  });

  describe("createTransaction", () => {
    test("answers {transaction, created} with every nested object resolved", async () => {
      const { createTransaction: payload } = await gql.ok(CREATE_TRANSACTION, {
        input: {
          accountId: checking.id,
          date: "2024-02-10",
          amount: 75.5,
          name: "Weekly shop",
          notes: "with a coupon",
          categoryId: groceries.id,
          merchantId: wholeFoods.id,
          tagIds: [weekly.id, essential.id],
        },
      });

      expect(payload.created).toBe(true);
      expect(payload.transaction).toEqual({
        id: expect.any(String),
        date: "2024-02-10",
        amount: expect.any(String),
        formattedAmount: "$75.50",
        amountCents: 7550,
        signedAmountCents: -7550,
        currency: "USD",
        name: "Weekly shop",
        notes: "with a coupon",
        classification: "expense",
        pending: false,
        externalId: null,
        source: null,
        account: { id: checking.id, name: "Checking", accountType: "depository" },
        category: { id: groceries.id, name: "Groceries" },
        merchant: { id: wholeFoods.id, name: "Whole Foods" },
        tags: [
          { id: essential.id, name: "Essential", color: "#e99537" },
          { id: weekly.id, name: "Weekly", color: "#e99537" },
        ],
        transfer: null,
      });
      expect(Number(payload.transaction.amount)).toBe(75.5);
    });

    test("nature income stores money in", async () => {
      const transaction = await createTransaction(gql, { accountId: checking.id, amount: "2000", nature: "income", name: "Salary" });
      expect(transaction).toMatchObject({
        classification: "income",
        formattedAmount: "-$2,000.00",
        signedAmountCents: 200000,
        amountCents: 200000,
      });
    });

    test("an external id already imported returns the existing transaction with created: false", async () => {
      const input = { accountId: checking.id, date: "2024-02-11", amount: "3", name: "Import", externalId: "bank-1", source: "csv" };
      const first = (await gql.ok(CREATE_TRANSACTION, { input })).createTransaction;
      const replay = (await gql.ok(CREATE_TRANSACTION, { input: { ...input, amount: "999" } })).createTransaction;
      expect(first.created).toBe(true);
      expect(replay.created).toBe(false);
      expect(replay.transaction).toEqual(first.transaction);
    });

    test("is validated, unknown references included", async () => {
      const error = await gql.fail(CREATE_TRANSACTION, {
        input: {
          accountId: randomUUID(),
          amount: "1",
          name: "x",
          nature: "gift",
          categoryId: randomUUID(),
          merchantId: randomUUID(),
          tagIds: [randomUUID()],
        },
      });
      expect(error).toMatchObject(
        validationFailed(
          "Account not found",
          "Date can't be blank",
          "Nature must be one of income, inflow, expense, outflow",
          "Category not found",
          "Merchant not found",
          "Tag not found",
        ),
      );
    });
  });

  test("a query that selects only some relations gets those, whichever they are", async () => {
    const savings = await createAccount(gql, { name: "Savings" });
    const shop = await createTransaction(gql, {
      accountId: checking.id,
      name: "Tagged shop",
      categoryId: groceries.id,
      merchantId: wholeFoods.id,
      tagIds: [weekly.id, essential.id],
    });
    const transfer = (
      await gql.ok(CREATE_TRANSFER, { input: { fromAccountId: checking.id, toAccountId: savings.id, date: "2024-01-16", amount: "5" } })
    ).createTransfer;
    const only = async (id: string, selection: string) =>
      (await gql.ok(`query($id: ID!) { transaction(id: $id) { ${selection} } }`, { id })).transaction;
    const tags = [
      { id: essential.id, name: "Essential" },
      { id: weekly.id, name: "Weekly" },
    ];

    expect(await only(shop.id, "tags { id name }")).toEqual({ tags });
    expect(await only(shop.id, "category { name } tags { id name }")).toEqual({ category: { name: "Groceries" }, tags });
    expect(await only(shop.id, "merchant { name } category { name }")).toEqual({
      merchant: { name: "Whole Foods" },
      category: { name: "Groceries" },
    });
    expect(await only(transfer.outflow.id, "transfer { otherAccount { name } } tags { id }")).toEqual({
      transfer: { otherAccount: { name: "Savings" } },
      tags: [],
    });
    const page = (await gql.ok("{ transactions(perPage: 100) { items { id tags { name } } } }")).transactions.items;
    expect(page.find((t: Json) => t.id === shop.id).tags).toEqual([{ name: "Essential" }, { name: "Weekly" }]);
  });

  describe("transactions(filter, page, perPage)", () => {
    let listing: Gql;
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      // A family of its own, so the rows of the tests above do not shift the expectations.
      ({ gql: listing } = await newFamily());
      const a = await createAccount(listing, { name: "A" });
      const b = await createAccount(listing, { name: "B" });
      const food = (await listing.ok(CREATE_CATEGORY, { input: { name: "Food" } })).createCategory;
      const shop = (await listing.ok(CREATE_MERCHANT, { input: { name: "Bakery Bros" } })).createMerchant;
      const tag = (await listing.ok(CREATE_TAG, { input: { name: "Treat" } })).createTag;
      ids.a = a.id;
      ids.food = food.id;
      ids.shop = shop.id;
      ids.tag = tag.id;
      const rows: Array<[string, Json]> = [
        ["bread", { accountId: a.id, date: "2024-03-01", amount: "4.5", name: "Bread", categoryId: food.id, merchantId: shop.id }],
        ["cake", { accountId: a.id, date: "2024-03-05", amount: "30", name: "Cake", categoryId: food.id, tagIds: [tag.id] }],
        ["salary", { accountId: b.id, date: "2024-03-10", amount: "2500", nature: "income", name: "Salary" }],
        ["rent", { accountId: b.id, date: "2024-03-15", amount: "1200", name: "Rent", notes: "march bakery rent" }],
      ];
      for (const [key, input] of rows) ids[key] = (await createTransaction(listing, input)).id;
    });

    const list = async (variables: Json) => (await listing.ok(LIST_TRANSACTIONS, variables)).transactions;
    const idsOf = (page: Json) => page.items.map((t: Json) => t.id);

    test("are newest first with a pagination block", async () => {
      const page = await list({});
      expect(idsOf(page)).toEqual([ids.rent, ids.salary, ids.cake, ids.bread]);
      expect(page.pagination).toEqual({ page: 1, perPage: 25, totalCount: 4, totalPages: 1 });
    });

    test("page and perPage slice the list", async () => {
      const page = await list({ page: 2, perPage: 3 });
      expect(idsOf(page)).toEqual([ids.bread]);
      expect(page.pagination).toEqual({ page: 2, perPage: 3, totalCount: 4, totalPages: 2 });
    });

    test.each([
      ["accountId", () => ({ accountId: ids.a }), () => [ids.cake, ids.bread]],
      ["categoryId", () => ({ categoryId: ids.food }), () => [ids.cake, ids.bread]],
      ["merchantId", () => ({ merchantId: ids.shop }), () => [ids.bread]],
      ["tagIds", () => ({ tagIds: [ids.tag] }), () => [ids.cake]],
      ["an inclusive date range", () => ({ startDate: "2024-03-05", endDate: "2024-03-10" }), () => [ids.salary, ids.cake]],
      ["signed amount bounds (income is negative)", () => ({ minAmount: "30", maxAmount: "2500" }), () => [ids.rent, ids.cake]],
      ["type income", () => ({ type: "income" }), () => [ids.salary]],
      ["search over name, notes and merchant", () => ({ search: "bakery" }), () => [ids.rent, ids.bread]],
    ])("filter by %s", async (_case, filter, expected) => {
      const page = await list({ filter: filter() });
      expect(idsOf(page)).toEqual(expected());
      expect(page.pagination.totalCount).toBe(expected().length);
    });
  });
});

describe("createTransfer", () => {
  let gql: Gql;
  let usd: Json;
  let usd2: Json;
  let eur: Json;
  beforeAll(async () => {
    ({ gql } = await newFamily());
    usd = await createAccount(gql, { name: "Checking" });
    usd2 = await createAccount(gql, { name: "Savings" });
    eur = await createAccount(gql, { name: "Euro account", currency: "EUR" });
  });

  test("creates two legs that point at each other's account", async () => {
    const { createTransfer } = await gql.ok(CREATE_TRANSFER, {
      input: { fromAccountId: usd.id, toAccountId: usd2.id, date: "2024-04-01", amount: "100" },
    });
    const { id, outflow, inflow } = createTransfer;

    expect(outflow).toMatchObject({
      name: "Transfer from Checking to Savings",
      classification: "expense",
      formattedAmount: "$100.00",
      account: { id: usd.id },
      transfer: { id, formattedAmount: "$100.00", currency: "USD", otherAccount: { id: usd2.id, name: "Savings" } },
    });
    expect(inflow).toMatchObject({
      classification: "income",
      formattedAmount: "-$100.00",
      account: { id: usd2.id },
      transfer: { id, formattedAmount: "$100.00", otherAccount: { id: usd.id, name: "Checking" } },
    });
    // Both legs are ordinary transactions too.
    const listed = (await gql.ok(LIST_TRANSACTIONS, { filter: { accountId: usd2.id } })).transactions.items;
    expect(listed).toEqual([inflow]);
  });

  test("between currencies requires the amount received", async () => {
    const input = { fromAccountId: usd.id, toAccountId: eur.id, date: "2024-04-02", amount: "100" };
    expect(await gql.fail(CREATE_TRANSFER, { input })).toMatchObject(
      validationFailed("To amount is required when the accounts' currencies differ"),
    );

    const { createTransfer } = await gql.ok(CREATE_TRANSFER, { input: { ...input, toAmount: "92.5" } });
    expect(createTransfer.outflow).toMatchObject({
      currency: "USD",
      formattedAmount: "$100.00",
      transfer: { currency: "USD", otherAccount: { id: eur.id } },
    });
    expect(createTransfer.inflow).toMatchObject({
      currency: "EUR",
      formattedAmount: "-€92.50",
      amountCents: 9250,
      transfer: { formattedAmount: "€92.50", currency: "EUR" },
    });
  });

  test("refuses a transfer to the same account or to an unknown one", async () => {
    const same = await gql.fail(CREATE_TRANSFER, {
      input: { fromAccountId: usd.id, toAccountId: usd.id, date: "2024-04-03", amount: "1" },
    });
    expect(same).toMatchObject(validationFailed("To account must differ from the from account"));
    const unknown = await gql.fail(CREATE_TRANSFER, {
      input: { fromAccountId: usd.id, toAccountId: randomUUID(), date: "2024-04-03", amount: "1" },
    });
    expect(unknown).toMatchObject(validationFailed("To account not found"));
  });
});

describe("API keys", () => {
  const CREATE_KEY = `mutation($scope: String!, $name: String) { createApiKey(scope: $scope, name: $name) { plaintext apiKey { id name scope displayPrefix revokedAt } } }`;
  const REVOKE_KEY = `mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }`;
  let user: TestUser;
  let gql: Gql;
  beforeAll(async () => {
    ({ user, gql } = await newFamily());
  });

  test("createApiKey returns the plaintext once; only its hash is kept, and the key works over REST", async () => {
    const { createApiKey } = await gql.ok(CREATE_KEY, { scope: "read_write", name: "CI" });
    const { plaintext, apiKey } = createApiKey;
    expect(apiKey).toMatchObject({ name: "CI", scope: "read_write", displayPrefix: plaintext.slice(0, 10), revokedAt: null });

    const fields = (await graphqlAs().ok(`{ __type(name: "ApiKey") { fields { name } } }`)).__type.fields.map((f: Json) => f.name);
    expect(fields).not.toContain("plaintext");
    const [stored] = await app.runtime.sequelize.query<{ key_hash: Buffer }>("SELECT key_hash FROM api_keys WHERE id = $1", {
      bind: [apiKey.id],
      type: QueryTypes.SELECT,
    });
    expect(stored.key_hash.equals(createHash("sha256").update(plaintext).digest())).toBe(true);

    const rest = await apiKeyClient(`${app.url}/api/v1`, plaintext).post("/merchants", { merchant: { name: "Made by the new key" } });
    expect(rest.status).toBe(201);
    expect((await gql.ok("{ apiKeys { id } }")).apiKeys.map((k: Json) => k.id)).toContain(apiKey.id);
  });

  test("a scope other than read or read_write is refused", async () => {
    expect(await gql.fail(CREATE_KEY, { scope: "admin" })).toMatchObject(validationFailed("Scope must be one of read, read_write"));
  });

  test("revokeApiKey stops the key at once, over REST and GraphQL", async () => {
    const { plaintext, apiKey } = (await gql.ok(CREATE_KEY, { scope: "read" })).createApiKey;
    const rest = apiKeyClient(`${app.url}/api/v1`, plaintext);
    expect((await rest.get("/merchants")).status).toBe(200);

    const { revokeApiKey } = await gql.ok(REVOKE_KEY, { id: apiKey.id });
    expect(revokeApiKey).toEqual({ id: apiKey.id, revokedAt: expect.any(String) });

    const restAfter = await rest.get("/merchants");
    expect(restAfter.status).toBe(401);
    expect(restAfter.body.error).toBe("unauthorized");
    const gqlAfter = await graphqlAs(plaintext).raw("{ me { id } }");
    expect(gqlAfter.status).toBe(401);
    expect(gqlAfter.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
  });

  test("another user's key id is NOT_FOUND and that key keeps working", async () => {
    const other = await newFamily();
    const theirs = (await other.gql.ok(CREATE_KEY, { scope: "read" })).createApiKey;

    expect(await gql.fail(REVOKE_KEY, { id: theirs.apiKey.id })).toMatchObject(notFound("API key"));
    expect(await gql.fail(REVOKE_KEY, { id: "not-a-uuid" })).toMatchObject(notFound("API key"));
    expect((await graphqlAs(theirs.plaintext).ok("{ me { id } }")).me.id).toBe(other.user.userId);
  });

  test("a read key cannot mint or revoke keys", async () => {
    const reader = graphqlAs(user.readKey);
    expect((await reader.fail(CREATE_KEY, { scope: "read_write" })).extensions.code).toBe("FORBIDDEN");
    expect((await reader.fail(REVOKE_KEY, { id: user.actor.credential.id })).extensions.code).toBe("FORBIDDEN");
    expect((await gql.ok("{ me { id } }")).me.id).toBe(user.userId);
  });
});
