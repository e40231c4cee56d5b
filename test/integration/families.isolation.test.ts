/**
 * Families are sealed off from each other. Family A's keys, handed any id of family B, get exactly
 * what an id that does not exist gets: 404 over REST, NOT_FOUND over GraphQL, or "… not found" when
 * the id is a reference inside a write. Lists never show B's rows, and nothing A tries changes B.
 */
import { randomUUID } from "node:crypto";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, type HttpResponse } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

type Json = Record<string, any>;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

/** One family's user and the ids of one row of every kind it owns. */
type Family = {
  user: TestUser;
  accountId: string;
  otherAccountId: string;
  categoryId: string;
  merchantId: string;
  tagId: string;
  transactionId: string;
  transferLegId: string;
};

async function seedFamily(label: string): Promise<Family> {
  const services = app.runtime.services;
  const user = await createUser(services);
  const account = await createAccount(services, user, { name: `${label} checking` });
  const other = await createAccount(services, user, { name: `${label} savings` });
  const category = await services.categories.create(user.actor, { name: `${label} food` });
  const merchant = await services.merchants.create(user.actor, { name: `${label} market` });
  const tag = await services.tags.create(user.actor, { name: `${label} tag` });
  const { transaction } = await services.transactions.create(user.actor, {
    accountId: account.id,
    date: "2024-05-01",
    amount: "20",
    name: `${label} groceries`,
    categoryId: category.id,
    merchantId: merchant.id,
    tagIds: [tag.id],
  });
  const transfer = await services.transactions.createTransfer(user.actor, {
    fromAccountId: account.id,
    toAccountId: other.id,
    date: "2024-05-02",
    amount: "5",
  });
  return {
    user,
    accountId: account.id,
    otherAccountId: other.id,
    categoryId: category.id,
    merchantId: merchant.id,
    tagId: tag.id,
    transactionId: transaction.id,
    transferLegId: transfer.outflow.id,
  };
}

const rest = (user: TestUser) => apiKeyClient(`${app.url}/api/v1`, user.key);
const graphql = (user: TestUser) => (query: string, variables?: Json) => apiKeyClient(app.url, user.key).graphql(query, variables);

/** Everything a family can see of itself, for before/after comparisons. */
const EVERYTHING = `{
  accounts { id name balance }
  categories { id name parentId color }
  tags { id name color }
  merchants(perPage: 100) { items { id name logoUrl } }
  transactions(perPage: 100) { items { id name amount account { id } category { id } merchant { id } tags { id } transfer { id } } }
  apiKeys { id revokedAt }
}`;

async function everythingOf(user: TestUser): Promise<Json> {
  const response = await graphql(user)(EVERYTHING);
  expect(response.body.errors).toBeUndefined();
  return response.body.data;
}

/** Sends the same request with a never-issued id and with `foreignId`; both answers must be identical. */
async function expectSameAsUnknown(send: (id: string) => Promise<HttpResponse>, foreignId: string): Promise<HttpResponse> {
  const unknown = await send(randomUUID());
  const foreign = await send(foreignId);
  expect({ status: foreign.status, body: foreign.body }).toEqual({ status: unknown.status, body: unknown.body });
  return foreign;
}

let a: Family;
let b: Family;
let bBefore: Json;
beforeAll(async () => {
  a = await seedFamily("A");
  b = await seedFamily("B");
  bBefore = await everythingOf(b.user);
});

describe("REST, as family A with family B's ids", () => {
  const notFound = (what: string) => ({ status: 404, body: { error: "not_found", message: `${what} not found` } });
  const rejected = (message: string) => ({ status: 422, body: expect.objectContaining({ error: "validation_failed", errors: [message] }) });

  /** GET, PATCH and DELETE of one resource's member route, each given B's id. */
  const memberRoutes = (resource: "transactions" | "merchants", what: string, foreignId: () => string, note = "") => {
    const body = { [resource.slice(0, -1)]: { name: "Hijacked" } };
    const api = () => rest(a.user);
    return [
      { route: `GET /${resource}/{id}${note}`, send: (id: string) => api().get(`/${resource}/${id}`) },
      { route: `PATCH /${resource}/{id}${note}`, send: (id: string) => api().patch(`/${resource}/${id}`, body) },
      { route: `DELETE /${resource}/{id}${note}`, send: (id: string) => api().delete(`/${resource}/${id}`) },
    ].map((route) => ({ ...route, what, foreignId }));
  };

  test.each([
    ...memberRoutes("transactions", "Transaction", () => b.transactionId),
    ...memberRoutes("transactions", "Transaction", () => b.transferLegId, " of a transfer leg"),
    ...memberRoutes("merchants", "Merchant", () => b.merchantId),
  ])("$route answers 404", async ({ send, foreignId, what }) => {
    expect(await expectSameAsUnknown(send, foreignId())).toMatchObject(notFound(what));
  });

  describe("references inside a write", () => {
    const createWith = (fields: Json) =>
      rest(a.user).post("/transactions", {
        transaction: { account_id: a.accountId, date: "2024-06-01", amount: 1, name: "Ref", ...fields },
      });
    const updateWith = (fields: Json) => rest(a.user).patch(`/transactions/${a.transactionId}`, { transaction: fields });

    test.each([
      ["account_id", "Account not found", () => b.accountId],
      ["category_id", "Category not found", () => b.categoryId],
      ["merchant_id", "Merchant not found", () => b.merchantId],
    ])("POST and PATCH /transactions with B's %s answer 422", async (field, message, foreignId) => {
      expect(await expectSameAsUnknown((id) => createWith({ [field]: id }), foreignId())).toMatchObject(rejected(message));
      expect(await expectSameAsUnknown((id) => updateWith({ [field]: id }), foreignId())).toMatchObject(rejected(message));
    });

    test("POST and PATCH /transactions with B's tag answer 422", async () => {
      expect(await expectSameAsUnknown((id) => createWith({ tag_ids: [a.tagId, id] }), b.tagId)).toMatchObject(rejected("Tag not found"));
      expect(await expectSameAsUnknown((id) => updateWith({ tag_ids: [id] }), b.tagId)).toMatchObject(rejected("Tag not found"));
    });
  });

  describe("lists", () => {
    test("GET /transactions shows only A's transactions", async () => {
      const { body } = await rest(a.user).get("/transactions?per_page=100");
      const aIds = (await everythingOf(a.user)).transactions.items.map((t: Json) => t.id);
      expect(body.transactions.map((t: Json) => t.id).sort()).toEqual(aIds.sort());
      expect(body.pagination.total_count).toBe(aIds.length);
    });

    test("GET /merchants shows only A's merchants", async () => {
      const { body } = await rest(a.user).get("/merchants");
      expect(body.merchants.map((m: Json) => m.id)).toEqual([a.merchantId]);
      expect(body.pagination.total_count).toBe(1);
    });

    test.each([
      ["account_id", () => `account_id=${b.accountId}`],
      ["category_id", () => `category_id=${b.categoryId}`],
      ["merchant_id", () => `merchant_id=${b.merchantId}`],
      ["tag_ids[]", () => `tag_ids[]=${b.tagId}`],
    ])("filtering GET /transactions by B's %s finds nothing", async (_filter, query) => {
      const response = await rest(a.user).get(`/transactions?${query()}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ transactions: [], pagination: { page: 1, per_page: 25, total_count: 0, total_pages: 1 } });
    });
  });
});

describe("GraphQL, as family A with family B's ids", () => {
  const mutateWithInput = (field: string, inputType: string) =>
    `mutation($id: ID!, $input: ${inputType}!) { ${field}(id: $id, input: $input) { id } }`;

  type Case = { field: string; query: string; variables: (id: string) => Json; foreignId: () => string; what: string };
  const read = (field: string, what: string, foreignId: () => string, selection = "id"): Case => ({
    field,
    what,
    foreignId,
    query: `query($id: ID!) { ${field}(id: $id) { ${selection} } }`,
    variables: (id) => ({ id }),
  });
  const update = (field: string, inputType: string, what: string, foreignId: () => string): Case => ({
    field,
    what,
    foreignId,
    query: mutateWithInput(field, inputType),
    variables: (id) => ({ id, input: { name: "Hijacked" } }),
  });
  const remove = (field: string, what: string, foreignId: () => string): Case => ({
    field,
    what,
    foreignId,
    query: `mutation($id: ID!) { ${field}(id: $id) { id } }`,
    variables: (id) => ({ id }),
  });

  test.each([
    read("account", "Account", () => b.accountId),
    update("updateAccount", "AccountInput", "Account", () => b.accountId),
    remove("deleteAccount", "Account", () => b.accountId),
    update("updateCategory", "CategoryInput", "Category", () => b.categoryId),
    remove("deleteCategory", "Category", () => b.categoryId),
    update("updateTag", "TagInput", "Tag", () => b.tagId),
    remove("deleteTag", "Tag", () => b.tagId),
    read("merchant", "Merchant", () => b.merchantId),
    update("updateMerchant", "MerchantInput", "Merchant", () => b.merchantId),
    remove("deleteMerchant", "Merchant", () => b.merchantId),
    read("transaction", "Transaction", () => b.transactionId, "id account { id }"),
    update("updateTransaction", "TransactionInput", "Transaction", () => b.transactionId),
    remove("deleteTransaction", "Transaction", () => b.transferLegId),
    remove("revokeApiKey", "API key", () => b.user.actor.credential.id),
  ])("$field answers NOT_FOUND", async ({ query, variables, foreignId, what }) => {
    const send = (id: string) => graphql(a.user)(query, variables(id));
    const answer = await expectSameAsUnknown(send, foreignId());
    expect(answer.body).toEqual({
      data: null,
      errors: [expect.objectContaining({ message: `${what} not found`, extensions: expect.objectContaining({ code: "NOT_FOUND" }) })],
    });
  });

  describe("references inside a write", () => {
    const rejected = (...errors: string[]) => ({
      body: {
        data: null,
        errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: "VALIDATION_FAILED", errors }) })],
      },
    });
    const CREATE_TRANSACTION = `mutation($input: TransactionInput!) { createTransaction(input: $input) { created } }`;
    const UPDATE_TRANSACTION = mutateWithInput("updateTransaction", "TransactionInput");
    const CREATE_TRANSFER = `mutation($input: TransferInput!) { createTransfer(input: $input) { id } }`;
    const CREATE_CATEGORY = `mutation($input: CategoryInput!) { createCategory(input: $input) { id } }`;
    const UPDATE_CATEGORY = mutateWithInput("updateCategory", "CategoryInput");
    const transactionInput = (fields: Json) => ({
      input: { accountId: a.accountId, date: "2024-06-01", amount: "1", name: "Ref", ...fields },
    });

    test.each([
      ["accountId", "Account not found", () => b.accountId],
      ["categoryId", "Category not found", () => b.categoryId],
      ["merchantId", "Merchant not found", () => b.merchantId],
    ])("createTransaction and updateTransaction with B's %s are refused", async (field, message, foreignId) => {
      const create = (id: string) => graphql(a.user)(CREATE_TRANSACTION, transactionInput({ [field]: id }));
      const update = (id: string) => graphql(a.user)(UPDATE_TRANSACTION, { id: a.transactionId, input: { [field]: id } });
      expect(await expectSameAsUnknown(create, foreignId())).toMatchObject(rejected(message));
      expect(await expectSameAsUnknown(update, foreignId())).toMatchObject(rejected(message));
    });

    test("createTransaction with B's tag is refused", async () => {
      const create = (id: string) => graphql(a.user)(CREATE_TRANSACTION, transactionInput({ tagIds: [id] }));
      expect(await expectSameAsUnknown(create, b.tagId)).toMatchObject(rejected("Tag not found"));
    });

    test("createTransfer from or to B's account is refused", async () => {
      const transfer = (fields: Json) =>
        graphql(a.user)(CREATE_TRANSFER, {
          input: { fromAccountId: a.accountId, toAccountId: a.otherAccountId, date: "2024-06-01", amount: "1", ...fields },
        });
      expect(await expectSameAsUnknown((id) => transfer({ fromAccountId: id }), b.accountId)).toMatchObject(
        rejected("From account not found"),
      );
      expect(await expectSameAsUnknown((id) => transfer({ toAccountId: id }), b.otherAccountId)).toMatchObject(
        rejected("To account not found"),
      );
    });

    test("a category cannot be put under B's category", async () => {
      const create = (id: string) => graphql(a.user)(CREATE_CATEGORY, { input: { name: `Child ${randomUUID()}`, parentId: id } });
      const update = (id: string) => graphql(a.user)(UPDATE_CATEGORY, { id: a.categoryId, input: { parentId: id } });
      expect(await expectSameAsUnknown(create, b.categoryId)).toMatchObject(rejected("Parent category not found"));
      expect(await expectSameAsUnknown(update, b.categoryId)).toMatchObject(rejected("Parent category not found"));
    });
  });

  describe("lists", () => {
    test("every list shows A's rows and none of B's", async () => {
      const seen = await everythingOf(a.user);
      expect(seen.accounts.map((x: Json) => x.id).sort()).toEqual([a.accountId, a.otherAccountId].sort());
      expect(seen.categories.map((x: Json) => x.id)).toEqual([a.categoryId]);
      expect(seen.tags.map((x: Json) => x.id)).toEqual([a.tagId]);
      expect(seen.merchants.items.map((x: Json) => x.id)).toEqual([a.merchantId]);
      expect(seen.apiKeys.map((x: Json) => x.id)).toContain(a.user.actor.credential.id);
      expect(seen.apiKeys.map((x: Json) => x.id)).not.toContain(b.user.actor.credential.id);
      // A's groceries and the two legs of its transfer; nothing else.
      expect(seen.transactions.items).toHaveLength(3);
      expect(seen.transactions.items.every((t: Json) => [a.accountId, a.otherAccountId].includes(t.account.id))).toBe(true);
    });

    test("filtering transactions by B's ids finds nothing", async () => {
      const query = `query($filter: TransactionFilter) { transactions(filter: $filter) { items { id } pagination { totalCount } } }`;
      for (const filter of [
        { accountId: b.accountId },
        { categoryId: b.categoryId },
        { merchantId: b.merchantId },
        { tagIds: [b.tagId] },
      ]) {
        const response = await graphql(a.user)(query, { filter });
        expect(response.body.data.transactions).toEqual({ items: [], pagination: { totalCount: 0 } });
      }
    });
  });
});

describe("family B afterwards", () => {
  test("has everything it had, unchanged, and its key still works", async () => {
    expect(await everythingOf(b.user)).toEqual(bBefore);
    expect(bBefore.transactions.items.map((t: Json) => t.id)).toEqual(expect.arrayContaining([b.transactionId, b.transferLegId]));
  });
});

describe("a user added to an existing family", () => {
  test("sees and may change that family's data, and still nothing of the other family", async () => {
    const member = await createUser(app.runtime.services, { familyOf: a.user });
    expect(member.familyId).toBe(a.user.familyId);

    const transaction = await rest(member).get(`/transactions/${a.transactionId}`);
    expect(transaction.status).toBe(200);
    expect(transaction.body).toMatchObject({ id: a.transactionId, merchant: { id: a.merchantId }, tags: [{ id: a.tagId }] });
    expect((await rest(member).get(`/transactions/${b.transactionId}`)).status).toBe(404);

    expect(await everythingOf(member)).toEqual({ ...(await everythingOf(a.user)), apiKeys: expect.any(Array) });

    const renamed = await rest(member).patch(`/merchants/${a.merchantId}`, { merchant: { name: "A market, renamed by a member" } });
    expect(renamed.status).toBe(200);
    expect((await rest(a.user).get(`/merchants/${a.merchantId}`)).body.name).toBe("A market, renamed by a member");
  });

  test("API keys stay personal within the family", async () => {
    const member = await createUser(app.runtime.services, { familyOf: a.user });
    const keys = (await graphql(member)("{ apiKeys { id } }")).body.data.apiKeys.map((k: Json) => k.id);
    expect(keys).not.toContain(a.user.actor.credential.id);
    const revoke = await graphql(member)(`mutation($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: a.user.actor.credential.id });
    expect(revoke.body.errors[0].extensions.code).toBe("NOT_FOUND");
  });
});
