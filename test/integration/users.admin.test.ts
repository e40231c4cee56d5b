/**
 * User administration over GraphQL: administrators list and search every user of the instance, edit
 * profiles, set roles, suspend, reactivate and delete. Each change records its audit event (with the
 * administrator as actor and `changes` old → new) in the change's transaction. A suspension takes
 * effect at once for every credential: bearer tokens, session cookies, API keys and open graphql-ws
 * connections. Deletion follows docs/users.md's "User deletion policy". Guard rails keep an instance from
 * losing its last active administrator.
 */
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { deletedEmailOf } from "../../src/finance/identity/user-admin.service";
import { FakeLunchflowServer } from "../fakes/lunchflow-server";
import { BANK_TEST_ENV, waitForSync } from "../helpers/banking";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually } from "../helpers/eventually";

const PASSWORD = "admin test password 1";

let app: TestApp;
let lunchflow: FakeLunchflowServer;
let lunchflowUrl: string;
let root: TestUser;
let admin: ReturnType<typeof apiKeyClient>;

beforeAll(async () => {
  lunchflow = new FakeLunchflowServer();
  lunchflowUrl = await lunchflow.start();
  lunchflow.keys.set("lf_family_key", "active");
  lunchflow.accounts = [
    {
      id: 7,
      name: "Broker",
      institution_name: "Broker AG",
      provider: "finapi",
      currency: "EUR",
      status: "ACTIVE",
      balance: { amount: 900, currency: "EUR" },
      transactions: [
        {
          id: "lf-1",
          amount: -20,
          currency: "EUR",
          date: new Date().toISOString().slice(0, 10),
          merchant: "Fee",
          description: "Fee",
          isPending: false,
        },
      ],
      holdings: {
        holdings: [
          {
            security: { name: "World ETF", currency: "EUR", tickerSymbol: "WRLD", isin: "IE00B4L5Y983" },
            quantity: 10,
            price: 90,
            value: 900,
            costBasis: null,
            currency: "EUR",
          },
        ],
        totalValue: 900,
        currency: "EUR",
      },
    },
  ];
  app = await startTestApp({ env: BANK_TEST_ENV, roles: { api: true, workers: true } });
  root = await createUser(app.runtime.services, { role: "admin" });
  admin = apiKeyClient(app.url, root.key);
});
afterAll(async () => {
  await app?.stop();
  await lunchflow?.stop();
});

const services = () => app.runtime.services;
async function events(type: string, userId?: string) {
  return (await services().audit.list({ eventTypes: [type] }, { first: 100 })).events.filter(
    (event) => !userId || event.resource?.id === userId || event.user?.id === userId,
  );
}

const USER_FIELDS = "id email name role status familyId";
const gql = {
  users: `query ($search: String, $role: String, $status: String, $page: Int, $perPage: Int) {
    users(search: $search, role: $role, status: $status, page: $page, perPage: $perPage) {
      items { ${USER_FIELDS} } pagination { page perPage totalCount totalPages } } }`,
  user: `query ($id: ID!) { user(id: $id) { ${USER_FIELDS} } }`,
  update: `mutation ($id: ID!, $input: UserProfileInput!) { updateUser(id: $id, input: $input) { ${USER_FIELDS} } }`,
  setRole: `mutation ($id: ID!, $role: String!) { setUserRole(id: $id, role: $role) { ${USER_FIELDS} } }`,
  suspend: `mutation ($id: ID!, $reason: String) { suspendUser(id: $id, reason: $reason) { ${USER_FIELDS} } }`,
  reactivate: `mutation ($id: ID!) { reactivateUser(id: $id) { ${USER_FIELDS} } }`,
  delete: `mutation ($id: ID!) { deleteUser(id: $id) { user { ${USER_FIELDS} } familyDataRemoved sessionsEnded removed { table count } } }`,
};

function errorCode(response: { body: any }): string | undefined {
  return response.body.errors?.[0]?.extensions?.code;
}

/** A user who signs in with a password, plus an API key of theirs. */
async function passwordUser(options: { email?: string; familyOfEmail?: string; role?: string } = {}) {
  const email = options.email ?? `pw-${Math.random().toString(36).slice(2)}@example.test`;
  const user = await services().users.create({
    email,
    password: PASSWORD,
    aiEnabled: true,
    familyOfEmail: options.familyOfEmail,
    role: options.role,
  });
  const key = (await services().apiKeys.create(user.id, { scope: "read_write" })).plaintext;
  return { ...user, key };
}

async function login(email: string) {
  const response = await client(app.url).post("/auth/login", { email, password: PASSWORD });
  expect(response.status).toBe(200);
  return { ...response.body, cookie: response.headers.get("set-cookie")!.split(";")[0] } as {
    access_token: string;
    refresh_token: string;
    cookie: string;
  };
}

type Live = { client: Client; closes: number[]; connections: number; errors: unknown[] };

/** A graphql-ws connection holding one subscription open; records its close codes and (re)connections. */
async function liveSubscription(
  connectionParams: Record<string, string>,
  query: string,
  variables: Record<string, unknown>,
): Promise<Live> {
  const live: Live = { closes: [], connections: 0, errors: [] } as unknown as Live;
  live.client = createClient({
    url: `${app.url.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams,
    lazy: true,
    // Reconnects at once (the default backoff waits seconds): a test sees a refused reconnection quickly.
    retryWait: () => new Promise((resolve) => setImmediate(resolve)),
    on: {
      connected: () => (live.connections += 1),
      closed: (event) => live.closes.push((event as { code: number }).code),
    },
  });
  live.client.subscribe(
    { query, variables },
    { next: () => undefined, error: (error) => live.errors.push(error), complete: () => undefined },
  );
  await eventually(() => live.connections > 0 || live.closes.length > 0, { timeout: 10_000 });
  return live;
}

const CHAT_EVENTS = `subscription ($chatId: ID!) { chatEvents(chatId: $chatId) { kind } }`;

async function chatOf(userId: string) {
  const actor = { ...(await createUserActor(userId)) };
  return (await services().chats.create(actor, { title: "Budget" })).id;
}

async function createUserActor(userId: string) {
  const key = (await services().apiKeys.create(userId, { scope: "read_write", name: "fixture" })).plaintext;
  return services().apiKeys.authenticate(key);
}

async function queryOver(live: Live, query: string): Promise<any> {
  for await (const result of live.client.iterate({ query })) return result;
}

describe("listing and reading users", () => {
  const tag = `listing-${Date.now()}`;
  let ids: Record<string, string>;

  beforeAll(async () => {
    ids = {};
    for (const [name, role] of [
      ["carol", "member"],
      ["alice", "auditor"],
      ["bob", "member"],
    ] as const) {
      const user = await services().users.create({ email: `${name}.${tag}@example.test`, name: `${name} Tester`, role });
      ids[name] = user.id;
    }
  });

  test("search, page and total count, ordered by e-mail", async () => {
    const first = await admin.graphql(gql.users, { search: tag.toUpperCase(), perPage: 2 });
    expect(first.body.errors).toBeUndefined();
    expect(first.body.data.users.items.map((user: { email: string }) => user.email.split(".")[0])).toEqual(["alice", "bob"]);
    expect(first.body.data.users.pagination).toEqual({ page: 1, perPage: 2, totalCount: 3, totalPages: 2 });
    const second = await admin.graphql(gql.users, { search: tag, perPage: 2, page: 2 });
    expect(second.body.data.users.items).toEqual([
      {
        id: ids.carol,
        email: `carol.${tag}@example.test`,
        name: "carol Tester",
        role: "member",
        status: "active",
        familyId: expect.any(String),
      },
    ]);
  });

  test("filters by role and status, searches names and ids, and leaves deleted users out unless asked", async () => {
    const auditors = await admin.graphql(gql.users, { search: tag, role: "auditor" });
    expect(auditors.body.data.users.items.map((user: { id: string }) => user.id)).toEqual([ids.alice]);
    const byName = await admin.graphql(gql.users, { search: "BOB tester" });
    expect(byName.body.data.users.items.map((user: { id: string }) => user.id)).toEqual([ids.bob]);
    const byId = await admin.graphql(gql.users, { search: ids.carol });
    expect(byId.body.data.users.items.map((user: { id: string }) => user.id)).toEqual([ids.carol]);
    // Wildcards in the search are literal.
    expect((await admin.graphql(gql.users, { search: "%" })).body.data.users.pagination.totalCount).toBe(0);

    await admin.graphql(gql.suspend, { id: ids.bob });
    const suspended = await admin.graphql(gql.users, { search: tag, status: "suspended" });
    expect(suspended.body.data.users.items.map((user: { id: string }) => user.id)).toEqual([ids.bob]);

    await admin.graphql(gql.delete, { id: ids.carol });
    const listed = await admin.graphql(gql.users, { search: tag });
    expect(listed.body.data.users.items.map((user: { id: string }) => user.id)).toEqual([ids.alice, ids.bob]);
    const deleted = await admin.graphql(gql.users, { status: "deleted", search: ids.carol });
    expect(deleted.body.data.users.items).toEqual([
      expect.objectContaining({ id: ids.carol, email: deletedEmailOf(ids.carol), status: "deleted" }),
    ]);

    const bad = await admin.graphql(gql.users, { role: "owner", status: "gone" });
    expect(errorCode(bad)).toBe("VALIDATION_FAILED");
    expect(bad.body.errors[0].extensions.errors).toEqual([
      "Role must be one of admin, auditor, member",
      "Status must be one of active, suspended, deleted",
    ]);
  });

  test("one user by id; unknown and malformed ids are NOT_FOUND", async () => {
    const one = await admin.graphql(gql.user, { id: ids.alice });
    expect(one.body.data.user).toMatchObject({ id: ids.alice, role: "auditor", status: "active" });
    expect(errorCode(await admin.graphql(gql.user, { id: "00000000-0000-4000-8000-000000000000" }))).toBe("NOT_FOUND");
    expect(errorCode(await admin.graphql(gql.user, { id: "not-a-uuid" }))).toBe("NOT_FOUND");
  });
});

describe("who may administer users", () => {
  test("members, auditors and anonymous callers are refused; an admin's read-only key may read but not change", async () => {
    const member = await createUser(services());
    const auditor = await createUser(services(), { role: "auditor" });
    for (const key of [member.key, auditor.key]) {
      expect(errorCode(await apiKeyClient(app.url, key).graphql(gql.users, {}))).toBe("FORBIDDEN");
      expect(errorCode(await apiKeyClient(app.url, key).graphql(gql.suspend, { id: member.userId }))).toBe("FORBIDDEN");
    }
    expect(errorCode(await client(app.url).graphql(gql.users, {}))).toBe("UNAUTHENTICATED");

    const readOnly = apiKeyClient(app.url, root.readKey);
    expect((await readOnly.graphql(gql.user, { id: member.userId })).body.data.user.id).toBe(member.userId);
    const refused = await readOnly.graphql(gql.suspend, { id: member.userId });
    expect(refused.body.errors[0].extensions).toMatchObject({ code: "FORBIDDEN", restError: "insufficient_scope" });
    expect((await admin.graphql(gql.user, { id: member.userId })).body.data.user.status).toBe("active");
  });
});

describe("profile and role changes", () => {
  test("updateUser records user.updated with each changed field old → new; the e-mail stays unique", async () => {
    const user = await createUser(services());
    const other = await createUser(services());
    const newEmail = `renamed-${Date.now()}@example.test`;
    const updated = await admin.graphql(gql.update, {
      id: user.userId,
      input: { name: "  Ada Lovelace ", email: ` ${newEmail.toUpperCase()} ` },
    });
    expect(updated.body.data.updateUser).toMatchObject({ name: "Ada Lovelace", email: newEmail });
    const [event] = await events("user.updated", user.userId);
    expect(event).toMatchObject({
      user: { id: root.userId, email: root.email },
      action: "update",
      resource: { type: "user", id: user.userId, label: user.email },
      changes: { name: { old: null, new: "Ada Lovelace" }, email: { old: user.email, new: newEmail } },
    });
    expect(event.requestId).toBe(updated.headers.get("x-request-id"));

    const taken = await admin.graphql(gql.update, { id: user.userId, input: { email: other.email.toUpperCase() } });
    expect(taken.body.errors[0].extensions).toMatchObject({ code: "VALIDATION_FAILED", errors: ["Email has already been taken"] });
    const invalid = await admin.graphql(gql.update, { id: user.userId, input: { email: "no-at-sign" } });
    expect(invalid.body.errors[0].extensions.errors).toEqual(["Email is invalid"]);
    // Nothing changed: no event. Null clears the name.
    await admin.graphql(gql.update, { id: user.userId, input: { email: newEmail } });
    expect(await events("user.updated", user.userId)).toHaveLength(1);
    await admin.graphql(gql.update, { id: user.userId, input: { name: null } });
    const [cleared] = await events("user.updated", user.userId);
    expect(cleared.changes).toEqual({ name: { old: "Ada Lovelace", new: null } });
    // The new e-mail is the one the user's credentials now carry.
    expect((await apiKeyClient(app.url, user.key).graphql("{ me { email name } }")).body.data.me).toEqual({ email: newEmail, name: null });
  });

  test("setUserRole records user.roles.updated; the new role applies to the user's very next request", async () => {
    const user = await createUser(services());
    const api = apiKeyClient(app.url, user.key);
    expect(errorCode(await api.graphql("{ auditEvents(first: 1) { pageInfo { total } } }"))).toBe("FORBIDDEN");

    const promoted = await admin.graphql(gql.setRole, { id: user.userId, role: "auditor" });
    expect(promoted.body.data.setUserRole.role).toBe("auditor");
    expect((await api.graphql("{ auditEvents(first: 1) { pageInfo { total } } }")).body.errors).toBeUndefined();

    await admin.graphql(gql.setRole, { id: user.userId, role: "member" });
    await admin.graphql(gql.setRole, { id: user.userId, role: "member" });
    const changes = (await events("user.roles.updated", user.userId)).map((event) => [event.action, event.changes, event.user?.id]);
    expect(changes).toEqual([
      ["demote", { role: { old: "auditor", new: "member" } }, root.userId],
      ["promote", { role: { old: "member", new: "auditor" } }, root.userId],
    ]);
    const invalid = await admin.graphql(gql.setRole, { id: user.userId, role: "superuser" });
    expect(invalid.body.errors[0].extensions).toMatchObject({
      code: "VALIDATION_FAILED",
      errors: ["Role must be one of admin, auditor, member"],
    });
  });

  test("the SSO sync uses the same function with its own event type and provider", async () => {
    const user = await createUser(services());
    const { sequelize } = app.runtime;
    const changed = await sequelize.transaction((transaction) =>
      services().users.changeRole(transaction, { id: user.userId }, "auditor", {
        eventType: "user.roles.synced",
        actor: { id: user.userId, email: user.email },
        provider: "corp-oidc",
      }),
    );
    const unchanged = await sequelize.transaction((transaction) =>
      services().users.changeRole(transaction, { id: user.userId }, "auditor", { eventType: "user.roles.synced", actor: null }),
    );
    expect([changed, unchanged]).toEqual([true, false]);
    const [synced] = await events("user.roles.synced", user.userId);
    expect(synced).toMatchObject({
      provider: "corp-oidc",
      changes: { role: { old: "member", new: "auditor" } },
      user: { id: user.userId },
    });
    expect(await events("user.roles.updated", user.userId)).toEqual([]);
  });
});

describe("guard rails", () => {
  test("an administrator cannot suspend, delete or demote themselves", async () => {
    for (const [query, variables] of [
      [gql.suspend, { id: root.userId }],
      [gql.delete, { id: root.userId }],
      [gql.setRole, { id: root.userId, role: "member" }],
    ] as const) {
      const refused = await admin.graphql(query, variables);
      expect(refused.body.errors[0].extensions).toMatchObject({ code: "FORBIDDEN" });
    }
    expect((await admin.graphql(gql.setRole, { id: root.userId, role: "admin" })).body.data.setUserRole.role).toBe("admin");
    expect((await admin.graphql(gql.user, { id: root.userId })).body.data.user).toMatchObject({ role: "admin", status: "active" });
  });

  test("state changes that make no sense are CONFLICT; a deleted account is final", async () => {
    const user = await createUser(services());
    expect(errorCode(await admin.graphql(gql.reactivate, { id: user.userId }))).toBe("CONFLICT");
    await admin.graphql(gql.suspend, { id: user.userId });
    expect(errorCode(await admin.graphql(gql.suspend, { id: user.userId }))).toBe("CONFLICT");
    await admin.graphql(gql.delete, { id: user.userId });
    for (const [query, variables] of [
      [gql.reactivate, { id: user.userId }],
      [gql.delete, { id: user.userId }],
      [gql.setRole, { id: user.userId, role: "admin" }],
      [gql.update, { id: user.userId, input: { name: "Back" } }],
    ] as const) {
      expect((await admin.graphql(query, variables)).body.errors[0].extensions).toMatchObject({
        code: "CONFLICT",
        details: { reason: "deleted" },
      });
    }
  });
});

describe("suspension takes effect at once", () => {
  test("bearer token, session cookie, API key and open WebSocket subscriptions all stop; reactivation restores API keys only", async () => {
    const user = await passwordUser();
    const first = await login(user.email);
    const second = await login(user.email);
    const chatId = await chatOf(user.id);
    const bearer = client(app.url, { authorization: `Bearer ${first.access_token}` });
    const cookie = client(app.url, { cookie: first.cookie });
    const key = apiKeyClient(app.url, user.key);
    expect((await bearer.get("/api/v1/transactions")).status).toBe(200);
    expect((await cookie.graphql("{ me { id } }")).body.data.me.id).toBe(user.id);
    expect((await key.get("/api/v1/transactions")).status).toBe(200);
    const overToken = await liveSubscription({ Authorization: `Bearer ${second.access_token}` }, CHAT_EVENTS, { chatId });
    const overKey = await liveSubscription({ "X-Api-Key": user.key }, CHAT_EVENTS, { chatId });
    const bystander = await createUser(services(), { aiEnabled: true });
    const bystanderChat = (await services().chats.create(bystander.actor, { title: "Mine" })).id;
    const unaffected = await liveSubscription({ "X-Api-Key": bystander.key }, CHAT_EVENTS, { chatId: bystanderChat });

    const sessionIds = [await sessionIdOf(first.access_token), await sessionIdOf(second.access_token)].sort();
    const suspended = await admin.graphql(gql.suspend, { id: user.id, reason: "  left the household " });
    expect(suspended.body.data.suspendUser.status).toBe("suspended");

    await eventually(() => overToken.closes.length > 0 && overKey.closes.length > 0, { timeout: 10_000 });
    expect([overToken.closes, overKey.closes]).toEqual([[4401], [4401]]);
    expect((await bearer.get("/api/v1/transactions")).status).toBe(401);
    expect((await cookie.graphql("{ me { id } }")).status).toBe(401);
    const refused = await key.get("/api/v1/transactions");
    expect(refused.status).toBe(401);
    expect(refused.body.message).toBe("Your account has been deactivated");
    const reconnect = await liveSubscription({ "X-Api-Key": user.key }, CHAT_EVENTS, { chatId });
    expect(reconnect.closes[0]).toBe(4403);
    expect(reconnect.connections).toBe(0);
    expect((await queryOver(unaffected, "{ me { id } }")).data.me.id).toBe(bystander.userId);
    expect(unaffected.closes).toEqual([]);

    const requestId = suspended.headers.get("x-request-id");
    const [event] = await events("user.suspended", user.id);
    expect(event).toMatchObject({
      severity: "warning",
      user: { id: root.userId },
      resource: { type: "user", id: user.id, label: user.email },
      changes: { status: { old: "active", new: "suspended" }, reason: { old: null, new: "left the household" } },
      requestId,
    });
    const revoked = (await events("auth.token.revoked", user.id)).filter((revocation) => revocation.requestId === requestId);
    expect(revoked.map((revocation) => revocation.sessionId).sort()).toEqual(sessionIds);
    expect(revoked.every((revocation) => revocation.action === "revoke_session" && revocation.resource?.label === "user_suspended")).toBe(
      true,
    );

    const reactivated = await admin.graphql(gql.reactivate, { id: user.id });
    expect(reactivated.body.data.reactivateUser.status).toBe("active");
    const [back] = await events("user.reactivated", user.id);
    expect(back).toMatchObject({ user: { id: root.userId }, changes: { status: { old: "suspended", new: "active" } } });
    // API keys were only refused while suspended; sessions and tokens ended by the suspension stay ended.
    expect((await key.get("/api/v1/transactions")).status).toBe(200);
    expect((await bearer.get("/api/v1/transactions")).status).toBe(401);
    expect((await cookie.graphql("{ me { id } }")).status).toBe(401);
    const refresh = await client(app.url).post("/oauth/token", { grant_type: "refresh_token", refresh_token: first.refresh_token });
    expect(refresh.body.error).toBe("invalid_grant");
    expect((await client(app.url).post("/auth/login", { email: user.email, password: PASSWORD })).status).toBe(200);

    await Promise.all([overToken, overKey, reconnect, unaffected].map((live) => live.client.dispose()));
  });
});

async function sessionIdOf(accessToken: string): Promise<string> {
  const { credential } = await services().sessions.authenticateAccessToken(accessToken);
  return (credential as { sessionId: string }).sessionId;
}

describe("WebSocket connections close when their credential ends", () => {
  test("a socket presenting an expired session's token is refused, and the expiry is recorded with the socket's origin", async () => {
    const user = await passwordUser();
    const chatId = await chatOf(user.id);
    const session = await login(user.email);
    await app.runtime.sequelize.query(
      `UPDATE auth_sessions SET expires_at = now() - interval '1 second'
        WHERE id = (SELECT session_id FROM auth_tokens WHERE token_hash = sha256(convert_to($1, 'UTF8')))`,
      { bind: [session.access_token] },
    );
    const live = await liveSubscription({ Authorization: `Bearer ${session.access_token}` }, CHAT_EVENTS, { chatId });
    await eventually(() => live.closes.length > 0, { timeout: 10_000 });
    expect(live.connections).toBe(0);
    const [expired] = (await services().audit.list({ eventTypes: ["auth.session.expired"], userIds: [user.id] }, { first: 1 })).events;
    expect(expired).toMatchObject({ ipAddress: "127.0.0.1", requestId: expect.any(String) });
  });

  test("logout, access-token revocation and API key revocation close exactly the sockets that used them", async () => {
    const user = await passwordUser();
    const chatId = await chatOf(user.id);
    const loggedIn = await login(user.email);
    const revokedToken = await login(user.email);
    const otherKey = (await services().apiKeys.create(user.id, { scope: "read" })).plaintext;
    const viaSession = await liveSubscription({ Authorization: `Bearer ${loggedIn.access_token}` }, CHAT_EVENTS, { chatId });
    const viaToken = await liveSubscription({ Authorization: `Bearer ${revokedToken.access_token}` }, CHAT_EVENTS, { chatId });
    const viaKey = await liveSubscription({ "X-Api-Key": user.key }, CHAT_EVENTS, { chatId });
    const viaOtherKey = await liveSubscription({ "X-Api-Key": otherKey }, CHAT_EVENTS, { chatId });

    expect((await client(app.url, { authorization: `Bearer ${loggedIn.access_token}` }).post("/auth/logout")).status).toBe(200);
    await eventually(() => viaSession.closes.length > 0, { timeout: 10_000 });
    expect(viaToken.closes).toEqual([]);

    await client(app.url).post("/oauth/revoke", { token: revokedToken.access_token });
    await eventually(() => viaToken.closes.length > 0, { timeout: 10_000 });

    const keyId = (await services().apiKeys.authenticate(user.key)).credential.id;
    const revoked = await apiKeyClient(app.url, user.key).graphql(`mutation ($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: keyId });
    expect(revoked.body.errors).toBeUndefined();
    await eventually(() => viaKey.closes.length > 0, { timeout: 10_000 });

    expect([viaSession.closes, viaToken.closes, viaKey.closes]).toEqual([[4401], [4401], [4401]]);
    expect((await queryOver(viaOtherKey, "{ me { id } }")).data.me.id).toBe(user.id);
    expect(viaOtherKey.closes).toEqual([]);
    await Promise.all([viaSession, viaToken, viaKey, viaOtherKey].map((live) => live.client.dispose()));
  });

  test("a role change closes the user's sockets with 4403; the client reconnects with the new role", async () => {
    const user = await createUser(services(), { aiEnabled: true });
    const chatId = (await services().chats.create(user.actor, { title: "Roles" })).id;
    const live = await liveSubscription({ "X-Api-Key": user.key }, CHAT_EVENTS, { chatId });
    expect((await queryOver(live, "{ me { role } }")).data.me.role).toBe("member");
    await admin.graphql(gql.setRole, { id: user.userId, role: "auditor" });
    await eventually(() => live.closes.length > 0 && live.connections > 1, { timeout: 10_000 });
    expect(live.closes).toEqual([4403]);
    expect((await queryOver(live, "{ me { role } }")).data.me.role).toBe("auditor");
    await live.client.dispose();
  });
});

describe("deletion follows the user deletion policy", () => {
  let owner: Awaited<ReturnType<typeof passwordUser>>;
  let partner: Awaited<ReturnType<typeof passwordUser>>;
  let familyId: string;

  /** Rows of every table with a family_id column (all family-owned data), per table, for this family. */
  async function familyRows(): Promise<Record<string, number>> {
    const { sequelize } = app.runtime;
    const [tables] = (await sequelize.query(
      `SELECT table_name FROM information_schema.columns
        WHERE table_schema = 'public' AND column_name = 'family_id' AND table_name NOT IN ('users', 'families') ORDER BY table_name`,
    )) as [Array<{ table_name: string }>, unknown];
    const counts: Record<string, number> = {};
    for (const { table_name: table } of tables) {
      const [[row]] = (await sequelize.query(`SELECT count(*)::int AS count FROM ${table} WHERE family_id = $1`, { bind: [familyId] })) as [
        Array<{ count: number }>,
        unknown,
      ];
      counts[table] = row.count;
    }
    return counts;
  }

  async function ownedRows(userId: string) {
    const { sequelize } = app.runtime;
    const [[row]] = (await sequelize.query(
      `SELECT (SELECT count(*)::int FROM api_keys WHERE user_id = $1) AS "apiKeys",
              (SELECT count(*)::int FROM auth_sessions WHERE user_id = $1) AS sessions,
              (SELECT count(*)::int FROM auth_tokens t JOIN auth_sessions s ON s.id = t.session_id WHERE s.user_id = $1) AS tokens,
              (SELECT count(*)::int FROM chats WHERE user_id = $1) AS chats,
              (SELECT count(*)::int FROM chat_messages m JOIN chats c ON c.id = m.chat_id WHERE c.user_id = $1) AS messages,
              (SELECT count(*)::int FROM audit_saved_searches WHERE owner_user_id = $1) AS "savedSearches",
              (SELECT count(*)::int FROM sso_identities WHERE user_id = $1) AS "ssoIdentities",
              (SELECT count(*)::int FROM sso_login_requests WHERE user_id = $1) AS "ssoLoginRequests"`,
      { bind: [userId] },
    )) as [Array<Record<string, number>>, unknown];
    return row;
  }

  async function userRow(userId: string) {
    const [[row]] = (await app.runtime.sequelize.query(
      `SELECT email, name, status, password_hash AS "passwordHash", family_id AS "familyId" FROM users WHERE id = $1`,
      { bind: [userId] },
    )) as [Array<Record<string, string | null>>, unknown];
    return row;
  }

  beforeAll(async () => {
    owner = await passwordUser({ role: "auditor" });
    partner = await passwordUser({ familyOfEmail: owner.email });
    familyId = owner.familyId;
    const actor = await services().apiKeys.authenticate(owner.key);
    const checking = await createAccount(services(), { actor } as TestUser, { name: "Checking" });
    const savings = await createAccount(services(), { actor } as TestUser, { name: "Savings" });
    const category = await services().categories.create(actor, { name: "Groceries", classification: "expense" });
    const merchant = await services().merchants.create(actor, { name: "Corner Shop" });
    const tag = await services().tags.create(actor, { name: "Weekly" });
    await services().transactions.create(actor, {
      accountId: checking.id,
      date: "2026-01-05",
      amount: "42.10",
      name: "Groceries",
      categoryId: category.id,
      merchantId: merchant.id,
      tagIds: [tag.id],
    });
    await services().transactions.createTransfer(actor, {
      fromAccountId: checking.id,
      toAccountId: savings.id,
      date: "2026-01-06",
      amount: "100",
    });
    const connection = await services().banking.connectLunchflow(actor, "lf_family_key", lunchflowUrl);
    expect(await waitForSync(services(), connection.id)).toMatchObject({ status: "completed" });
    await services().chats.create(actor, { title: "Owner's chat", message: "What is my net worth?" });
    await services().auditSavedSearches.create(owner.id, "Failed logins", { eventTypes: ["auth.login.failed"] });
    await login(owner.email);
    // A connected SSO account and a link request in flight (the SSO flow itself is tested elsewhere).
    const providerId = "5f0d8d2e-8f4e-4b6e-9a52-3f1f7c6a0b11";
    const { sequelize } = app.runtime;
    await sequelize.query(
      `INSERT INTO sso_providers (id, slug, name, issuer, client_id, client_secret_encrypted, scopes, claim_mapping)
         VALUES ($1, 'corp', 'Corp', 'https://idp.example.test', 'client', 'sealed', ARRAY['openid'], '{}')`,
      { bind: [providerId] },
    );
    await sequelize.query(
      `INSERT INTO sso_identities (id, user_id, provider_id, subject, email) VALUES (gen_random_uuid(), $2, $1, 'sub-owner', $3)`,
      { bind: [providerId, owner.id, owner.email] },
    );
    await sequelize.query(
      `INSERT INTO sso_login_requests (state_hash, provider_id, purpose, user_id, nonce, code_verifier_encrypted, expires_at)
         VALUES ('\\x01', $1, 'link', $2, 'nonce', 'sealed', now() + interval '5 minutes')`,
      { bind: [providerId, owner.id] },
    );
  });

  test("with another member left: the user's credentials and own content go, the family's data stays, the row is anonymised", async () => {
    const before = await familyRows();
    expect(before).toMatchObject({
      accounts: 3,
      transactions: 4,
      transfers: 1,
      bank_connections: 1,
      bank_provider_accounts: 1,
      holdings: 1,
    });
    expect(await ownedRows(owner.id)).toMatchObject({
      apiKeys: 1,
      sessions: 1,
      tokens: 2,
      chats: 1,
      savedSearches: 1,
      ssoIdentities: 1,
      ssoLoginRequests: 1,
    });
    expect((await ownedRows(owner.id)).messages).toBeGreaterThan(0);
    const earlierEvents = (await services().audit.list({ userIds: [owner.id] }, { first: 100 })).events;
    expect(earlierEvents.length).toBeGreaterThan(0);

    const deleted = await admin.graphql(gql.delete, { id: owner.id });
    expect(deleted.body.errors).toBeUndefined();
    expect(deleted.body.data.deleteUser).toEqual({
      user: { id: owner.id, email: deletedEmailOf(owner.id), name: null, role: "auditor", status: "deleted", familyId },
      familyDataRemoved: false,
      sessionsEnded: 1,
      removed: [
        { table: "sso_identities", count: 1 },
        { table: "sso_login_requests", count: 1 },
        { table: "api_keys", count: 1 },
        { table: "auth_sessions", count: 1 },
        { table: "chats", count: 1 },
        { table: "audit_saved_searches", count: 1 },
      ],
    });
    expect(await ownedRows(owner.id)).toEqual({
      apiKeys: 0,
      sessions: 0,
      tokens: 0,
      chats: 0,
      messages: 0,
      savedSearches: 0,
      ssoIdentities: 0,
      ssoLoginRequests: 0,
    });
    expect(await userRow(owner.id)).toEqual({
      email: deletedEmailOf(owner.id),
      name: null,
      status: "deleted",
      passwordHash: null,
      familyId,
    });
    expect(await familyRows()).toEqual(before);
    expect((await apiKeyClient(app.url, partner.key).get("/api/v1/transactions")).body.pagination.total_count).toBe(4);

    // The audit log keeps everything, under the user's id and with the e-mail as it was then.
    const after = (await services().audit.list({ userIds: [owner.id] }, { first: 100 })).events;
    expect(after.slice(-earlierEvents.length)).toEqual(earlierEvents);
    expect(after.every((event) => event.user?.email === owner.email)).toBe(true);
    const [event] = await events("user.deleted", owner.id);
    expect(event).toMatchObject({
      severity: "warning",
      user: { id: root.userId },
      action: "delete",
      resource: { type: "user", id: owner.id, label: owner.email },
      changes: { status: { old: "active", new: "deleted" }, email: { old: owner.email, new: deletedEmailOf(owner.id) } },
    });
    expect(await events("auth.token.revoked", owner.id)).toEqual([
      expect.objectContaining({ requestId: deleted.headers.get("x-request-id") }),
    ]);

    expect((await client(app.url).post("/auth/login", { email: owner.email, password: PASSWORD })).status).toBe(401);
    expect((await apiKeyClient(app.url, owner.key).get("/api/v1/transactions")).status).toBe(401);
    // The e-mail is free again.
    expect((await services().users.create({ email: owner.email })).id).not.toBe(owner.id);
  });

  test("the last member's deletion removes the family's financial data too; shared securities and other families stay", async () => {
    const elsewhere = await createUser(services());
    await createAccount(services(), elsewhere);
    const [[{ securities }]] = (await app.runtime.sequelize.query(`SELECT count(*)::int AS securities FROM securities`)) as [
      Array<{ securities: number }>,
      unknown,
    ];
    const deleted = await admin.graphql(gql.delete, { id: partner.id });
    expect(deleted.body.data.deleteUser.familyDataRemoved).toBe(true);
    const removed = Object.fromEntries(
      deleted.body.data.deleteUser.removed.map((row: { table: string; count: number }) => [row.table, row.count]),
    );
    expect(removed).toMatchObject({
      transactions: 4,
      transfers: 1,
      transaction_tags: 1,
      accounts: 3,
      bank_connections: 1,
      holdings: 1,
      categories: 1,
      merchants: 2, // Corner Shop, and Fee from the bank sync
      tags: 1,
    });
    expect(Object.values(await familyRows()).every((count) => count === 0)).toBe(true);
    const [[family]] = (await app.runtime.sequelize.query(`SELECT name FROM families WHERE id = $1`, { bind: [familyId] })) as [
      Array<{ name: string }>,
      unknown,
    ];
    expect(family.name).toBe("Deleted family");
    const [event] = await events("user.deleted", partner.id);
    expect(event.action).toBe("delete_with_family_data");
    const [[after]] = (await app.runtime.sequelize.query(`SELECT count(*)::int AS securities FROM securities`)) as [
      Array<{ securities: number }>,
      unknown,
    ];
    expect(after.securities).toBe(securities);
    expect((await services().accounts.list(elsewhere.actor)).length).toBe(1);
  });

  test("a suspended member still counts: the family's data is kept for them", async () => {
    const first = await createUser(services());
    const second = await createUser(services(), { familyOf: first });
    await createAccount(services(), first);
    await admin.graphql(gql.suspend, { id: second.userId });
    const deleted = await admin.graphql(gql.delete, { id: first.userId });
    expect(deleted.body.data.deleteUser.familyDataRemoved).toBe(false);
    await admin.graphql(gql.reactivate, { id: second.userId });
    expect((await services().accounts.list(second.actor)).length).toBe(1);
  });
});

describe("the last active administrator", () => {
  test("two administrators suspending each other at once leave exactly one; the last cannot be demoted by a sync either", async () => {
    const a = await createUser(services(), { role: "admin" });
    const b = await createUser(services(), { role: "admin" });
    // Leave a and b as the only active administrators.
    const others = (await admin.graphql(gql.users, { role: "admin", status: "active", perPage: 100 })).body.data.users.items
      .map((user: { id: string }) => user.id)
      .filter((id: string) => id !== a.userId && id !== b.userId && id !== root.userId);
    for (const id of others) await admin.graphql(gql.suspend, { id });
    expect(errorCode(await apiKeyClient(app.url, a.key).graphql(gql.suspend, { id: root.userId }))).toBeUndefined();

    const [byA, byB] = await Promise.all([
      apiKeyClient(app.url, a.key).graphql(gql.suspend, { id: b.userId }),
      apiKeyClient(app.url, b.key).graphql(gql.suspend, { id: a.userId }),
    ]);
    const outcomes = [byA, byB].map((response) => (response.status === 401 ? "UNAUTHENTICATED" : (errorCode(response) ?? "OK")));
    expect(outcomes.filter((outcome) => outcome === "OK")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome !== "OK")[0]).toMatch(/^(CONFLICT|UNAUTHENTICATED)$/);
    const survivor = outcomes[0] === "OK" ? a : b;

    const active = (await apiKeyClient(app.url, survivor.key).graphql(gql.users, { role: "admin", status: "active" })).body.data.users
      .items;
    expect(active.map((user: { id: string }) => user.id)).toEqual([survivor.userId]);

    const demotion = app.runtime.sequelize.transaction((transaction) =>
      services().users.changeRole(transaction, { id: survivor.userId }, "member", {
        eventType: "user.roles.synced",
        actor: null,
        provider: "corp-oidc",
      }),
    );
    await expect(demotion).rejects.toMatchObject({
      code: "CONFLICT",
      message: "The last active administrator cannot be demoted",
      details: { reason: "last_active_administrator" },
    });
    expect((await apiKeyClient(app.url, survivor.key).graphql(gql.user, { id: survivor.userId })).body.data.user.role).toBe("admin");
  });
});

describe("a locked account is visible, and an administrator can unlock it (issue 27)", () => {
  const SHOWN = `query ($id: ID!) { user(id: $id) { status lockedUntil lastSignInAt lastSignInMethod } }`;
  const UNLOCK = `mutation ($id: ID!) { unlockUser(id: $id) { status lockedUntil } }`;

  test("after five wrong passwords the user shows locked until when, with the last sign-in; unlocking is audited and the password works again", async () => {
    // An administrator of its own: earlier tests of this file change the first one's standing.
    const unlocker = await passwordUser({ role: "admin" });
    const admin = apiKeyClient(app.url, unlocker.key);
    const user = await passwordUser();
    const signedIn = Date.now();
    await login(user.email);
    const shown = await admin.graphql(SHOWN, { id: user.id });
    expect(shown.body.errors).toBeUndefined();
    const before = shown.body.data.user;
    expect(before).toMatchObject({ status: "active", lockedUntil: null, lastSignInMethod: "password" });
    expect(new Date(before.lastSignInAt).getTime()).toBeGreaterThanOrEqual(signedIn - 1000);

    for (let attempt = 0; attempt < 5; attempt++)
      await client(app.url).post("/auth/login", { email: user.email, password: "wrong password" });
    expect((await client(app.url).post("/auth/login", { email: user.email, password: PASSWORD })).status).toBe(401);
    const locked = (await admin.graphql(SHOWN, { id: user.id })).body.data.user;
    expect(locked.status).toBe("active");
    // LOGIN_LOCKOUT_SECONDS defaults to 900.
    expect(new Date(locked.lockedUntil).getTime()).toBeGreaterThan(Date.now() + 800_000);

    // A read-only key of an administrator may look, not unlock.
    const readKey = (await services().apiKeys.create(unlocker.id, { scope: "read" })).plaintext;
    expect(errorCode(await apiKeyClient(app.url, readKey).graphql(UNLOCK, { id: user.id }))).toBe("FORBIDDEN");

    const unlocked = await admin.graphql(UNLOCK, { id: user.id });
    expect(unlocked.body).toEqual({ data: { unlockUser: { status: "active", lockedUntil: null } } });
    await services().audit.settle();
    const [event] = (await services().audit.list({ eventTypes: ["user.unlocked"] }, { first: 10 })).events.filter(
      (candidate) => candidate.resource?.id === user.id,
    );
    expect(event).toMatchObject({
      severity: "warning",
      user: { id: unlocker.id, email: unlocker.email },
      action: "unlock",
      changes: { locked_until: { old: locked.lockedUntil, new: null } },
    });
    await login(user.email);
    // Unlocking an account that is not locked changes nothing and records nothing.
    await admin.graphql(UNLOCK, { id: user.id });
    await services().audit.settle();
    expect(
      (await services().audit.list({ eventTypes: ["user.unlocked"] }, { first: 10 })).events.filter(
        (candidate) => candidate.resource?.id === user.id,
      ),
    ).toHaveLength(1);
  });
});
