import { startIdp, type TestIdp } from "../fakes/oidc-idp";
import { Browser } from "../helpers/browser";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * Sign in with SSO from Sure's mobile app, as the app does it: it opens
 * `/auth/mobile/<provider>?device_id=…` in a browser (AuthService.buildSsoUrl), waits for its deep link
 * `sureapp://oauth/callback?…`, then POSTs the code to /api/v1/auth/sso_exchange, or onboards an
 * unlinked identity with sso_link / sso_create_account. Against the loopback IdP the SSO tests use.
 */

let app: TestApp;
let idp: TestIdp;
let admin: TestUser;
const DEVICE = { device_id: "ios-77", device_name: "iPhone", device_type: "ios", os_version: "18.1", app_version: "0.7.1" };
const jsonHeaders = { "content-type": "application/json", accept: "application/json" };
const api = () => client(`${app.url}/api/v1`, jsonHeaders);
const PASSWORD = "correct horse battery staple";

beforeAll(async () => {
  app = await startTestApp({
    env: {
      ALLOW_INSECURE_UPSTREAMS: "true",
      OUTBOUND_ALLOWLIST: "127.0.0.1,::1,localhost",
      RATE_LIMIT_REQUESTS: "0",
      MOBILE_SSO_PROVIDER_ALIASES: "openid_connect=corp",
    },
  });
  admin = await createUser(app.runtime.services, { role: "admin" });
  idp = await startIdp({ name: "corp" });
  idp.addClient({ client_id: "sure-app", client_secret: "corp-secret", redirect_uris: [`${app.url}/auth/sso/corp/callback`] });
  const created = await apiKeyClient(app.url, admin.key).graphql(
    `mutation ($input: SsoProviderInput!) { createSsoProvider(input: $input) { id } }`,
    { input: { name: "Corp", slug: "corp", issuer: idp.issuer, clientId: "sure-app", clientSecret: "corp-secret", jitProvisioning: true } },
  );
  expect(created.body.errors).toBeUndefined();
}, 60_000);

afterAll(async () => {
  await idp?.stop();
  await app?.stop();
});

/** The app's browser round trip, ending at the deep link (which only the app can open). */
async function mobileSso(provider: string, query: Record<string, string> = DEVICE): Promise<URL> {
  const page = await new Browser().get(`${app.url}/auth/mobile/${provider}?${new URLSearchParams(query)}`, {
    stopAt: (target) => target.protocol === "sureapp:",
  });
  expect(page.location).toMatch(/^sureapp:\/\/oauth\/callback\?/);
  return new URL(page.location!);
}

const events = async (type: string, email: string) =>
  (await app.runtime.services.audit.list({ eventTypes: [type] }, { first: 100 })).events.filter((event) => event.user?.email === email);

async function expectUsable(response: { status: number; body: any }, email: string) {
  expect(response.status).toBe(200);
  expect(response.body).toMatchObject({
    access_token: expect.any(String),
    refresh_token: expect.any(String),
    token_type: "Bearer",
    expires_in: expect.any(Number),
    created_at: expect.any(Number),
    user: { id: expect.any(String), email, ui_layout: "dashboard", ai_enabled: false },
  });
  const bearer = client(`${app.url}/api/v1`, { authorization: `Bearer ${response.body.access_token}`, accept: "application/json" });
  expect((await bearer.get("/accounts")).status).toBe(200);
  const refreshed = await api().post("/auth/refresh", { refresh_token: response.body.refresh_token, device: DEVICE });
  expect(refreshed.status).toBe(200);
}

test("a new identity: account_not_linked with a linking code, sso_create_account signs in; next time the code exchange does, once", async () => {
  idp.setUser("erin", { email: "erin@corp.test", email_verified: true, name: "Erin Example" });
  idp.setLoginAs("erin");
  const onboarding = await mobileSso("openid_connect");
  expect(Object.fromEntries(onboarding.searchParams)).toMatchObject({
    status: "account_not_linked",
    email: "erin@corp.test",
    first_name: "Erin",
    last_name: "Example",
    allow_account_creation: "true",
    has_pending_invitation: "false",
  });
  const created = await api().post("/auth/sso_create_account", { linking_code: onboarding.searchParams.get("linking_code") });
  await expectUsable(created, "erin@corp.test");
  expect(await events("user.created", "erin@corp.test")).toHaveLength(1);
  expect(await events("account.connected", "erin@corp.test")).toHaveLength(1);
  const [login] = await events("auth.login.success", "erin@corp.test");
  expect(login.changes).toEqual({ device: { old: null, new: DEVICE } });
  // The linking code worked once.
  const again = await api().post("/auth/sso_create_account", { linking_code: onboarding.searchParams.get("linking_code") });
  expect(again.status).toBe(401);
  expect(again.body.error).toBe("Linking code is invalid or expired");

  // Linked now: the deep link carries a one-time code, exchanged for tokens.
  const back = await mobileSso("corp");
  const code = back.searchParams.get("code");
  expect(code).toBeTruthy();
  expect([...back.searchParams.keys()]).toEqual(["code"]);
  await expectUsable(await api().post("/auth/sso_exchange", { code }), "erin@corp.test");
  const replay = await api().post("/auth/sso_exchange", { code });
  expect(replay.status).toBe(401);
  expect(replay.body).toMatchObject({ error: "invalid_or_expired_code", message: "Authorization code is invalid or expired" });
  const logins = await events("auth.login.success", "erin@corp.test");
  expect(logins).toHaveLength(2);
  expect(logins.every((event) => event.provider !== null)).toBe(true);
});

test("sso_link connects the identity to an existing account with its password (audited), and a wrong password is upstream's 401", async () => {
  const local = await app.runtime.services.users.create({ email: `frank-${Date.now()}@home.test`, password: PASSWORD });
  idp.setUser("frank", { email: "frank@corp.test", email_verified: true, name: "Frank" });
  idp.setLoginAs("frank");
  const onboarding = await mobileSso("corp");
  const linkingCode = onboarding.searchParams.get("linking_code");
  const wrong = await api().post("/auth/sso_link", { linking_code: linkingCode, email: local.email, password: "nope" });
  expect(wrong.status).toBe(401);
  expect(wrong.body.error).toBe("Invalid email or password");
  const linked = await api().post("/auth/sso_link", { linking_code: linkingCode, email: local.email, password: PASSWORD });
  await expectUsable(linked, local.email);
  expect(await events("account.connected", local.email)).toHaveLength(1);
  // The identity now signs straight in.
  const back = await mobileSso("corp");
  await expectUsable(await api().post("/auth/sso_exchange", { code: back.searchParams.get("code") }), local.email);
});

test("refusals go back to the app's link; a redirect_uri outside the allowlist is refused without redirecting", async () => {
  const unknown = await mobileSso("nowhere");
  expect(Object.fromEntries(unknown.searchParams)).toEqual({ error: "invalid_provider", message: "SSO provider not configured" });
  const noDevice = await mobileSso("corp", { device_id: "x" });
  expect(noDevice.searchParams.get("error")).toBe("missing_device_info");
  const evil = await fetch(
    `${app.url}/auth/mobile/corp?${new URLSearchParams({ ...DEVICE, redirect_uri: "https://evil.example/steal" })}`,
    {
      redirect: "manual",
    },
  );
  expect(evil.status).toBe(422);
  expect(evil.headers.get("location")).toBeNull();
  const missing = await api().post("/auth/sso_exchange", {});
  expect(missing.status).toBe(401);
  expect(missing.body.message).toBe("Authorization code is required");
});
