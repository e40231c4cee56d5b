/**
 * SSO with OpenID Connect, end to end: two real IdPs (oidc-provider) on loopback, the service's
 * /auth/sso routes, and a cookie-keeping Browser following every redirect. Covers provider
 * administration and its events, login with JIT provisioning and role sync, each failure reason,
 * key rotation at the IdP, suspension mid-session, linking and unlinking identities, RP-initiated
 * logout and the CSRF check on cookie-authenticated writes.
 */
import { QueryTypes } from "sequelize";
import { startIdp, type TestIdp } from "../fakes/oidc-idp";
import { SkewedIdp } from "../fakes/skewed-idp";
import { Browser, type Page } from "../helpers/browser";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

let app: TestApp;
let acme: TestIdp;
let globex: TestIdp;
let admin: TestUser;
let acmeId: string;
let globexId: string;

const PROVIDER_FIELDS = `id slug name issuer clientId scopes claimMapping { email name groups } roleMappings { group role }
  defaultRole jitProvisioning allowedDomains enabled redirectUri postLogoutRedirectUri loginUrl`;

const gql = (query: string, variables?: Record<string, unknown>, key = admin.key) => apiKeyClient(app.url, key).graphql(query, variables);

async function events(type: string, provider?: string) {
  return (await app.runtime.services.audit.list({ eventTypes: [type], providers: provider ? [provider] : [] }, { first: 100 })).events;
}

async function createProvider(input: Record<string, unknown>) {
  const response = await gql(`mutation ($input: SsoProviderInput!) { createSsoProvider(input: $input) { ${PROVIDER_FIELDS} } }`, { input });
  expect(response.body.errors).toBeUndefined();
  return response.body.data.createSsoProvider;
}

/** Signs in through a provider in a fresh browser (a fresh IdP session too), ending on the service's answer. */
async function ssoLogin(slug: string, browser = new Browser()): Promise<{ page: Page; browser: Browser; body: any }> {
  const page = await browser.get(`${app.url}/auth/sso/${slug}/start`);
  return { page, browser, body: JSON.parse(page.text) };
}

beforeAll(async () => {
  app = await startTestApp({
    env: {
      ALLOW_INSECURE_UPSTREAMS: "true",
      OUTBOUND_ALLOWLIST: "127.0.0.1,::1,localhost",
      SSO_JWKS_COOLDOWN_MS: "0",
      RATE_LIMIT_REQUESTS: "0",
    },
  });
  admin = await createUser(app.runtime.services, { role: "admin" });
  acme = await startIdp({ name: "acme" });
  globex = await startIdp({ name: "globex" });
  acme.addClient({
    client_id: "finance-gateway",
    client_secret: "acme-client-secret",
    redirect_uris: [`${app.url}/auth/sso/acme/callback`],
    post_logout_redirect_uris: [`${app.url}/auth/sso/logged-out`],
  });
  globex.addClient({
    client_id: "fg-globex",
    client_secret: "globex-client-secret",
    redirect_uris: [`${app.url}/auth/sso/globex/callback`],
    post_logout_redirect_uris: [`${app.url}/auth/sso/logged-out`],
  });
  acme.setUser("alice", { email: "alice@acme.test", email_verified: true, name: "Alice Doe", groups: ["finance-admins"] });
  globex.setUser("bob", { email: "bob@globex.test", email_verified: true, name: "Bob", groups: [] });

  const acmeProvider = await createProvider({
    name: "Acme Okta",
    slug: "acme",
    issuer: acme.issuer,
    clientId: "finance-gateway",
    clientSecret: "acme-client-secret",
    scopes: ["openid", "email", "profile", "groups"],
    roleMappings: [
      { group: "finance-admins", role: "admin" },
      { group: "auditors", role: "auditor" },
    ],
    defaultRole: "member",
    jitProvisioning: true,
    allowedDomains: ["acme.test"],
  });
  acmeId = acmeProvider.id;
  const globexProvider = await createProvider({
    name: "Globex Keycloak",
    slug: "globex",
    issuer: globex.issuer,
    clientId: "fg-globex",
    clientSecret: "globex-client-secret",
    jitProvisioning: false,
  });
  globexId = globexProvider.id;
}, 60_000);

afterAll(async () => {
  await Promise.all([acme?.stop(), globex?.stop()]);
  await app?.stop();
});

describe("provider administration", () => {
  test("a provider is created with its secret encrypted at rest and never returned, and provider.created is recorded", async () => {
    const response = await gql(`{ ssoProviders { ${PROVIDER_FIELDS} } }`);
    const acmeView = response.body.data.ssoProviders.find((provider: { slug: string }) => provider.slug === "acme");
    expect(acmeView).toMatchObject({
      name: "Acme Okta",
      issuer: acme.issuer,
      clientId: "finance-gateway",
      enabled: true,
      redirectUri: `${app.url}/auth/sso/acme/callback`,
      postLogoutRedirectUri: `${app.url}/auth/sso/logged-out`,
      loginUrl: `${app.url}/auth/sso/acme/start`,
      claimMapping: { email: "email", name: "name", groups: "groups" },
    });
    expect(JSON.stringify(response.body)).not.toContain("acme-client-secret");
    const [row] = await app.runtime.sequelize.query<{ secret: string }>(
      `SELECT client_secret_encrypted AS secret FROM sso_providers WHERE id = $1`,
      { bind: [acmeId], type: QueryTypes.SELECT },
    );
    expect(row.secret).toMatch(/^v1:/);
    expect(row.secret).not.toContain("acme-client-secret");

    const [created] = await events("provider.created", acmeId);
    expect(created).toMatchObject({
      user: { id: admin.userId, email: admin.email },
      resource: { type: "sso_provider", id: acmeId, label: "acme" },
    });
    expect(created.changes!.clientSecret).toEqual({ old: null, new: "[REDACTED]" });
    expect(created.changes!.issuer).toEqual({ old: null, new: acme.issuer });
    expect(JSON.stringify(created)).not.toContain("acme-client-secret");
  });

  test("an update records exactly what changed, the secret only as redacted", async () => {
    const spare = await createProvider({
      name: "Spare",
      slug: "spare",
      issuer: acme.issuer,
      clientId: "spare",
      clientSecret: "first-secret",
    });
    const response = await gql(
      `mutation ($id: ID!, $input: SsoProviderInput!) { updateSsoProvider(id: $id, input: $input) { name allowedDomains } }`,
      {
        id: spare.id,
        input: { name: "Spare IdP", clientSecret: "second-secret", allowedDomains: ["Example.COM"] },
      },
    );
    expect(response.body.data.updateSsoProvider).toEqual({ name: "Spare IdP", allowedDomains: ["example.com"] });
    const [updated] = await events("provider.updated", spare.id);
    expect(updated.changes).toEqual({
      name: { old: "Spare", new: "Spare IdP" },
      clientSecret: { old: "[REDACTED]", new: "[REDACTED]" },
      allowedDomains: { old: [], new: ["example.com"] },
    });
    expect(JSON.stringify(updated)).not.toMatch(/first-secret|second-secret/);

    // The same values again change nothing and record nothing.
    await gql(`mutation ($id: ID!, $input: SsoProviderInput!) { updateSsoProvider(id: $id, input: $input) { id } }`, {
      id: spare.id,
      input: { name: "Spare IdP", clientSecret: "second-secret" },
    });
    expect(await events("provider.updated", spare.id)).toHaveLength(1);

    const disabled = await gql(`mutation ($id: ID!) { disableSsoProvider(id: $id) { enabled } }`, { id: spare.id });
    expect(disabled.body.data.disableSsoProvider.enabled).toBe(false);
    await gql(`mutation ($id: ID!) { enableSsoProvider(id: $id) { enabled } }`, { id: spare.id });
    expect((await events("provider.disabled", spare.id))[0].changes).toEqual({ enabled: { old: true, new: false } });
    expect(await events("provider.enabled", spare.id)).toHaveLength(1);

    const deleted = await gql(`mutation ($id: ID!) { deleteSsoProvider(id: $id) { slug } }`, { id: spare.id });
    expect(deleted.body.data.deleteSsoProvider.slug).toBe("spare");
    expect(await events("provider.deleted", spare.id)).toHaveLength(1);
    const again = await gql(`mutation ($id: ID!) { deleteSsoProvider(id: $id) { slug } }`, { id: spare.id });
    expect(again.body.errors[0].extensions.code).toBe("NOT_FOUND");
  });

  test("bad input is refused field by field and writes nothing", async () => {
    const before = await app.runtime.sequelize.query(`SELECT count(*)::int AS n FROM sso_providers`, { type: QueryTypes.SELECT });
    const response = await gql(`mutation ($input: SsoProviderInput!) { createSsoProvider(input: $input) { id } }`, {
      input: {
        name: "",
        slug: "-Bad Slug",
        issuer: "not a url",
        clientId: "x",
        scopes: ["email"],
        roleMappings: [{ group: "g", role: "owner" }],
        allowedDomains: ["not a domain"],
      },
    });
    expect(response.body.errors[0].extensions.code).toBe("VALIDATION_FAILED");
    expect(response.body.errors[0].extensions.errors).toEqual(
      expect.arrayContaining([
        "Name can't be blank",
        expect.stringMatching(/^Slug must be/),
        expect.stringMatching(/^Issuer/),
        "Client secret can't be blank",
        "Scopes must include openid",
        expect.stringMatching(/^Role mapping role must be one of/),
        expect.stringMatching(/^Allowed domain/),
      ]),
    );
    const duplicate = await gql(`mutation ($input: SsoProviderInput!) { createSsoProvider(input: $input) { id } }`, {
      input: { name: "Again", slug: "acme", issuer: acme.issuer, clientId: "x", clientSecret: "y" },
    });
    expect(duplicate.body.errors[0].extensions.errors).toEqual(["Slug has already been taken"]);
    const after = await app.runtime.sequelize.query(`SELECT count(*)::int AS n FROM sso_providers`, { type: QueryTypes.SELECT });
    expect(after).toEqual(before);
  });

  test("only administrators manage providers, and only with a read_write credential", async () => {
    const member = await createUser(app.runtime.services);
    const listed = await gql(`{ ssoProviders { id } }`, undefined, member.key);
    expect(listed.body.errors[0].extensions.code).toBe("FORBIDDEN");
    const readOnly = await gql(`mutation ($id: ID!) { disableSsoProvider(id: $id) { id } }`, { id: acmeId }, admin.readKey);
    expect(readOnly.body.errors[0].extensions.code).toBe("FORBIDDEN");
    const anonymous = await client(app.url).graphql(`{ ssoProviders { id } }`);
    expect(anonymous.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
  });

  test("testSsoProvider discovers for real and its test sign-in records the outcome without signing in", async () => {
    const response = await gql(
      `mutation ($id: ID!) { testSsoProvider(id: $id) { ok error loginUrl endpoints { issuer authorizationEndpoint jwksUri endSessionEndpoint } } }`,
      { id: acmeId },
    );
    const result = response.body.data.testSsoProvider;
    expect(result).toMatchObject({
      ok: true,
      error: null,
      endpoints: { issuer: acme.issuer, endSessionEndpoint: `${acme.issuer}/session/end` },
    });
    expect(result.loginUrl).toMatch(new RegExp(`^${app.url}/auth/sso/acme/start\\?test=`));
    const [discovery] = await events("provider.test", acmeId);
    expect(discovery).toMatchObject({ action: "test.discovery", error: null, user: { id: admin.userId } });

    const successesBefore = (await events("auth.login.success")).length;
    const browser = new Browser();
    const page = await browser.get(result.loginUrl);
    expect(page.status).toBe(200);
    expect(JSON.parse(page.text)).toMatchObject({ test: true, provider: "acme", email: "alice@acme.test", role: "admin" });
    expect(browser.cookie(app.url, "fg_session")).toBeUndefined();
    expect(await events("auth.login.success")).toHaveLength(successesBefore);
    const [completed] = (await events("provider.test", acmeId)).filter((event) => event.action === "test.login");
    expect(completed.changes!.outcome.new).toMatchObject({ email: "alice@acme.test", groups: ["finance-admins"], role: "admin" });

    // The test link works once.
    const reused = await new Browser().get(result.loginUrl, { headers: { accept: "application/json" } });
    expect(reused.status).toBe(422);
  });

  test("a test against an unreachable issuer reports the failure and records it", async () => {
    const broken = await createProvider({ name: "Broken", slug: "broken", issuer: "http://127.0.0.1:9", clientId: "x", clientSecret: "y" });
    const response = await gql(`mutation ($id: ID!) { testSsoProvider(id: $id) { ok error loginUrl } }`, { id: broken.id });
    expect(response.body.data.testSsoProvider).toMatchObject({ ok: false, loginUrl: null, error: expect.stringMatching(/discovery/) });
    const [event] = await events("provider.test", broken.id);
    expect(event.error).toMatch(/discovery/);
    await gql(`mutation ($id: ID!) { deleteSsoProvider(id: $id) { id } }`, { id: broken.id });
  });
});

describe("signing in", () => {
  test("the first sign-in provisions the user (JIT), connects the identity, maps the role and opens a session", async () => {
    const { page, browser, body } = await ssoLogin("acme");
    expect(page.status).toBe(200);
    expect(body).toMatchObject({
      access_token: expect.stringMatching(/^fga_/),
      refresh_token: expect.stringMatching(/^fgr_/),
      token_type: "Bearer",
      user: { email: "alice@acme.test", role: "admin" },
    });
    // The authorization request used PKCE S256, state and nonce, and the exact registered redirect URI.
    const authorize = new URL(page.hops.find((hop) => hop.url.startsWith(`${acme.issuer}/auth?`))!.url);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("state")).toBeTruthy();
    expect(authorize.searchParams.get("nonce")).toBeTruthy();
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${app.url}/auth/sso/acme/callback`);

    const session = browser.cookie(app.url, "fg_session")!;
    expect(session.httpOnly).toBe(true);
    expect(session.sameSite?.toLowerCase()).toBe("lax");
    const userId = body.user.id;
    const [created] = await events("user.created", acmeId);
    expect(created).toMatchObject({ action: "provision", user: { id: userId, email: "alice@acme.test" }, resource: { id: userId } });
    const [connected] = await events("account.connected", acmeId);
    expect(connected.user).toEqual({ id: userId, email: "alice@acme.test" });
    const [success] = await events("auth.login.success", acmeId);
    expect(success).toMatchObject({ user: { id: userId }, provider: acmeId, sessionId: expect.any(String) });

    const me = await client(app.url, { authorization: `Bearer ${body.access_token}` }).graphql(
      `{ me { email role } connectedAccounts { providerSlug email } }`,
    );
    expect(me.body.data).toEqual({
      me: { email: "alice@acme.test", role: "admin" },
      connectedAccounts: [{ providerSlug: "acme", email: "alice@acme.test" }],
    });

    // A second sign-in finds the same user through the connected account.
    const again = await ssoLogin("acme");
    expect(again.body.user.id).toBe(userId);
    expect(await events("user.created", acmeId)).toHaveLength(1);
  });

  test("roles follow the IdP's groups at each sign-in (user.roles.synced with old and new)", async () => {
    acme.setUser("dave", { email: "dave@acme.test", email_verified: true, name: "Dave", groups: ["auditors"] });
    acme.setLoginAs("dave");
    try {
      const first = await ssoLogin("acme");
      expect(first.body.user.role).toBe("auditor");
      acme.setUser("dave", { email: "dave@acme.test", email_verified: true, name: "Dave", groups: [] });
      const second = await ssoLogin("acme");
      expect(second.body.user.role).toBe("member");
      const synced = (await events("user.roles.synced", acmeId)).filter((event) => event.user?.id === first.body.user.id);
      expect(synced).toHaveLength(1);
      expect(synced[0].changes).toEqual({ role: { old: "auditor", new: "member" } });
    } finally {
      acme.setLoginAs("alice");
    }
  });

  test("a role sync never demotes the last active administrator; the sign-in goes on with the current role", async () => {
    const alice = (await ssoLogin("acme")).body.user;
    expect(alice.role).toBe("admin");
    const others = await app.runtime.sequelize.query<{ id: string }>(
      `UPDATE users SET role = 'member' WHERE role = 'admin' AND id <> $1 RETURNING id`,
      { bind: [alice.id], type: QueryTypes.SELECT },
    );
    acme.setUser("alice", { email: "alice@acme.test", email_verified: true, name: "Alice Doe", groups: [] });
    try {
      const { page, body } = await ssoLogin("acme");
      expect(page.status).toBe(200);
      expect(body.user.role).toBe("admin");
      const synced = (await events("user.roles.synced", acmeId)).filter((event) => event.resource?.id === alice.id);
      expect(synced).toHaveLength(0);
    } finally {
      acme.setUser("alice", { email: "alice@acme.test", email_verified: true, name: "Alice Doe", groups: ["finance-admins"] });
      await app.runtime.sequelize.query(`UPDATE users SET role = 'admin' WHERE id = ANY($1::uuid[])`, {
        bind: [others.map((row) => row.id)],
      });
    }
  });

  test("a callback with a return_to path redirects there; an absolute return_to is refused", async () => {
    const browser = new Browser();
    const page = await browser.get(`${app.url}/auth/sso/acme/start?return_to=${encodeURIComponent("/graphql?from=sso")}`, {
      stopAt: (target) => target.pathname === "/graphql",
    });
    expect(page.location).toBe(`${app.url}/graphql?from=sso`);
    expect(browser.cookie(app.url, "fg_session")).toBeDefined();
    const evil = await client(app.url).get(`/auth/sso/acme/start?return_to=${encodeURIComponent("https://evil.test/")}`);
    expect(evil.status).toBe(422);
  });

  describe("each failure is refused with its reason and recorded as auth.login.failed", () => {
    async function expectFailure(page: Page, status: number, reason: string) {
      expect(page.status).toBe(status);
      expect(JSON.parse(page.text)).toMatchObject({ error: "sso_login_failed", reason, message: expect.any(String) });
      const failed = await events("auth.login.failed");
      expect(failed[0].error).toMatch(new RegExp(`^${reason}: `));
      return failed[0];
    }

    test("the IdP answers with an error (the user cancelled)", async () => {
      acme.failNextAuthorization("access_denied", "User cancelled");
      const { page } = await ssoLogin("acme");
      const event = await expectFailure(page, 401, "idp_error");
      expect(event.error).toBe("idp_error: access_denied: User cancelled");
      expect(event.provider).toBe(acmeId);
    });

    test("the state does not match this browser's request", async () => {
      const browser = new Browser();
      const atCallback = await browser.get(`${app.url}/auth/sso/acme/start`, { stopAt: (target) => target.pathname.endsWith("/callback") });
      // Another browser (no binding cookie) presents the callback: login CSRF / a stolen code.
      const elsewhere = await new Browser().get(atCallback.location!);
      await expectFailure(elsewhere, 400, "state_mismatch");
      // And a forged state in the right browser.
      const forged = new URL(atCallback.location!);
      forged.searchParams.set("state", "forged");
      await expectFailure(await browser.get(forged.href), 400, "state_mismatch");
    });

    test("the ID token's nonce does not match", async () => {
      acme.tamperNextIdTokenNonce();
      const { page } = await ssoLogin("acme");
      await expectFailure(page, 401, "nonce_mismatch");
    });

    test("the provider is disabled", async () => {
      await gql(`mutation ($id: ID!) { disableSsoProvider(id: $id) { id } }`, { id: globexId });
      try {
        const { page } = await ssoLogin("globex");
        await expectFailure(page, 403, "provider_disabled");
      } finally {
        await gql(`mutation ($id: ID!) { enableSsoProvider(id: $id) { id } }`, { id: globexId });
      }
    });

    test("the e-mail domain is not allowed", async () => {
      acme.setUser("mallory", { email: "mallory@elsewhere.test", email_verified: true, groups: ["finance-admins"] });
      acme.setLoginAs("mallory");
      try {
        const { page } = await ssoLogin("acme");
        const event = await expectFailure(page, 403, "domain_not_allowed");
        expect(event.user).toEqual({ id: null, email: "mallory@elsewhere.test" });
      } finally {
        acme.setLoginAs("alice");
      }
      expect(await app.runtime.services.users.findByEmail("mallory@elsewhere.test")).toBeNull();
    });

    test("just-in-time provisioning is off and there is no account", async () => {
      const { page } = await ssoLogin("globex");
      await expectFailure(page, 403, "jit_disabled_no_account");
      expect(await app.runtime.services.users.findByEmail("bob@globex.test")).toBeNull();
    });

    test("the IdP does not vouch for the e-mail address", async () => {
      acme.setUser("eve", { email: "eve@acme.test", email_verified: false });
      acme.setLoginAs("eve");
      try {
        const { page } = await ssoLogin("acme");
        await expectFailure(page, 403, "email_not_verified");
      } finally {
        acme.setLoginAs("alice");
      }
    });

    test("the IdP refuses the code (the configured client secret is wrong)", async () => {
      acme.addClient({
        client_id: "misconfigured",
        client_secret: "the-real-secret",
        redirect_uris: [`${app.url}/auth/sso/misconfigured/callback`],
      });
      await createProvider({
        name: "Misconfigured",
        slug: "misconfigured",
        issuer: acme.issuer,
        clientId: "misconfigured",
        clientSecret: "a-stale-secret",
      });
      const { page } = await ssoLogin("misconfigured");
      const event = await expectFailure(page, 502, "token_exchange_failed");
      expect(event.error).not.toContain("a-stale-secret");
    });

    test("the mapped e-mail claim is missing", async () => {
      acme.addClient({ client_id: "workmail", client_secret: "workmail-secret", redirect_uris: [`${app.url}/auth/sso/workmail/callback`] });
      await createProvider({
        name: "Work mail",
        slug: "workmail",
        issuer: acme.issuer,
        clientId: "workmail",
        clientSecret: "workmail-secret",
        claimMapping: { email: "work_email" },
        jitProvisioning: true,
      });
      const { page } = await ssoLogin("workmail");
      await expectFailure(page, 403, "missing_email_claim");
    });

    test("the user is suspended, and a browser asking for HTML gets a page", async () => {
      const user = await app.runtime.services.users.findByEmail("alice@acme.test");
      await app.runtime.sequelize.query(`UPDATE users SET status = 'suspended' WHERE id = $1`, { bind: [user!.id] });
      try {
        const browser = new Browser();
        const page = await browser.get(`${app.url}/auth/sso/acme/start`, {
          headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" },
        });
        expect(page.status).toBe(403);
        expect(page.headers.get("content-type")).toMatch(/text\/html/);
        expect(page.text).toContain("Your account has been suspended.");
        const [failed] = await events("auth.login.failed");
        expect(failed).toMatchObject({ error: expect.stringMatching(/^user_suspended: /), user: { id: user!.id } });
        expect(browser.cookie(app.url, "fg_session")).toBeUndefined();
      } finally {
        await app.runtime.sequelize.query(`UPDATE users SET status = 'active' WHERE id = $1`, { bind: [user!.id] });
      }
    });
  });

  test("a signature key rotated at the IdP is picked up: the JWKS is fetched again and sign-in still works", async () => {
    await ssoLogin("acme");
    // Discovery is cached: more sign-ins do not fetch it again.
    const discoveries = acme.requestsTo("/.well-known/openid-configuration").length;
    await ssoLogin("acme");
    expect(acme.requestsTo("/.well-known/openid-configuration")).toHaveLength(discoveries);
    const fetchesBefore = acme.requestsTo("/jwks").length;
    expect(fetchesBefore).toBeGreaterThan(0);
    const kid = await acme.rotateKeys();
    const { page, body } = await ssoLogin("acme");
    expect(page.status).toBe(200);
    expect(body.user.email).toBe("alice@acme.test");
    expect(acme.requestsTo("/jwks").length).toBeGreaterThan(fetchesBefore);
    expect(acme.publishedKids).toEqual([kid]);
  });

  test("suspending a signed-in user (suspendUser) stops their token and cookie at once, and their next SSO sign-in", async () => {
    const { browser, body } = await ssoLogin("acme");
    const bearer = client(app.url, { authorization: `Bearer ${body.access_token}` });
    expect((await bearer.graphql(`{ me { email } }`)).body.data.me.email).toBe("alice@acme.test");
    const suspended = await gql(`mutation ($id: ID!) { suspendUser(id: $id, reason: "lost laptop") { status } }`, { id: body.user.id });
    expect(suspended.body.data.suspendUser.status).toBe("suspended");
    try {
      expect((await bearer.graphql(`{ me { email } }`)).status).toBe(401);
      const cookie = browser.cookieHeader(app.url);
      expect((await client(app.url, { cookie }).graphql(`{ me { email } }`)).status).toBe(401);
      const again = await ssoLogin("acme", browser);
      expect(again.page.status).toBe(403);
      expect(again.body.reason).toBe("user_suspended");
    } finally {
      await gql(`mutation ($id: ID!) { reactivateUser(id: $id) { status } }`, { id: body.user.id });
    }
  });
});

describe("connected accounts", () => {
  test("a signed-in user links another identity, then unlinks it; the last way in cannot be removed", async () => {
    globex.setUser("alice-g", { email: "alice@globex.test", email_verified: true, name: "Alice at Globex" });
    globex.setLoginAs("alice-g");
    const { browser, body } = await ssoLogin("acme");
    const userId = body.user.id;
    const linked = await browser.post(`${app.url}/auth/sso/globex/link`, {});
    expect(linked.status).toBe(200);
    expect(JSON.parse(linked.text)).toMatchObject({ message: "Account connected", provider: "globex", email: "alice@globex.test" });

    const [connected] = await events("account.connected", globexId);
    expect(connected).toMatchObject({
      user: { id: userId },
      changes: { identity: { old: null, new: expect.objectContaining({ provider: "globex" }) } },
    });
    const [linkedEvent] = await events("account.linked", globexId);
    expect(linkedEvent.changes).toEqual({ connectedAccounts: { old: 1, new: 2 } });

    // The linked identity signs in as the same user, though globex does no JIT provisioning.
    const viaGlobex = await ssoLogin("globex");
    expect(viaGlobex.body.user.id).toBe(userId);

    const bearer = client(app.url, { authorization: `Bearer ${body.access_token}` });
    const accounts = (await bearer.graphql(`{ connectedAccounts { id providerSlug } }`)).body.data.connectedAccounts;
    expect(accounts.map((account: { providerSlug: string }) => account.providerSlug)).toEqual(["acme", "globex"]);
    const disconnect = (id: string) =>
      bearer.graphql(`mutation ($id: ID!) { disconnectConnectedAccount(id: $id) { providerSlug } }`, { id });
    const globexAccount = accounts.find((account: { providerSlug: string }) => account.providerSlug === "globex");
    expect((await disconnect(globexAccount.id)).body.data.disconnectConnectedAccount.providerSlug).toBe("globex");
    expect((await events("account.disconnected", globexId))[0]).toMatchObject({ user: { id: userId }, resource: { id: globexAccount.id } });
    expect((await events("account.unlinked", globexId))[0].changes).toEqual({ connectedAccounts: { old: 2, new: 1 } });

    const acmeAccount = accounts.find((account: { providerSlug: string }) => account.providerSlug === "acme");
    const last = await disconnect(acmeAccount.id);
    expect(last.body.errors[0].extensions.code).toBe("CONFLICT");
    expect(last.body.errors[0].message).toMatch(/last way to sign in/);
    expect((await bearer.graphql(`{ connectedAccounts { id } }`)).body.data.connectedAccounts).toHaveLength(1);

    // Another user cannot take an identity that is already connected.
    globex.setUser("carl", { email: "carl@globex.test", email_verified: true });
    const other = await app.runtime.services.users.create({ email: "carl@example.test", password: "a long enough password" });
    const otherLogin = await client(app.url).post("/auth/login", { email: other.email, password: "a long enough password" });
    const otherBrowser = new Browser();
    otherBrowser.setCookie(app.url, `fg_session=${/fg_session=([^;]+)/.exec(otherLogin.headers.get("set-cookie")!)![1]}; Path=/; HttpOnly`);
    await otherBrowser.post(`${app.url}/auth/sso/acme/link`, {});
    const taken = await otherBrowser.post(`${app.url}/auth/sso/acme/link`, {});
    expect(taken.status).toBe(409);
    expect(JSON.parse(taken.text).reason).toBe("identity_already_linked");
    globex.setLoginAs("bob");
  });
});

describe("cookies, logout and CSRF", () => {
  test("served over https (behind the trusted proxy), the session and binding cookies are Secure", async () => {
    const browser = new Browser();
    const https = { "x-forwarded-proto": "https" };
    const atIdp = await browser.get(`${app.url}/auth/sso/acme/start`, {
      headers: https,
      stopAt: (target) => target.origin === acme.issuer,
    });
    expect(browser.cookie(app.url, "fg_sso")).toMatchObject({ secure: true, httpOnly: true, path: "/auth/sso/acme/" });
    const done = await browser.follow(atIdp, { headers: https });
    expect(done.status).toBe(200);
    expect(browser.cookie(app.url, "fg_session")).toMatchObject({ secure: true, httpOnly: true });
    // Plain http (a local try-out) cannot use Secure cookies.
    const plain = await ssoLogin("acme");
    expect(plain.browser.cookie(app.url, "fg_session")!.secure).toBe(false);
  });

  test("logout ends the session and sends the browser to the IdP's end-session endpoint (RP-initiated)", async () => {
    const { browser, body } = await ssoLogin("acme");
    const loggedOut = await browser.post(`${app.url}/auth/logout`, {}, { headers: { accept: "application/json" } });
    expect(loggedOut.status).toBe(200);
    const answer = JSON.parse(loggedOut.text);
    const endSession = new URL(answer.end_session_url);
    expect(`${endSession.origin}${endSession.pathname}`).toBe(`${acme.issuer}/session/end`);
    expect(endSession.searchParams.get("post_logout_redirect_uri")).toBe(`${app.url}/auth/sso/logged-out`);
    expect(endSession.searchParams.get("id_token_hint")).toBeTruthy();
    const [logout] = await events("auth.logout", acmeId);
    expect(logout).toMatchObject({ action: "logout.rp_initiated", provider: acmeId, user: { id: body.user.id } });
    expect((await client(app.url, { authorization: `Bearer ${body.access_token}` }).graphql(`{ me { id } }`)).status).toBe(401);

    const confirm = await browser.get(endSession.href);
    const done = await browser.submitForm(confirm, { submitter: "logout" });
    expect(done.url).toBe(`${app.url}/auth/sso/logged-out`);
    expect(done.status).toBe(200);
  });

  test("a cookie-authenticated write from another site is refused; from this site it works", async () => {
    const { browser } = await ssoLogin("acme");
    const cookie = browser.cookieHeader(app.url);
    const mutation = `mutation { createApiKey(scope: "read") { plaintext } }`;
    const crossSite = await client(app.url, { cookie, origin: "https://evil.test" }).graphql(mutation);
    expect(crossSite.status).toBe(403);
    const fetchSite = await client(app.url, { cookie, "sec-fetch-site": "cross-site" }).graphql(mutation);
    expect(fetchSite.status).toBe(403);
    const sameSite = await client(app.url, { cookie, origin: app.url }).graphql(mutation);
    expect(sameSite.body.data.createApiKey.plaintext).toMatch(/^fgk_/);
  });
});

describe("clock skew between the IdP and the service", () => {
  let skewed: SkewedIdp;
  beforeAll(async () => {
    skewed = await new SkewedIdp().start();
    await createProvider({
      name: "Skewed",
      slug: "skewed",
      issuer: skewed.issuer,
      clientId: "skew-client",
      clientSecret: "skew",
      jitProvisioning: true,
    });
  });
  afterAll(() => skewed?.stop());

  test.each([
    ["45 s ahead", 45],
    ["330 s behind (the token expired 30 s ago by our clock)", -330],
  ])("an IdP clock %s is tolerated (SSO_CLOCK_TOLERANCE_SECONDS, default 60)", async (_label, skew) => {
    skewed.skewSeconds = skew;
    const { page, body } = await ssoLogin("skewed");
    expect(page.status).toBe(200);
    expect(body.user.email).toBe("skewed@skew.test");
  });

  test.each([
    ["10 minutes ahead", 600],
    ["500 s behind", -500],
  ])("an IdP clock %s is refused as an invalid ID token", async (_label, skew) => {
    skewed.skewSeconds = skew;
    const { page } = await ssoLogin("skewed");
    expect(page.status).toBe(401);
    expect(JSON.parse(page.text).reason).toBe("invalid_id_token");
  });
});
