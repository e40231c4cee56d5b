/**
 * API keys over GraphQL: created once in plaintext, stored hashed, revoked at once, scoped to their owner.
 */
import { createHash } from "node:crypto";
import { QueryTypes } from "sequelize";
import { type TestUser } from "../helpers/fixtures";
import { useGraphqlApp, type Json, type Gql, validationFailed, notFound } from "../helpers/graphql";
import { apiKeyClient } from "../helpers/http";

// Keys are not remembered between requests (API_KEY_CACHE_MS=0), so an expiry moved into the past in the
// database is seen at once and no test waits for a key to expire. What a remembered key does, eviction
// and its own expiry check included, is http.auth-and-limits.test.ts's to show.
const { app, graphqlAs, newFamily } = useGraphqlApp({ API_KEY_CACHE_MS: "0" });

describe("API keys", () => {
  const CREATE_KEY = `mutation($scope: String!, $name: String) { createApiKey(scope: $scope, name: $name) { plaintext apiKey { id name scope displayPrefix revokedAt } } }`;
  const REVOKE_KEY = `mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }`;
  let user: TestUser;
  let gql: Gql;
  beforeAll(async () => {
    ({ user, gql } = await newFamily());
  });

  test("creating and revoking a key are audit events naming who, the key and its owner (issue 27)", async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const { createApiKey } = await gql.ok(
      `mutation($at: DateTimeISO) { createApiKey(scope: "read", name: "Audited", expiresAt: $at) { apiKey { id } } }`,
      { at: expiresAt },
    );
    await gql.ok(REVOKE_KEY, { id: createApiKey.apiKey.id });
    await gql.ok(REVOKE_KEY, { id: createApiKey.apiKey.id });
    const audit = app().runtime.services.audit;
    await audit.settle();
    const events = (await audit.list({ eventTypes: ["auth.api_key.created", "auth.api_key.revoked"] }, { first: 100 })).events.filter(
      (event) => event.resource?.id === createApiKey.apiKey.id,
    );
    expect(events.map((event) => [event.eventType, event.severity, event.user, event.resource])).toEqual([
      [
        "auth.api_key.revoked",
        "warning",
        { id: user.userId, email: user.email },
        { type: "api_key", id: createApiKey.apiKey.id, label: "Audited" },
      ],
      [
        "auth.api_key.created",
        "info",
        { id: user.userId, email: user.email },
        { type: "api_key", id: createApiKey.apiKey.id, label: "Audited" },
      ],
    ]);
    expect(events[1].changes).toEqual({
      owner: { old: null, new: user.userId },
      scope: { old: null, new: "read" },
      expires_at: { old: null, new: expiresAt },
    });
  });

  test("a key's expiry is an audit event naming its owner: recorded by the sweep, or at its first use after expiry; once", async () => {
    const services = app().runtime.services;
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const make = async (name: string) =>
      (
        await gql.ok(
          `mutation($at: DateTimeISO, $name: String) { createApiKey(scope: "read", name: $name, expiresAt: $at) { plaintext apiKey { id } } }`,
          {
            at: later,
            name,
          },
        )
      ).createApiKey;
    const swept = await make("Swept at expiry");
    const used = await make("Used after expiry");
    const revoked = await make("Revoked before expiry");
    await gql.ok(REVOKE_KEY, { id: revoked.apiKey.id });
    expect((await apiKeyClient(app().url, used.plaintext).get("/api/v1/accounts")).status).toBe(200);
    // Their expiry passes.
    await app().runtime.sequelize.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id IN ($1, $2, $3)", {
      bind: [swept.apiKey.id, used.apiKey.id, revoked.apiKey.id],
    });
    const expiredEvents = async () => {
      await services.audit.settle();
      return (await services.audit.list({ eventTypes: ["auth.api_key.expired"] }, { first: 100 })).events.filter((event) =>
        [swept.apiKey.id, used.apiKey.id, revoked.apiKey.id].includes(event.resource!.id!),
      );
    };
    expect(await expiredEvents()).toEqual([]);

    // First use after expiry: refused, and the expiry is recorded at once.
    expect((await apiKeyClient(app().url, used.plaintext).get("/api/v1/accounts")).status).toBe(401);
    expect((await expiredEvents()).map((event) => event.resource!.label)).toEqual(["Used after expiry"]);

    // The sweep (the maintenance worker's, every 5 minutes) records the one nobody presented; a revoked
    // key's end was its revocation, and nothing is recorded twice.
    expect(await services.apiKeys.sweepExpired()).toBeGreaterThanOrEqual(1);
    expect(await services.apiKeys.sweepExpired()).toBe(0);
    expect((await apiKeyClient(app().url, used.plaintext).get("/api/v1/accounts")).status).toBe(401);
    const events = await expiredEvents();
    expect(events.map((event) => [event.resource!.label, event.severity, event.action, event.user]).sort()).toEqual([
      ["Swept at expiry", "info", "expire", { id: user.userId, email: user.email }],
      ["Used after expiry", "info", "expire", { id: user.userId, email: user.email }],
    ]);
    expect(events[0].changes).toEqual({ expires_at: { old: null, new: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) } });
  });

  test("createApiKey returns the plaintext once; only its hash is kept, and the key works over REST", async () => {
    const { createApiKey } = await gql.ok(CREATE_KEY, { scope: "read_write", name: "CI" });
    const { plaintext, apiKey } = createApiKey;
    expect(apiKey).toMatchObject({ name: "CI", scope: "read_write", displayPrefix: plaintext.slice(0, 10), revokedAt: null });

    const fields = (await graphqlAs().ok(`{ __type(name: "ApiKey") { fields { name } } }`)).__type.fields.map((f: Json) => f.name);
    expect(fields).not.toContain("plaintext");
    const [stored] = await app().runtime.sequelize.query<{ key_hash: Buffer }>("SELECT key_hash FROM api_keys WHERE id = $1", {
      bind: [apiKey.id],
      type: QueryTypes.SELECT,
    });
    expect(stored.key_hash.equals(createHash("sha256").update(plaintext).digest())).toBe(true);

    const rest = await apiKeyClient(`${app().url}/api/v1`, plaintext).post("/merchants", { merchant: { name: "Made by the new key" } });
    expect(rest.status).toBe(201);
    expect((await gql.ok("{ apiKeys { id } }")).apiKeys.map((k: Json) => k.id)).toContain(apiKey.id);
  });

  test("a scope other than read or read_write is refused", async () => {
    expect(await gql.fail(CREATE_KEY, { scope: "admin" })).toMatchObject(validationFailed("Scope must be one of read, read_write"));
  });

  test("revokeApiKey stops the key at once, over REST and GraphQL", async () => {
    const { plaintext, apiKey } = (await gql.ok(CREATE_KEY, { scope: "read" })).createApiKey;
    const rest = apiKeyClient(`${app().url}/api/v1`, plaintext);
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
