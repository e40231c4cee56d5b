import { eventually } from "../helpers/eventually";
import { startIdp, type TestIdp } from "../fakes/oidc-idp";
import { PASSWORD, signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";

let rig: ConsoleRig;
let idp: TestIdp;

async function adminGraphql(query: string, variables: Record<string, unknown> = {}) {
  const login = await fetch(`${rig.app.url}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: rig.admin.email, password: PASSWORD }),
  });
  const { access_token } = (await login.json()) as { access_token: string };
  const response = await fetch(`${rig.app.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${access_token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: any; errors?: unknown };
  expect(body.errors).toBeUndefined();
  return body.data;
}

beforeAll(async () => {
  // The IdP listens on loopback, which the outbound guard refuses unless told.
  rig = await startConsoleRig({
    ALLOW_INSECURE_UPSTREAMS: "true",
    OUTBOUND_ALLOWLIST: "127.0.0.1,::1,localhost",
    RATE_LIMIT_REQUESTS: "0",
  });
  idp = await startIdp({
    name: "acme",
    users: { ada: { email: "ada@example.test", email_verified: true, name: "Ada", groups: ["finance-admins"] } },
  });
  idp.addClient({ client_id: "finance-gateway", client_secret: "acme-secret", redirect_uris: [`${rig.app.url}/auth/sso/acme/callback`] });
  await adminGraphql(`mutation ($input: SsoProviderInput!) { createSsoProvider(input: $input) { id } }`, {
    input: {
      name: "Acme IdP",
      slug: "acme",
      issuer: idp.issuer,
      clientId: "finance-gateway",
      clientSecret: "acme-secret",
      scopes: ["openid", "email", "profile", "groups"],
      roleMappings: [{ group: "finance-admins", role: "admin" }],
      jitProvisioning: true,
    },
  });
}, 90_000);
afterAll(async () => {
  await idp?.stop();
  await rig?.stop();
});

test("SSO sign-in started from the console ends in the console, on the page the user asked for", async () => {
  const { context, page, foreign } = await rig.open();
  try {
    await page.goto("/admin/audit-logs?severity=warning");
    await page.waitForURL(/\/admin\/sign-in/);
    await page.getByRole("link", { name: "Acme IdP" }).click();
    await page.waitForURL(/\/admin\/audit-logs\?severity=warning$/);
    await eventually(async () => expect(await page.locator(".viewer").textContent()).toContain("ada@example.test"));
    expect(foreign.filter((url) => !url.startsWith(idp.issuer))).toEqual([]);
  } finally {
    await context.close();
  }
});

test("a member is refused with a clear message; an auditor reads the log and sees no write controls", async () => {
  const member = await rig.createUser("member");
  const auditor = await rig.createUser("auditor");
  const { context, page } = await rig.open();
  try {
    await page.goto("/admin/");
    await signIn(page, member.email);
    await page.getByRole("heading", { name: "No access to the admin console" }).waitFor();
    expect(await page.locator("main").textContent()).toContain("role member");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/admin\/sign-in/);

    await signIn(page, auditor.email);
    await page.waitForURL(/\/admin\/audit-logs/);
    await page.getByRole("grid").waitFor();
    const navigation = await page.getByRole("navigation", { name: "Console" }).textContent();
    expect(navigation).toContain("Audit log");
    expect(navigation).not.toContain("SSO providers");
    expect(navigation).not.toContain("Users");
    await page.goto("/admin/users");
    expect(await page.getByRole("button", { name: /Suspend|Delete|Reactivate/ }).count()).toBe(0);
  } finally {
    await context.close();
  }
});

test("an expired session returns to sign-in, and signing in again comes back to the same view", async () => {
  const { context, page } = await rig.open();
  try {
    await page.goto("/admin/audit-logs?type=auth.*");
    await signIn(page, rig.admin.email);
    await page.waitForURL(/\/admin\/audit-logs\?type=auth\.\*$/);
    await eventually(async () => expect(await page.getByTestId("total").textContent()).toMatch(/\d/));
    await rig.app.runtime.sequelize.query(
      `UPDATE auth_sessions SET expires_at = now() - interval '1 second' WHERE user_id = '${rig.admin.id}' AND ended_at IS NULL`,
    );
    await page.getByLabel("IP address").fill("10.1.*");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/\/admin\/sign-in\?next=/);
    await signIn(page, rig.admin.email);
    await page.waitForURL(/\/admin\/audit-logs\?type=auth\.\*&ip=10\.1\.\*$/);
  } finally {
    await context.close();
  }
});
