/**
 * Races answer like single requests. A reference deleted while a write that checked it is on its way
 * is a 422 naming the field (the probe saw the foreign-key error as a 500); concurrent tag replacements
 * leave exactly the last writer's tags; of concurrent deletes of one row one succeeds and the rest 404.
 *
 * The vanished-reference cases are made deterministic: the test deletes the row in an open database
 * transaction, so the request's own checks still see it while its insert waits on that row's lock, then
 * commits the delete.
 */
import { QueryTypes, type Transaction } from "sequelize";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, type HttpResponse } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually } from "../helpers/eventually";

let app: TestApp;
let user: TestUser;
let api: ReturnType<typeof apiKeyClient>;
let accountId: string;
beforeAll(async () => {
  app = await startTestApp();
  user = await createUser(app.runtime.services, { aiEnabled: true });
  api = apiKeyClient(`${app.url}/api/v1`, user.key);
  accountId = (await createAccount(app.runtime.services, user)).id;
});
afterAll(() => app.stop());

/**
 * Deletes `id` from `table` in a transaction held open while `request` runs (until the request waits
 * on the deleted row's lock, or has answered), then commits it.
 */
async function deletedDuring(table: string, id: string, request: () => Promise<HttpResponse>): Promise<HttpResponse> {
  const { sequelize } = app.runtime;
  const transaction: Transaction = await sequelize.transaction();
  await sequelize.query(`DELETE FROM ${table} WHERE id = $1`, { bind: [id], transaction });
  const [{ pid }] = await sequelize.query<{ pid: number }>("SELECT pg_backend_pid() AS pid", { type: QueryTypes.SELECT, transaction });
  let answered = false;
  const pending = request().finally(() => (answered = true));
  await eventually(
    async () => {
      // Activity is read afresh each time: within a transaction PostgreSQL keeps its first reading.
      await sequelize.query("SELECT pg_stat_clear_snapshot()", { transaction });
      const [{ blocked }] = await sequelize.query<{ blocked: number }>(
        "SELECT count(*)::int AS blocked FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
        { bind: [pid], type: QueryTypes.SELECT, transaction },
      );
      return blocked > 0 || answered;
    },
    { what: "the request to wait on the deleted row" },
  );
  await transaction.commit();
  return pending;
}

const newTransaction = (extra: Record<string, unknown>) =>
  api.post("/transactions", { transaction: { account_id: accountId, date: "2024-03-01", amount: 12, name: "Race", ...extra } });

describe("a reference that vanishes mid-write is a 422 naming it", () => {
  test.each([
    [
      "category",
      "categories",
      () => app.runtime.services.categories.create(user.actor, { name: `C${Math.random()}`, classification: "expense" }),
      "category_id",
      "Category not found",
    ],
    [
      "merchant",
      "merchants",
      () => app.runtime.services.merchants.create(user.actor, { name: `M${Math.random()}` }),
      "merchant_id",
      "Merchant not found",
    ],
    ["tag", "tags", () => app.runtime.services.tags.create(user.actor, { name: `T${Math.random()}` }), "tag_ids", "Tag not found"],
  ])("%s", async (_name, table, create, field, message) => {
    const { id } = await create();
    const response = await deletedDuring(table, id, () => newTransaction({ [field]: field === "tag_ids" ? [id] : id }));
    expect(response.status).toBe(422);
    expect(response.body).toEqual({ error: "validation_failed", message: `Validation failed: ${message}`, errors: [message] });
  });

  test("account", async () => {
    const account = await createAccount(app.runtime.services, user, { name: "Vanishing" });
    const response = await deletedDuring("accounts", account.id, () =>
      api.post("/transactions", { transaction: { account_id: account.id, date: "2024-03-01", amount: 12, name: "Race" } }),
    );
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual(["Account not found"]);
  });

  test("chat", async () => {
    const chat = await app.runtime.services.chats.create(user.actor, { title: "Vanishing" });
    const response = await deletedDuring("chats", chat.id, () => api.post(`/chats/${chat.id}/messages`, { content: "Still there?" }));
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual(["Chat not found"]);
  });

  test("the transaction itself, while its tags are replaced: 404", async () => {
    const tag = await app.runtime.services.tags.create(user.actor, { name: "Late" });
    const created = await newTransaction({});
    const response = await deletedDuring("transactions", created.body.id, () =>
      api.patch(`/transactions/${created.body.id}`, { transaction: { tag_ids: [tag.id] } }),
    );
    expect(response.status).toBe(404);
  });
});

test("concurrent tag replacements: the last writer's tags, exactly, every time", async () => {
  const tags = await Promise.all(
    ["a", "b", "c", "d", "e", "f"].map((name) => app.runtime.services.tags.create(user.actor, { name: `race-${name}` })),
  );
  const sets = [
    [tags[0].id, tags[1].id],
    [tags[2].id, tags[3].id],
    [tags[4].id, tags[5].id],
  ];
  const { body } = await newTransaction({});
  for (let round = 0; round < 10; round++) {
    const responses = await Promise.all(sets.map((tag_ids) => api.patch(`/transactions/${body.id}`, { transaction: { tag_ids } })));
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200]);
    const [rows] = await app.runtime.sequelize.query("SELECT tag_id FROM transaction_tags WHERE transaction_id = $1", { bind: [body.id] });
    const stored = (rows as Array<{ tag_id: string }>).map((row) => row.tag_id).sort();
    expect(sets.map((set) => [...set].sort())).toContainEqual(stored);
  }
});

describe("concurrent deletes of one row: one succeeds, the others 404", () => {
  const deleteAll = (path: string) => Promise.all(Array.from({ length: 6 }, () => api.delete(path)));
  const statuses = (responses: HttpResponse[]) => responses.map((response) => response.status).sort();

  test("merchant, transaction and chat over REST", async () => {
    const merchant = await app.runtime.services.merchants.create(user.actor, { name: "Doomed" });
    const transaction = await newTransaction({});
    const chat = await app.runtime.services.chats.create(user.actor, { title: "Doomed" });
    for (const [path, success] of [
      [`/merchants/${merchant.id}`, 200],
      [`/transactions/${transaction.body.id}`, 200],
      [`/chats/${chat.id}`, 204],
    ] as const)
      expect([path, statuses(await deleteAll(path))]).toEqual([path, [success, 404, 404, 404, 404, 404]]);
  });

  test("tag, category and account over GraphQL", async () => {
    const graphql = apiKeyClient(app.url, user.key);
    const tag = await app.runtime.services.tags.create(user.actor, { name: "Doomed" });
    const category = await app.runtime.services.categories.create(user.actor, { name: "Doomed", classification: "expense" });
    const account = await createAccount(app.runtime.services, user, { name: "Doomed" });
    for (const [mutation, id] of [
      ["deleteTag", tag.id],
      ["deleteCategory", category.id],
      ["deleteAccount", account.id],
    ]) {
      const responses = await Promise.all(
        Array.from({ length: 6 }, () => graphql.graphql(`mutation ($id: ID!) { ${mutation}(id: $id) { id } }`, { id })),
      );
      const codes = responses.map((response) => response.body.errors?.[0].extensions.code ?? "OK").sort();
      expect([mutation, codes]).toEqual([mutation, ["NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "OK"]]);
    }
  });
});
