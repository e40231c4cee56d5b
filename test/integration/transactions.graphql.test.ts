/**
 * Transactions and transfers over GraphQL.
 */
import { randomUUID } from "node:crypto";
import {
  useGraphqlApp,
  type Json,
  type Gql,
  validationFailed,
  CREATE_CATEGORY,
  CREATE_TAG,
  CREATE_MERCHANT,
  CREATE_TRANSACTION,
  LIST_TRANSACTIONS,
  CREATE_TRANSFER,
  createAccount,
  createTransaction,
} from "../helpers/graphql";

const { newFamily } = useGraphqlApp();

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

  test("a listed transaction's relations answer every field as the relation's own query does, timestamps and balance included", async () => {
    // The relations of a page are read as JSON with their timestamps as text, parsed only when selected.
    const shop = await createTransaction(gql, {
      accountId: checking.id,
      name: "Fully related",
      categoryId: groceries.id,
      merchantId: wholeFoods.id,
      tagIds: [weekly.id, essential.id],
    });
    const account = "id name accountType classification currency balance createdAt updatedAt";
    const category = "id name classification color icon createdAt updatedAt";
    const merchant = "id name color logoUrl createdAt updatedAt";
    const tag = "id name color createdAt updatedAt";
    const page = (
      await gql.ok(
        `{ transactions(perPage: 100) { items { id account { ${account} } category { ${category} } merchant { ${merchant} } tags { ${tag} } } } }`,
      )
    ).transactions.items;
    const listed = page.find((t: Json) => t.id === shop.id);
    const own = await gql.ok(
      `query($a: ID!, $c: ID!, $m: ID!, $e: ID!, $w: ID!) {
        account(id: $a) { ${account} } category(id: $c) { ${category} } merchant(id: $m) { ${merchant} }
        essential: tag(id: $e) { ${tag} } weekly: tag(id: $w) { ${tag} } }`,
      { a: checking.id, c: groceries.id, m: wholeFoods.id, e: essential.id, w: weekly.id },
    );
    expect(listed).toEqual({
      id: shop.id,
      account: own.account,
      category: own.category,
      merchant: own.merchant,
      tags: [own.essential, own.weekly],
    });
    expect(listed.account.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
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
