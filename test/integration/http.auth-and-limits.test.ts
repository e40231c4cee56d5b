/**
 * Everything that happens to a request before it reaches an operation: API-key authentication and
 * scopes, rate limiting, request ids, and the unauthenticated operational endpoints.
 *
 * Each describe block starts its own app and stops it before the next block starts. Two apps must not
 * run side by side in one process: initModels binds the Sequelize model classes to the newest app's
 * database, so the older app's model writes would land in the newer app's database.
 */
import fs from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, client, type HttpResponse } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually } from "../helpers/eventually";

const UNAUTHORIZED = { error: "unauthorized", message: "Access token or API key is invalid, expired, or missing" };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Starts an app for the enclosing describe block only. */
function useApp(env?: Record<string, string>): () => TestApp {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env });
  });
  afterAll(() => app.stop());
  return () => app;
}

describe("authentication", () => {
  const app = useApp();
  const rest = (key?: string) => (key ? apiKeyClient(`${app().url}/api/v1`, key) : client(`${app().url}/api/v1`));

  let user: TestUser;
  beforeAll(async () => {
    user = await createUser(app().runtime.services);
  });

  test("a valid key is let in", async () => {
    expect((await rest(user.key).get("/merchants")).status).toBe(200);
  });

  test.each([
    ["no X-Api-Key", undefined],
    ["an empty X-Api-Key", ""],
    ["a key that was never issued", "fgk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"],
    ["a value that is not a key at all", "Bearer something"],
  ])("%s answers 401 with the one unauthorized body", async (_case, key) => {
    const api = key === undefined ? rest() : client(`${app().url}/api/v1`, { "x-api-key": key });
    for (const response of [await api.get("/merchants"), await api.post("/transactions", { transaction: {} })]) {
      expect(response.status).toBe(401);
      expect(response.body).toEqual(UNAUTHORIZED);
    }
  });

  test("an unknown route answers 404 before any credential is looked at, as upstream does", async () => {
    // sure-cli's `login` probes the server with no key: a 401 there reads as "bad key".
    for (const api of [rest(), client(`${app().url}/api/v1`, { "x-api-key": "fgk_never_issued" }), rest(user.key)]) {
      const response = await api.get("/nowhere");
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: "not_found", message: "No route matches GET /api/v1/nowhere" });
    }
  });

  test("a key answers 401 from the moment it expires, though it was just used", async () => {
    // Its process remembers it (API_KEY_CACHE_MS, 5 s here) past its expiry: the remembered expires_at must refuse it.
    const expiresAt = new Date(Date.now() + 1_000);
    const { plaintext } = await app().runtime.services.apiKeys.create(user.userId, { scope: "read_write", expiresAt });
    expect((await rest(plaintext).get("/merchants")).status).toBe(200);

    await eventually(() => Date.now() > expiresAt.getTime(), { what: "the key's expiry to pass", interval: 20 });

    const response = await rest(plaintext).get("/merchants");
    expect(response.status).toBe(401);
    expect(response.body).toEqual(UNAUTHORIZED);
  });

  test("a revoked key answers 401 on its next request", async () => {
    const { apiKey, plaintext } = await app().runtime.services.apiKeys.create(user.userId, { scope: "read_write" });
    expect((await rest(plaintext).get("/merchants")).status).toBe(200);

    await app().runtime.services.apiKeys.revoke(apiKey.id);

    const response = await rest(plaintext).get("/merchants");
    expect(response.status).toBe(401);
    expect(response.body).toEqual(UNAUTHORIZED);
  });

  test("a user suspended through the service is refused on the very next request, though the key was just used", async () => {
    const admin = await createUser(app().runtime.services, { role: "admin" });
    const member = await createUser(app().runtime.services, { familyOf: admin });
    expect((await rest(member.key).get("/merchants")).status).toBe(200);

    await app().runtime.services.userAdmin.suspend(admin.actor, member.userId);

    const response = await rest(member.key).get("/merchants");
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: "unauthorized", message: expect.stringMatching(/deactivated/) });
  });

  describe("a read key", () => {
    const FORBIDDEN = { error: "insufficient_scope", message: "This action requires the 'write' scope" };

    test("may read", async () => {
      expect((await rest(user.readKey).get("/merchants")).status).toBe(200);
      expect((await rest(user.readKey).get("/transactions")).status).toBe(200);
    });

    test("gets 403 insufficient_scope on every write, and nothing is written", async () => {
      const merchant = await app().runtime.services.merchants.create(user.actor, { name: "Existing" });
      const api = rest(user.readKey);
      const writes: HttpResponse[] = [
        await api.post("/merchants", { merchant: { name: "New" } }),
        await api.patch(`/merchants/${merchant.id}`, { merchant: { name: "Renamed" } }),
        await api.delete(`/merchants/${merchant.id}`),
        await api.post("/transactions", { transaction: { name: "x" } }),
      ];
      for (const response of writes) {
        expect(response.status).toBe(403);
        expect(response.body).toEqual(FORBIDDEN);
      }
      const names = (await api.get("/merchants")).body.merchants.map((m: { name: string }) => m.name);
      expect(names).toEqual(["Existing"]);
    });
  });

  describe("request ids", () => {
    const requestIdOf = async (offered?: string) => {
      const response = await rest(user.key).get("/merchants", offered === undefined ? {} : { "x-request-id": offered });
      return response.headers.get("x-request-id");
    };

    test("a well-formed client id is echoed", async () => {
      expect(await requestIdOf("client-42.retry:1_a")).toBe("client-42.retry:1_a");
    });

    test.each([
      ["none", undefined],
      ["one with spaces", "my request"],
      ["one of 200 characters", "a".repeat(200)],
      ["one with characters outside [A-Za-z0-9._:-]", "abc/def?x=1"],
    ])("%s is replaced by a generated id", async (_case, offered) => {
      const id = await requestIdOf(offered);
      expect(id).toMatch(UUID);
      expect(id).not.toBe(offered);
    });

    test("error responses carry one as well", async () => {
      const response = await rest().get("/merchants", { "x-request-id": "trace-401" });
      expect(response.status).toBe(401);
      expect(response.headers.get("x-request-id")).toBe("trace-401");
    });
  });

  describe("operational endpoints need no key", () => {
    test("/healthz answers 200", async () => {
      const response = await client(app().url).get("/healthz");
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: "ok" });
    });

    test("/readyz answers 200 ready when the database and the queue answer", async () => {
      const response = await client(app().url).get("/readyz");
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: "ready" });
    });

    test("GET /api/v1/openapi.yaml serves the committed OpenAPI document", async () => {
      const response = await client(app().url).get("/api/v1/openapi.yaml");
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^application\/yaml/);
      expect(response.text).toBe(fs.readFileSync(path.join(__dirname, "../../schema/openapi.yaml"), "utf8"));
      const document = parseYaml(response.text);
      expect(document.openapi).toBe("3.1.0");
      expect(Object.keys(document.paths)).toEqual(
        expect.arrayContaining(["/transactions", "/transactions/{id}", "/merchants", "/merchants/{id}"]),
      );
    });
  });

  test("rate limiting is on by default, at 1000 requests per window", async () => {
    const response = await rest(user.key).get("/merchants");
    expect(response.headers.get("x-ratelimit-limit")).toBe("1000");
    expect(Number(response.headers.get("x-ratelimit-remaining"))).toBeLessThan(1000);
  });
});

/**
 * A change written into the database behind the service's back sends no event, so only the lifetime of
 * a process's remembered keys (API_KEY_CACHE_MS) bounds how long a key it ended still works: kept short
 * here, so waiting it out takes a moment.
 */
describe("changes written behind the service's back", () => {
  const CACHE_MS = 200;
  const app = useApp({ API_KEY_CACHE_MS: String(CACHE_MS) });
  const rest = (key: string) => apiKeyClient(`${app().url}/api/v1`, key);
  const sql = (statement: string, bind: unknown[]) => app().runtime.sequelize.query(statement, { bind });
  /** The key's first refused answer, and how long after `since` it came. */
  const refusal = async (key: string, since: number) => {
    const response = await eventually(
      async () => {
        const answer = await rest(key).get("/merchants");
        return answer.status === 401 && answer;
      },
      { what: "the key to be refused", timeout: 10_000, interval: 20 },
    );
    return { response, after: Date.now() - since };
  };

  test("an expiry is honoured within the remembered key's lifetime", async () => {
    const user = await createUser(app().runtime.services);
    const { apiKey, plaintext } = await app().runtime.services.apiKeys.create(user.userId, {
      scope: "read_write",
      expiresAt: new Date(Date.now() + 60_000),
    });
    expect((await rest(plaintext).get("/merchants")).status).toBe(200);

    await sql("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [apiKey.id]);
    const { response, after } = await refusal(plaintext, Date.now());
    expect(after).toBeLessThan(CACHE_MS + 1_000);
    expect(response.body).toEqual(UNAUTHORIZED);
  });

  test.each(["suspended", "deleted"])("a %s user's keys answer 401 saying the account is deactivated", async (status) => {
    const member = await createUser(app().runtime.services);
    expect((await rest(member.key).get("/merchants")).status).toBe(200);

    await sql("UPDATE users SET status = $2 WHERE id = $1", [member.userId, status]);
    const { response, after } = await refusal(member.key, Date.now());
    expect(after).toBeLessThan(CACHE_MS + 1_000);
    expect(response.body).toEqual({ error: "unauthorized", message: expect.stringMatching(/deactivated/) });
    const graphql = await apiKeyClient(app().url, member.key).graphql("{ me { id } }");
    expect(graphql.status).toBe(401);
    expect(graphql.body.errors[0]).toMatchObject({
      message: expect.stringMatching(/deactivated/),
      extensions: { code: "UNAUTHENTICATED" },
    });
  });
});

describe("rate limiting: a signed-in console session has a budget of its own", () => {
  const app = useApp({ RATE_LIMIT_REQUESTS: "3", RATE_LIMIT_CONSOLE_REQUESTS: "6", RATE_LIMIT_WINDOW_SECONDS: "600" });
  const graphql = (headers: Record<string, string>) =>
    fetch(`${app().url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ query: "{ me { email } }" }),
    });

  test("the session cookie spends RATE_LIMIT_CONSOLE_REQUESTS; the same person's bearer token still has the API's whole budget", async () => {
    const email = `console-budget-${Date.now()}@example.test`;
    await app().runtime.services.users.create({ email, role: "admin", password: "console budget password 1" });
    const login = await fetch(`${app().url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "console budget password 1" }),
    });
    const cookie = login.headers.get("set-cookie")!.split(";")[0];
    const { access_token } = (await login.json()) as { access_token: string };

    const seen = [];
    for (let i = 0; i < 6; i += 1) {
      const response = await graphql({ cookie });
      seen.push([response.status, response.headers.get("x-ratelimit-limit"), response.headers.get("x-ratelimit-remaining")]);
    }
    expect(seen).toEqual([0, 1, 2, 3, 4, 5].map((spent) => [200, "6", String(5 - spent)]));
    expect((await graphql({ cookie })).status).toBe(429);

    // More console requests than the API's budget, yet the API budget is untouched.
    const api = await graphql({ authorization: `Bearer ${access_token}` });
    expect([api.status, api.headers.get("x-ratelimit-limit"), api.headers.get("x-ratelimit-remaining")]).toEqual([200, "3", "2"]);
  });
});

describe("rate limiting: 3 requests per 2-second window", () => {
  const app = useApp({ RATE_LIMIT_REQUESTS: "3", RATE_LIMIT_WINDOW_SECONDS: "2" });
  const rest = (key: string) => apiKeyClient(`${app().url}/api/v1`, key);
  const limitHeaders = (response: HttpResponse) => ({
    limit: response.headers.get("x-ratelimit-limit"),
    remaining: response.headers.get("x-ratelimit-remaining"),
    reset: Number(response.headers.get("x-ratelimit-reset")),
  });

  /** Spends a fresh key's whole window and returns the first refused response. */
  async function exhaust(key: string): Promise<HttpResponse> {
    for (let i = 0; i < 3; i += 1) expect((await rest(key).get("/merchants")).status).toBe(200);
    return rest(key).get("/merchants");
  }

  test("every response says the limit, what remains and when the window resets", async () => {
    const { key } = await createUser(app().runtime.services);
    const seen = [];
    for (let i = 0; i < 3; i += 1) {
      const response = await rest(key).get("/merchants");
      expect(response.status).toBe(200);
      seen.push(limitHeaders(response));
    }
    expect(seen.map(({ limit, remaining }) => [limit, remaining])).toEqual([
      ["3", "2"],
      ["3", "1"],
      ["3", "0"],
    ]);
    for (const { reset } of seen) expect([1, 2]).toContain(reset);
  });

  test("the request over the limit answers 429 with Retry-After and details", async () => {
    const { key } = await createUser(app().runtime.services);
    const refused = await exhaust(key);

    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect([1, 2]).toContain(retryAfter);
    expect(refused.body).toEqual({
      error: "rate_limit_exceeded",
      message: `Rate limit exceeded. Try again in ${retryAfter} seconds.`,
      details: { limit: 3, current: 4, reset_in_seconds: retryAfter },
    });
    expect(limitHeaders(refused)).toMatchObject({ limit: "3", remaining: "0" });
  });

  test("GraphQL requests count against the same key and are refused the same way", async () => {
    const { key } = await createUser(app().runtime.services);
    await exhaust(key);
    const response = await apiKeyClient(app().url, key).graphql("{ me { id } }");
    expect(response.status).toBe(429);
    // The same GraphQL edge as every other error: the REST body's details under extensions.details.
    expect(response.body.errors[0]).toMatchObject({
      message: expect.stringMatching(/^Rate limit exceeded/),
      extensions: { code: "RATE_LIMITED", restError: "rate_limit_exceeded", details: { limit: 3 } },
    });
  });

  test("limits are per key: another key of the same user still passes", async () => {
    const user = await createUser(app().runtime.services);
    expect((await exhaust(user.key)).status).toBe(429);

    const other = await rest(user.readKey).get("/merchants");
    expect(other.status).toBe(200);
    expect(limitHeaders(other)).toMatchObject({ limit: "3", remaining: "2" });
  });

  test("once the window has passed, requests succeed again", async () => {
    const { key } = await createUser(app().runtime.services);
    const refused = await exhaust(key);
    expect(refused.status).toBe(429);

    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);

    // Refused until the window ends (a refusal does not extend it); then the first request of the new window passes.
    const recovered = await eventually(
      async () => {
        const response = await rest(key).get("/merchants");
        return response.status !== 429 && response;
      },
      { what: "the next window", interval: 100 },
    );
    expect(recovered.status).toBe(200);
    expect(limitHeaders(recovered)).toMatchObject({ limit: "3", remaining: "2" });
  });
});

describe("rate limiting turned off with RATE_LIMIT_REQUESTS=0", () => {
  const app = useApp({ RATE_LIMIT_REQUESTS: "0" });

  test("requests are never refused and carry no rate-limit headers", async () => {
    const { key } = await createUser(app().runtime.services);
    const api = apiKeyClient(`${app().url}/api/v1`, key);
    for (let i = 0; i < 10; i += 1) {
      const response = await api.get("/merchants");
      expect(response.status).toBe(200);
      expect(response.headers.get("x-ratelimit-limit")).toBeNull();
      expect(response.headers.get("x-ratelimit-remaining")).toBeNull();
      expect(response.headers.get("x-ratelimit-reset")).toBeNull();
    }
  });
});
