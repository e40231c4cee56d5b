/**
 * Odd and hostile HTTP input that used to answer 500, leak or hold the service: forwarded addresses
 * with zone ids or junk, credentials in query strings, HEAD, a cookie used cross-site, an audit search
 * of thousands of words, statements that run too long; and the headers every answer carries.
 */
import net from "node:net";
import { Writable } from "node:stream";
import pino from "pino";
import { QueryTypes } from "sequelize";
import { restErrorOf } from "../../src/platform/common/error-edges";
import { asDomainError } from "../../src/platform/common/errors";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

const lines: string[] = [];
let app: TestApp;
let user: TestUser;
let admin: TestUser;
const PASSWORD = "hostile inputs password";
beforeAll(async () => {
  const logger = pino({ level: "info" }, new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
  app = await startTestApp({ logger });
  user = await createUser(app.runtime.services);
  admin = await createUser(app.runtime.services, { role: "admin" });
});
afterAll(() => app.stop());

async function passwordUser() {
  const email = `hostile-${Date.now()}-${Math.random().toString(36).slice(2)}@example.test`;
  const created = await app.runtime.services.users.create({ email, password: PASSWORD });
  return { id: created.id, email };
}

describe("X-Forwarded-For from the trusted proxy", () => {
  test.each([
    ["an IPv6 zone id", "fe80::1%eth0", "fe80::1"],
    ["a zone id behind junk", "not-an-address, fe80::1%25en0", "fe80::1"],
    ["junk only", "definitely not an address", null],
    ["an empty list: the proxy itself", ",,,", "127.0.0.1"],
  ])("%s: login and an audited mutation succeed, and the audit event keeps what is an address", async (_case, header, stored) => {
    const person = await passwordUser();
    const login = await client(app.url, { "x-forwarded-for": header }).post("/auth/login", { email: person.email, password: PASSWORD });
    expect(login.status).toBe(200);
    const mutation = await client(app.url, { "x-forwarded-for": header, authorization: `Bearer ${login.body.access_token}` }).graphql(
      `mutation { createApiKey(name: "forwarded", scope: "read") { apiKey { id } } }`,
    );
    expect(mutation.body.errors).toBeUndefined();
    const [rows] = await app.runtime.sequelize.query(`SELECT DISTINCT host(ip_address) AS ip FROM audit_events WHERE user_id = $1`, {
      bind: [person.id],
    });
    expect(rows).toEqual([{ ip: stored }]);
  });
});

describe("credentials in the query string", () => {
  test.each(["api_key", "apiKey", "access_token", "token"])(
    "?%s=… is refused with a 400 that says where credentials go, and is never logged",
    async (name) => {
      const secret = `${user.key}${name}`;
      for (const path of [`/api/v1/merchants?${name}=${secret}`, `/graphql?${name}=${secret}&query=%7Bme%7Bid%7D%7D`]) {
        const response = await client(app.url).get(path);
        expect(response.status).toBe(400);
        const error = path.startsWith("/graphql") ? response.body.errors[0].message : response.body.message;
        expect(error).toMatch(/not accepted in the query string.*X-Api-Key or Authorization header/);
        if (!path.startsWith("/graphql")) expect(response.body.error).toBe("credentials_in_query");
      }
      expect(lines.join("")).not.toContain(secret);
    },
  );
});

test("HEAD is answered wherever GET is, with GET's status and headers and no body", async () => {
  const get = await fetch(`${app.url}/api/v1/merchants`, { headers: { "x-api-key": user.key } });
  const head = await fetch(`${app.url}/api/v1/merchants`, { method: "HEAD", headers: { "x-api-key": user.key } });
  expect(head.status).toBe(200);
  expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"));
  expect(await head.text()).toBe("");
  // Apollo answers GET only with a header a browser form cannot send (its CSRF rule); HEAD gets the same.
  const headers = { "x-api-key": user.key, "apollo-require-preflight": "true" };
  for (const path of ["/healthz", "/readyz", "/api/v1/openapi.yaml", "/api/v1/transactions?per_page=1", "/graphql?query=%7B__typename%7D"])
    expect([path, (await fetch(`${app.url}${path}`, { method: "HEAD", headers })).status]).toEqual([path, 200]);
  const missing = await fetch(`${app.url}/api/v1/merchants/00000000-0000-4000-8000-000000000000`, {
    method: "HEAD",
    headers: { "x-api-key": user.key },
  });
  expect(missing.status).toBe(404);
  const wrongMethod = await fetch(`${app.url}/api/v1/merchants`, { method: "PUT", headers: { "x-api-key": user.key } });
  expect(wrongMethod.headers.get("allow")).toBe("GET, HEAD, POST");
});

test("a cross-site write with the session cookie is refused as FORBIDDEN, not as an internal error", async () => {
  const person = await passwordUser();
  const login = await client(app.url).post("/auth/login", { email: person.email, password: PASSWORD });
  const cookie = login.headers.get("set-cookie")!.split(";")[0];
  const response = await client(app.url, { cookie, origin: "https://elsewhere.example" }).graphql("{ me { id } }");
  expect(response.status).toBe(403);
  expect(response.body.errors[0].extensions.code).toBe("FORBIDDEN");
});

test("every answer carries the security headers; no CORS header grants another origin anything", async () => {
  const response = await fetch(`${app.url}/api/v1/merchants`, { headers: { "x-api-key": user.key, origin: "https://elsewhere.example" } });
  expect(response.headers.get("content-security-policy")).toBe(
    "default-src 'none';base-uri 'none';frame-ancestors 'none';form-action 'self'",
  );
  expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  expect(response.headers.get("referrer-policy")).toBe("no-referrer");
  expect(response.headers.get("x-frame-options")).toBe("SAMEORIGIN");
  expect(response.headers.get("x-powered-by")).toBeNull();
  expect(response.headers.get("access-control-allow-origin")).toBeNull();
  const preflight = await fetch(`${app.url}/api/v1/merchants`, {
    method: "OPTIONS",
    headers: { origin: "https://elsewhere.example", "access-control-request-method": "POST" },
  });
  expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
});

test("Node's header and request timeouts are set deliberately", () => {
  const server = app.runtime.app!.httpServer;
  expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout]).toEqual([10_000, 30_000, 5_000]);
});

describe("bounded work in the database", () => {
  test("the probe's audit search of 20,000 words is refused at once; repeated and contained words do not count", async () => {
    const auditor = apiKeyClient(app.url, admin.key);
    const query = `query ($search: String) { auditEvents(filter: { search: $search }, first: 5) { nodes { id } } }`;
    const words = Array.from({ length: 20_000 }, (_, i) => `word${i}`).join(" ");
    const before = app.statements.length;
    const refused = await auditor.graphql(query, { search: words });
    expect(refused.body.errors[0]).toMatchObject({
      message: "search has 20000 different words; at most 10 are allowed",
      extensions: { code: "BAD_REQUEST" },
    });
    // At once: refused before any statement reads the audit log.
    expect(app.statements.slice(before).filter((sql) => /FROM audit_events/i.test(sql))).toEqual([]);
    // What a person types: repeats, and words inside longer ones, are dropped before counting.
    const typed = `${"payroll ".repeat(5000)} pay roll acme acme corp deposit`;
    expect((await auditor.graphql(query, { search: typed })).body.errors).toBeUndefined();
    const longWord = await auditor.graphql(query, { search: "x".repeat(201) });
    expect(longWord.body.errors[0].extensions.code).toBe("BAD_REQUEST");
  });

  test("request-path statements run under a statement timeout; one that runs past it is a 503, not a 500", async () => {
    const [setting] = await app.runtime.sequelize.query<{ statement_timeout: string }>("SHOW statement_timeout", {
      type: QueryTypes.SELECT,
    });
    expect(setting.statement_timeout).toBe("30s");
    const error = await app.runtime.sequelize
      .transaction(async (transaction) => {
        await app.runtime.sequelize.query("SET LOCAL statement_timeout = 50", { transaction });
        await app.runtime.sequelize.query("SELECT pg_sleep_for('1 second')", { transaction });
      })
      .catch((e: unknown) => e);
    const mapped = asDomainError(error);
    expect(mapped?.code).toBe("QUERY_TIMEOUT");
    expect(restErrorOf(mapped!).status).toBe(503);
  });
});

describe("requests Node refuses before express", () => {
  const raw = (request: string) =>
    new Promise<string>((resolve, reject) => {
      const { port } = new URL(app.url);
      const socket = net.connect(Number(port), "127.0.0.1", () => socket.end(request));
      let answer = "";
      socket.on("data", (chunk) => (answer += String(chunk)));
      socket.on("close", () => resolve(answer));
      socket.on("error", reject);
    });

  test("a request that is not HTTP is a 400 with the documented body", async () => {
    const answer = await raw("HELLO THERE\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.split("\r\n\r\n")[1])).toEqual({ error: "bad_request", message: "The request is not valid HTTP" });
  });

  test("headers past 16 KB (the probe's 20 KB query string) are a 431 with the documented body", async () => {
    const response = await fetch(`${app.url}/api/v1/merchants?search=${"x".repeat(20_000)}`, { headers: { "x-api-key": user.key } });
    expect(response.status).toBe(431);
    expect(await response.json()).toEqual({ error: "headers_too_large", message: "The request line and headers exceed 16 KB" });
  });
});
