/**
 * The finance writes (transactions and transfers, accounts, categories, merchants, tags) are audited like
 * trades and valuations: each write records one event in its own database transaction, naming the user and
 * the credential that asked (an API key as `api_key:<id>`, a signed-in session by its id), with the fields
 * it changed; a write that fails leaves no event. The walk in audit.catalogue-walk.test.ts reaches each
 * event type once; this file says what the events hold.
 */
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_REQUESTS: "0" } });
});
afterAll(() => app?.stop());

/** Every event recorded for the user so far, oldest first. */
async function eventsOf(user: { userId: string }) {
  const { events } = await app.runtime.services.audit.list({ userIds: [user.userId] }, { first: 100 });
  return events.reverse();
}

describe("with an API key: REST as sure-cli and the MCP server call it, and GraphQL", () => {
  let user: TestUser;
  let keyId: string;
  let api: ReturnType<typeof apiKeyClient>;
  /** GraphQL with the same key: the accounts' writes have no REST route (upstream's API has none). */
  let gql: (query: string, variables?: Record<string, unknown>) => Promise<any>;
  beforeAll(async () => {
    user = await createUser(app.runtime.services);
    keyId = user.actor.credential.id;
    api = apiKeyClient(`${app.url}/api/v1`, user.key);
    gql = async (query, variables) => {
      const response = await apiKeyClient(app.url, user.key).graphql(query, variables);
      expect(response.body.errors).toBeUndefined();
      return response.body.data;
    };
  });

  test("a transaction's create, update and delete each record an event with the old and new values", async () => {
    const account = await createAccount(app.runtime.services, user, { name: "Everyday" });
    const tag = (await api.post("/tags", { tag: { name: "groceries" } })).body;
    const created = await api.post("/transactions", {
      transaction: { account_id: account.id, date: "2026-01-15", amount: "12.50", name: "Corner shop", tag_ids: [tag.id] },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect((await api.patch(`/transactions/${id}`, { transaction: { amount: "13.75", notes: "with milk", tag_ids: [] } })).status).toBe(
      200,
    );
    expect((await api.delete(`/transactions/${id}`)).status).toBe(200);

    const events = (await eventsOf(user)).filter((event) => event.resource?.id === id);
    expect(events.map((event) => [event.eventType, event.action, event.severity])).toEqual([
      ["transaction.created", "create", "info"],
      ["transaction.updated", "update", "info"],
      ["transaction.deleted", "delete", "warning"],
    ]);
    const [create, update, remove] = events;
    expect(create.resource).toEqual({ type: "transaction", id, label: "Corner shop (2026-01-15)" });
    expect(create.changes).toMatchObject({
      accountId: { old: null, new: account.id },
      date: { old: null, new: "2026-01-15" },
      amount: { old: null, new: "12.5" },
      currency: { old: null, new: "USD" },
      name: { old: null, new: "Corner shop" },
      pending: { old: null, new: false },
      tagIds: { old: null, new: [tag.id] },
    });
    // Only what changed, amounts compared as numbers (the stored 12.5000 is 12.5).
    expect(update.changes).toEqual({
      amount: { old: "12.5", new: "13.75" },
      notes: { old: null, new: "with milk" },
      tagIds: { old: [tag.id], new: [] },
    });
    expect(remove.changes).toMatchObject({ amount: { old: "13.75", new: null }, name: { old: "Corner shop", new: null } });
    const fromRest = (await eventsOf(user)).filter((event) => [id, tag.id].includes(event.resource?.id));
    expect(fromRest.map((event) => event.eventType)).toEqual(["tag.created", ...events.map((event) => event.eventType)]);
    for (const event of fromRest)
      expect({ user: event.user, session: event.sessionId, request: event.requestId }).toEqual({
        user: { id: user.userId, email: user.email },
        session: `api_key:${keyId}`,
        request: expect.any(String),
      });
  });

  test("accounts, categories and merchants record their creates, updates and deletes, each with what changed", async () => {
    const account = (
      await gql(`mutation { createAccount(input: { name: "Rainy day", accountType: "depository", balance: "250" }) { id } }`)
    ).createAccount;
    await gql(`mutation ($id: ID!) { updateAccount(id: $id, input: { name: "Rainy days", balance: "300" }) { id } }`, { id: account.id });
    const category = (await api.post("/categories", { category: { name: "Pets", color: "#112233" } })).body;
    const merchant = (await api.post("/merchants", { merchant: { name: "Pet shop" } })).body;
    expect((await api.patch(`/merchants/${merchant.id}`, { merchant: { name: "The pet shop" } })).status).toBe(200);
    expect((await api.delete(`/merchants/${merchant.id}`)).status).toBe(200);
    await gql(`mutation ($id: ID!) { deleteAccount(id: $id) { id } }`, { id: account.id });

    const byResource = (id: string) =>
      eventsOf(user).then((events) =>
        events.filter((event) => event.resource?.id === id).map((event) => ({ type: event.eventType, changes: event.changes })),
      );
    expect(await byResource(account.id)).toEqual([
      {
        type: "finance_account.created",
        changes: {
          name: { old: null, new: "Rainy day" },
          accountType: { old: null, new: "depository" },
          classification: { old: null, new: "asset" },
          currency: { old: null, new: "USD" },
          balance: { old: null, new: "250" },
        },
      },
      { type: "finance_account.updated", changes: { name: { old: "Rainy day", new: "Rainy days" }, balance: { old: "250", new: "300" } } },
      {
        type: "finance_account.deleted",
        changes: expect.objectContaining({ name: { old: "Rainy days", new: null }, balance: { old: "300", new: null } }),
      },
    ]);
    expect(await byResource(category.id)).toEqual([
      {
        type: "category.created",
        changes: {
          name: { old: null, new: "Pets" },
          classification: { old: null, new: "expense" },
          color: { old: null, new: "#112233" },
          icon: { old: null, new: "shapes" },
        },
      },
    ]);
    expect(await byResource(merchant.id)).toEqual([
      { type: "merchant.created", changes: { name: { old: null, new: "Pet shop" } } },
      { type: "merchant.updated", changes: { name: { old: "Pet shop", new: "The pet shop" } } },
      { type: "merchant.deleted", changes: { name: { old: "The pet shop", new: null } } },
    ]);
    const labels = (await eventsOf(user)).filter((event) => event.resource?.id === merchant.id).map((event) => event.resource?.label);
    expect(labels).toEqual(["Pet shop", "The pet shop", "The pet shop"]);
  });

  test("a transfer is one event naming both legs", async () => {
    const from = await createAccount(app.runtime.services, user, { name: "From" });
    const to = await createAccount(app.runtime.services, user, { name: "To" });
    const created = await app.runtime.services.transactions.createTransfer(user.actor, {
      fromAccountId: from.id,
      toAccountId: to.id,
      date: "2026-02-01",
      amount: "75",
    });
    const [event] = (await eventsOf(user)).filter((recorded) => recorded.eventType === "transfer.created");
    expect(event.resource).toEqual({ type: "transfer", id: created.id, label: "Transfer from From to To" });
    expect(event.changes).toMatchObject({
      fromAccountId: { old: null, new: from.id },
      toAccountId: { old: null, new: to.id },
      amount: { old: null, new: "75" },
      outflowTransactionId: { old: null, new: created.outflow.id },
      inflowTransactionId: { old: null, new: created.inflow.id },
    });
    // The legs are the transfer's: no transaction.created for them.
    const legs = new Set([created.outflow.id, created.inflow.id]);
    expect((await eventsOf(user)).filter((recorded) => legs.has(recorded.resource?.id ?? ""))).toEqual([]);
  });
});

describe("GraphQL, signed in", () => {
  test("a write names the user and the session of the bearer token", async () => {
    const { services } = app.runtime;
    const email = `signed-in-${Date.now()}@example.test`;
    const created = await services.users.create({ email, password: "a long enough password" });
    const login = await client(app.url).post("/auth/login", { email, password: "a long enough password" });
    expect(login.status).toBe(200);
    const gql = client(app.url, { authorization: `Bearer ${login.body.access_token}` });
    const response = await gql.graphql(`mutation { createTag(input: { name: "signed in" }) { id } }`);
    expect(response.body.errors).toBeUndefined();
    const { sessionId } = (await eventsOf({ userId: created.id })).find((event) => event.eventType === "auth.login.success")!;

    const [event] = (await eventsOf({ userId: created.id })).filter((recorded) => recorded.eventType === "tag.created");
    expect(event).toMatchObject({
      user: { id: created.id, email },
      sessionId,
      resource: { type: "tag", id: response.body.data.createTag.id, label: "signed in" },
      changes: { name: { old: null, new: "signed in" }, color: { old: null, new: "#e99537" } },
    });
    expect(sessionId).toEqual(expect.any(String));
  });
});

describe("a write that fails leaves no event", () => {
  let user: TestUser;
  let api: ReturnType<typeof apiKeyClient>;
  beforeAll(async () => {
    user = await createUser(app.runtime.services);
    api = apiKeyClient(`${app.url}/api/v1`, user.key);
  });

  test("refused by validation (422), nothing is written and nothing recorded", async () => {
    const before = (await eventsOf(user)).length;
    expect((await api.post("/transactions", { transaction: { date: "2026-01-15", amount: "1", name: "No account" } })).status).toBe(422);
    expect((await api.post("/tags", { tag: { name: "bad colour", color: "red" } })).status).toBe(422);
    expect((await api.post("/merchants", { merchant: { name: "" } })).status).toBe(422);
    expect((await eventsOf(user)).length).toBe(before);
  });

  test("rolled back by the database (a unique name taken), the insert and its event go together", async () => {
    const first = await app.runtime.services.categories.create(user.actor, { name: "Travel" });
    const duplicate = await api.post("/categories", { category: { name: "Travel" } });
    expect(duplicate.status).toBe(422);
    expect(duplicate.body).toMatchObject({ error: "validation_failed" });
    const events = (await eventsOf(user)).filter((event) => event.eventType.startsWith("category."));
    expect(events.map((event) => event.resource?.id)).toEqual([first.id]);
  });

  test("moving an imported transaction onto an account that already holds its external id rolls back the update", async () => {
    const { services } = app.runtime;
    const one = await createAccount(services, user, { name: "One" });
    const two = await createAccount(services, user, { name: "Two" });
    const imported = { date: "2026-01-20", amount: "5", name: "Imported", externalId: "bank-1", source: "csv" };
    const { transaction } = await services.transactions.create(user.actor, { ...imported, accountId: one.id });
    await services.transactions.create(user.actor, { ...imported, accountId: two.id });
    const moved = await api.patch(`/transactions/${transaction.id}`, { transaction: { account_id: two.id } });
    expect(moved.status).toBe(422);
    const updates = (await eventsOf(user)).filter((event) => event.eventType === "transaction.updated");
    expect(updates).toEqual([]);
    expect((await services.transactions.get(user.actor, transaction.id)).accountId).toBe(one.id);
  });

  test("a write that fails at commit, after its event was recorded, takes the event with it", async () => {
    const { services, sequelize } = app.runtime;
    const account = await createAccount(services, user, { name: "Commit" });
    // A deferred check runs at COMMIT, after every statement of the write (the event's insert among them):
    // it stands in for anything that fails a transaction at its end.
    await sequelize.query(`
      CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.name = 'Refused at commit' THEN RAISE EXCEPTION 'refused at commit'; END IF;
        RETURN NULL;
      END $$;
      CREATE CONSTRAINT TRIGGER refuse_transaction AFTER INSERT OR UPDATE ON transactions
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit();
      CREATE CONSTRAINT TRIGGER refuse_tag AFTER INSERT OR UPDATE ON tags
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit();`);
    try {
      const before = (await eventsOf(user)).length;
      const write = { accountId: account.id, date: "2026-01-22", amount: "3", name: "Refused at commit" };
      await expect(services.transactions.create(user.actor, write)).rejects.toThrow(/refused at commit/);
      await expect(services.tags.create(user.actor, { name: "Refused at commit" })).rejects.toThrow(/refused at commit/);
      const kept = await services.transactions.create(user.actor, { ...write, name: "Accepted" });
      const updated = services.transactions.update(user.actor, kept.transaction.id, { name: "Refused at commit" });
      await expect(updated).rejects.toThrow(/refused at commit/);

      const events = (await eventsOf(user)).slice(before);
      expect(events.map((event) => [event.eventType, event.resource?.label])).toEqual([["transaction.created", "Accepted (2026-01-22)"]]);
      expect((await services.tags.list(user.actor)).map((tag) => tag.name)).not.toContain("Refused at commit");
    } finally {
      await sequelize.query(`
        DROP TRIGGER refuse_transaction ON transactions;
        DROP TRIGGER refuse_tag ON tags;
        DROP FUNCTION refuse_at_commit();`);
    }
  });

  test("a replayed import (the same external id) writes nothing and records nothing", async () => {
    const { services } = app.runtime;
    const account = await createAccount(services, user, { name: "Replay" });
    const input = { accountId: account.id, date: "2026-01-21", amount: "9", name: "Once", externalId: "bank-2" };
    const first = await services.transactions.create(user.actor, input);
    const again = await services.transactions.create(user.actor, input);
    expect(again).toMatchObject({ created: false, transaction: { id: first.transaction.id } });
    const events = (await eventsOf(user)).filter((event) => event.resource?.id === first.transaction.id);
    expect(events.map((event) => event.eventType)).toEqual(["transaction.created"]);
  });
});
