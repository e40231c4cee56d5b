/**
 * Local sign-in and the OAuth 2.0 token endpoints: a login issues an access + refresh token pair and a
 * session cookie; refresh rotates the pair and a reused refresh token revokes the whole session;
 * revocation and logout take effect on the very next request; every step is an audit event recorded
 * with the request's address (behind a trusted proxy), user agent, request id and session.
 */
import { createUser } from "../helpers/fixtures";
import { client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

let app: TestApp;
const PASSWORD = "correct horse battery staple";
let adminEmail: string;

beforeAll(async () => {
  app = await startTestApp({ env: { LOGIN_MAX_FAILURES: "3", LOGIN_LOCKOUT_SECONDS: "60" } });
  adminEmail = `admin-${Date.now()}@example.test`;
  await app.runtime.services.users.create({ email: adminEmail, role: "admin", password: PASSWORD });
});
afterAll(() => app.stop());

const http = () => client(app.url);
const login = (email: string, password: string, headers: Record<string, string> = {}) =>
  http().post("/auth/login", { email, password }, headers);
const form = (path: string, fields: Record<string, string>) =>
  http().post(path, new URLSearchParams(fields).toString(), { "content-type": "application/x-www-form-urlencoded" });
const bearer = (token: string) => client(app.url, { authorization: `Bearer ${token}` });

async function events(type: string) {
  return (await app.runtime.services.audit.list({ eventTypes: [type] }, { first: 100 })).events;
}

test("a login answers with a token pair and a session cookie, and records who, from where", async () => {
  const response = await login(adminEmail.toUpperCase(), PASSWORD, {
    "x-forwarded-for": "203.0.113.7",
    "x-forwarded-proto": "https",
    "user-agent": "auth-test/1.0",
  });
  expect(response.status).toBe(200);
  expect(response.body).toEqual({
    access_token: expect.stringMatching(/^fga_/),
    refresh_token: expect.stringMatching(/^fgr_/),
    token_type: "Bearer",
    expires_in: 900,
  });
  expect(response.headers.get("cache-control")).toBe("no-store");
  const cookie = response.headers.get("set-cookie")!;
  expect(cookie).toMatch(/^fg_session=fgs_/);
  expect(cookie).toMatch(/HttpOnly/);
  expect(cookie).toMatch(/SameSite=Lax/);
  expect(cookie).toMatch(/Secure/);

  const [success] = await events("auth.login.success");
  const [issued] = await events("auth.token.issued");
  const requestId = response.headers.get("x-request-id");
  for (const event of [success, issued]) {
    expect(event).toMatchObject({ ipAddress: "203.0.113.7", userAgent: "auth-test/1.0", requestId, user: { email: adminEmail } });
    expect(event.sessionId).toEqual(expect.any(String));
  }
  expect(success.sessionId).toBe(issued.sessionId);

  const me = await bearer(response.body.access_token).graphql("{ me { email role } }");
  expect(me.body.data.me).toEqual({ email: adminEmail, role: "admin" });
  const rest = await bearer(response.body.access_token).get("/api/v1/transactions");
  expect(rest.status).toBe(200);
  const withCookie = await client(app.url, { cookie: cookie.split(";")[0] }).graphql("{ me { email } }");
  expect(withCookie.body.data.me.email).toBe(adminEmail);
});

test("over plain http the cookie is not marked Secure", async () => {
  const response = await login(adminEmail, PASSWORD);
  expect(response.headers.get("set-cookie")).not.toMatch(/Secure/);
});

test("an unknown user and a wrong password get the same 401, and both are recorded with their reason", async () => {
  const unknown = await login("nobody@example.test", PASSWORD);
  const wrong = await login(adminEmail, "not the password at all");
  expect(unknown.status).toBe(401);
  expect(wrong.status).toBe(401);
  expect(unknown.body).toEqual({ error: "unauthorized", message: "Invalid email or password" });
  expect(wrong.body).toEqual(unknown.body);
  const failures = await events("auth.login.failed");
  expect(failures.map((event) => [event.user?.email, event.error, event.severity])).toEqual([
    [adminEmail, "invalid_password", "warning"],
    ["nobody@example.test", "unknown_user", "warning"],
  ]);
  // A success clears the failure count, so these do not count toward the lockout test below.
  expect((await login(adminEmail, PASSWORD)).status).toBe(200);
});

test("repeated failures lock the account for a while, even against the right password", async () => {
  const user = await app.runtime.services.users.create({ email: `locked-${Date.now()}@example.test`, password: PASSWORD });
  for (let i = 0; i < 3; i += 1) expect((await login(user.email, `wrong password ${i}!`)).status).toBe(401);
  const locked = await login(user.email, PASSWORD);
  expect(locked.status).toBe(401);
  expect(locked.body.message).toBe("Invalid email or password");
  const reasons = (await events("auth.login.failed")).filter((event) => event.user?.id === user.id).map((event) => event.error);
  expect(reasons).toEqual(["account_locked", "invalid_password; account locked", "invalid_password", "invalid_password"]);
});

test("refresh rotates the pair (form-encoded or JSON); the old pair stops working at once", async () => {
  const first = (await login(adminEmail, PASSWORD)).body;
  const second = await form("/oauth/token", { grant_type: "refresh_token", refresh_token: first.refresh_token });
  expect(second.status).toBe(200);
  expect(second.body).toMatchObject({ token_type: "Bearer", expires_in: 900 });
  expect(second.body.access_token).not.toBe(first.access_token);
  expect((await bearer(first.access_token).get("/api/v1/transactions")).status).toBe(401);
  expect((await bearer(second.body.access_token).get("/api/v1/transactions")).status).toBe(200);

  const third = await http().post("/oauth/token", { grant_type: "refresh_token", refresh_token: second.body.refresh_token });
  expect(third.status).toBe(200);
  const [refreshed] = await events("auth.token.refreshed");
  expect(refreshed).toMatchObject({ user: { email: adminEmail }, action: "refresh" });
});

test("reusing a refresh token after the grace window revokes the whole session", async () => {
  const first = (await login(adminEmail, PASSWORD)).body;
  const second = (await form("/oauth/token", { grant_type: "refresh_token", refresh_token: first.refresh_token })).body;
  // Within REFRESH_REUSE_GRACE_SECONDS the old token answers the same pair (a concurrent refresh).
  const concurrent = (await form("/oauth/token", { grant_type: "refresh_token", refresh_token: first.refresh_token })).body;
  expect(concurrent.refresh_token).toBe(second.refresh_token);
  // The window has passed: moved back in the database rather than waited for.
  await app.runtime.sequelize.query(`UPDATE auth_tokens SET rotated_at = rotated_at - interval '1 hour' WHERE rotated_at IS NOT NULL`);

  const reuse = await form("/oauth/token", { grant_type: "refresh_token", refresh_token: first.refresh_token });
  expect(reuse.status).toBe(400);
  expect(reuse.body.error).toBe("invalid_grant");
  // The legitimate holder's newer tokens die with the session.
  expect((await bearer(second.access_token).get("/api/v1/transactions")).status).toBe(401);
  expect((await form("/oauth/token", { grant_type: "refresh_token", refresh_token: second.refresh_token })).body.error).toBe(
    "invalid_grant",
  );
  const [revoked] = await events("auth.token.revoked");
  expect(revoked).toMatchObject({ severity: "error", action: "revoke_session", error: expect.stringContaining("reuse") });
});

test("revocation (RFC 7009) takes effect on the next request; unknown tokens still answer 200", async () => {
  const pair = (await login(adminEmail, PASSWORD)).body;
  expect((await bearer(pair.access_token).get("/api/v1/transactions")).status).toBe(200);
  const revoke = await form("/oauth/revoke", { token: pair.access_token, token_type_hint: "access_token" });
  expect(revoke.status).toBe(200);
  const after = await bearer(pair.access_token).get("/api/v1/transactions");
  expect(after.status).toBe(401);
  expect(after.body).toEqual({ error: "unauthorized", message: "Access token or API key is invalid, expired, or missing" });
  expect((await form("/oauth/revoke", { token: "fga_unknown" })).status).toBe(200);
  const [revoked] = await events("auth.token.revoked");
  expect(revoked).toMatchObject({ action: "revoke_access_token", severity: "warning" });

  // Revoking the refresh token ends the session: its refresh no longer works.
  expect((await form("/oauth/revoke", { token: pair.refresh_token })).status).toBe(200);
  expect((await form("/oauth/token", { grant_type: "refresh_token", refresh_token: pair.refresh_token })).status).toBe(400);
});

test("the token endpoint refuses other grants and incomplete requests", async () => {
  expect((await form("/oauth/token", { grant_type: "password", username: "a", password: "b" })).body.error).toBe("unsupported_grant_type");
  const missing = await form("/oauth/token", { grant_type: "refresh_token" });
  expect(missing.status).toBe(400);
  expect(missing.body.error).toBe("bad_request");
  expect((await http().post("/auth/login", { email: adminEmail })).status).toBe(400);
});

test("logout ends the session: the cookie is cleared and the tokens stop working", async () => {
  const response = await login(adminEmail, PASSWORD);
  const cookie = response.headers.get("set-cookie")!.split(";")[0];
  const logout = await client(app.url, { cookie }).post("/auth/logout");
  expect(logout.status).toBe(200);
  expect(logout.headers.get("set-cookie")).toMatch(/^fg_session=;/);
  expect((await bearer(response.body.access_token).get("/api/v1/transactions")).status).toBe(401);
  expect((await client(app.url, { cookie }).post("/auth/logout")).status).toBe(401);
  const [loggedOut] = await events("auth.logout");
  expect(loggedOut).toMatchObject({ user: { email: adminEmail }, action: "logout" });
});

test("an expired session is refused and recorded once, whether used or swept", async () => {
  const { sequelize, services } = app.runtime;
  const used = (await login(adminEmail, PASSWORD)).body;
  const idle = (await login(adminEmail, PASSWORD)).body;
  await sequelize.query("UPDATE auth_sessions SET expires_at = now() - interval '1 second' WHERE ended_at IS NULL");
  expect((await bearer(used.access_token).get("/api/v1/transactions")).status).toBe(401);
  expect((await bearer(used.access_token).get("/api/v1/transactions")).status).toBe(401);
  const afterUse = await events("auth.session.expired");
  expect(afterUse).toHaveLength(1);
  expect(await services.sessions.sweepExpired()).toBeGreaterThanOrEqual(1);
  expect(await services.sessions.sweepExpired()).toBe(0);
  const all = await events("auth.session.expired");
  expect(all.length).toBeGreaterThan(1);
  expect(new Set(all.map((event) => event.sessionId)).size).toBe(all.length);
  expect((await form("/oauth/token", { grant_type: "refresh_token", refresh_token: idle.refresh_token })).status).toBe(400);
});

test("API keys keep working, and a bad bearer with a good key falls back to the key", async () => {
  const member = await createUser(app.runtime.services);
  const response = await client(app.url, { authorization: "Bearer fga_nonsense", "x-api-key": member.key }).get("/api/v1/transactions");
  expect(response.status).toBe(200);
});

test("login CSRF: a sign-in posted from another site is refused and sets no cookie; from this site it works", async () => {
  const before = (await events("auth.login.success")).length;
  const fields = { email: adminEmail, password: PASSWORD };
  const crossSite = await http().post("/auth/login", new URLSearchParams(fields).toString(), {
    "content-type": "application/x-www-form-urlencoded",
    origin: "https://attacker.example",
  });
  expect(crossSite.status).toBe(403);
  expect(crossSite.body).toEqual({ error: "forbidden", message: "Cross-site sign-in refused: sign in from this site" });
  expect(crossSite.headers.get("set-cookie")).toBeNull();
  const fetchMetadataOnly = await login(adminEmail, PASSWORD, { "sec-fetch-site": "cross-site" });
  expect(fetchMetadataOnly.status).toBe(403);
  await app.runtime.services.audit.settle();
  expect((await events("auth.login.success")).length).toBe(before);

  const sameSite = await login(adminEmail, PASSWORD, { origin: app.url, "sec-fetch-site": "same-origin" });
  expect(sameSite.status).toBe(200);
  expect(sameSite.headers.get("set-cookie")).toMatch(/HttpOnly/i);
});
