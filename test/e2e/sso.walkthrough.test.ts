import { spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { Browser } from "../helpers/browser";
import { CLI, spawnUntilJson } from "../helpers/cli";
import { client } from "../helpers/http";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";

/**
 * The "SSO walk-through" of docs/sso.md, step by step, as a new administrator would follow it: the built
 * service, the local IdP (`npm run sso:dev-idp`, here its built script), `admin create`, a token from
 * /auth/login, the page's own createSsoProvider request body, the test sign-in, a real sign-in, and
 * the audit log showing each step. Ports differ from the page's (3000, 8090) so runs never collide.
 */
const ROOT = path.join(__dirname, "..", "..");
const DEV_IDP = path.join(ROOT, "dist", "test", "fakes", "dev-idp.js");
jest.setTimeout(120_000);

let database: TestDatabase;
let env: NodeJS.ProcessEnv;
const children: ChildProcess[] = [];

/** Spawns a process this test stops at the end, resolving with its first JSON line that has `key`. */
async function spawnUntilJsonLine(args: string[], key: string) {
  const started = await spawnUntilJson(args, env, key);
  children.push(started.child);
  return started;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The body of the page's `curl … -d @- <<'JSON'` request that creates the provider. */
function readmeCreateProviderBody(): { query: string; variables: { input: Record<string, unknown> } } {
  const page = fs.readFileSync(path.join(ROOT, "docs", "sso.md"), "utf8");
  const section = page.slice(page.indexOf("## SSO walk-through"));
  const match = /<<'JSON'\n([\s\S]*?)\nJSON\n/.exec(section);
  if (!match) throw new Error("docs/sso.md's walk-through has no createSsoProvider request body");
  return JSON.parse(match[1]);
}

beforeAll(async () => {
  database = await createTestDatabase();
  env = {
    ...process.env,
    DATABASE_URL: database.url,
    ALLOW_INSECURE_UPSTREAMS: "true",
    OUTBOUND_ALLOWLIST: "127.0.0.1,::1,localhost",
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    DATABASE_POOL_MAX: "4",
  };
  delete env.REDIS_URL;
  delete env.PUBLIC_URL;
});

afterAll(async () => {
  for (const child of children) {
    child.removeAllListeners("exit");
    child.kill("SIGTERM");
  }
  await database?.close();
});

test("a new administrator configures a provider and signs in by following docs/sso.md", async () => {
  // Terminal 1: the service.
  const service = await spawnUntilJsonLine([CLI, "start", "--json"], "rest");
  const base = service.json.rest.replace(/\/api\/v1$/, "");

  // Terminal 2: the local IdP, told where the service is.
  const idpPort = await freePort();
  const idp = (await spawnUntilJsonLine([DEV_IDP, "--port", String(idpPort), "--app", base], "issuer")).json;
  expect(idp).toEqual({
    issuer: `http://127.0.0.1:${idpPort}`,
    clientId: "finance-gateway",
    clientSecret: "dev-client-secret",
    redirectUri: `${base}/auth/sso/local/callback`,
    signsInAs: "ada@example.test",
  });

  // Terminal 3: an administrator and a token.
  const created = spawnSync(process.execPath, [CLI, "admin", "create", "--email", "root@example.com", "--json"], { env, encoding: "utf8" });
  const admin = JSON.parse(created.stdout);
  expect(admin).toMatchObject({ email: "root@example.com", role: "admin", password: expect.any(String) });
  const login = await client(base).post("/auth/login", { email: "root@example.com", password: admin.password });
  expect(login.status).toBe(200);
  const bearer = client(base, { authorization: `Bearer ${login.body.access_token}` });

  // Configure the provider with the page's request, pointed at this run's IdP.
  const body = readmeCreateProviderBody();
  expect(body.variables.input.issuer).toBe("http://127.0.0.1:8090");
  body.variables.input.issuer = idp.issuer;
  const provider = (await bearer.post("/graphql", body)).body.data.createSsoProvider;
  expect(provider).toMatchObject({ slug: "local", redirectUri: idp.redirectUri, loginUrl: `${base}/auth/sso/local/start` });

  // Test it.
  const tested = await bearer.graphql(`mutation ($id: ID!) { testSsoProvider(id: $id) { ok error loginUrl } }`, { id: provider.id });
  expect(tested.body.data.testSsoProvider).toMatchObject({ ok: true, error: null });
  const testPage = await new Browser().get(tested.body.data.testSsoProvider.loginUrl, { headers: { accept: "text/html" } });
  expect(testPage.status).toBe(200);
  expect(testPage.text).toContain("Test sign-in succeeded");
  expect(testPage.text).toContain("ada@example.test (role admin)");

  // Sign in for real.
  const browser = new Browser();
  const signedIn = await browser.get(provider.loginUrl);
  expect(signedIn.status).toBe(200);
  const tokens = JSON.parse(signedIn.text);
  expect(tokens).toMatchObject({ token_type: "Bearer", user: { email: "ada@example.test", role: "admin" } });
  expect(browser.cookie(base, "fg_session")).toBeDefined();

  // The audit log shows every step.
  const audit = await bearer.get("/api/v1/audit-logs?limit=10");
  const types = audit.body.auditLogs.map((event: { eventType: string }) => event.eventType);
  expect(types.slice(0, 4)).toEqual(["auth.login.success", "auth.token.issued", "account.connected", "user.created"]);
  expect(types).toContain("provider.test");
});
