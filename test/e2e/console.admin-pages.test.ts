import { eventually } from "../helpers/eventually";
import type { Page } from "playwright-core";
import type { AuditEventType } from "../../src/audit/log/audit.catalogue";
import { startIdp, type TestIdp } from "../fakes/oidc-idp";
import { declineConfirmation, PASSWORD, signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";
import { documentationScreenshot } from "../helpers/screenshots";

/**
 * The SSO providers and Users pages, driven as an administrator would in a real Chromium. Every action
 * is checked where it matters: the server's state changed, and the audit log recorded who did what.
 */
let rig: ConsoleRig;
let idp: TestIdp;

beforeAll(async () => {
  // The IdP listens on loopback, which the outbound guard refuses unless told.
  rig = await startConsoleRig({
    ALLOW_INSECURE_UPSTREAMS: "true",
    OUTBOUND_ALLOWLIST: "127.0.0.1,::1,localhost",
    RATE_LIMIT_REQUESTS: "0",
  });
  idp = await startIdp({
    name: "acme",
    users: { ada: { email: "ada@example.test", email_verified: true, name: "Ada", groups: ["finance-auditors"] } },
  });
  idp.addClient({ client_id: "finance-gateway", client_secret: "acme-secret", redirect_uris: [`${rig.app.url}/auth/sso/acme/callback`] });
}, 90_000);
afterAll(async () => {
  await idp?.stop();
  await rig?.stop();
});

async function signedIn(url: string) {
  const opened = await rig.open();
  await opened.page.goto(url);
  await signIn(opened.page, rig.admin.email);
  await opened.page.waitForURL((current) => !current.pathname.endsWith("/sign-in"));
  return opened;
}

/** The audit events of one type about one resource, oldest first, as the server holds them. */
async function auditOf(type: AuditEventType, resourceId: string) {
  const { events } = await rig.app.runtime.services.audit.list({ eventTypes: [type] }, { first: 100 });
  return events.filter((event) => event.resource?.id === resourceId).reverse();
}

const row = (page: Page, text: string) => page.locator("table.data-table tbody tr").filter({ hasText: text });
const statusLine = (page: Page) => page.getByRole("status");

test("SSO providers: list, create, edit, disable and enable, test against a real IdP, delete only after confirming", async () => {
  const { services } = rig.app.runtime;
  // One provider made elsewhere (another administrator, the API): the list shows it.
  const login = await fetch(`${rig.app.url}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: rig.admin.email, password: PASSWORD }),
  });
  const { access_token } = (await login.json()) as { access_token: string };
  const created = await fetch(`${rig.app.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${access_token}` },
    body: JSON.stringify({
      query: `mutation ($input: SsoProviderInput!) { createSsoProvider(input: $input) { id } }`,
      variables: {
        input: { name: "Existing IdP", slug: "existing", issuer: idp.issuer, clientId: "existing", clientSecret: "existing-secret" },
      },
    }),
  });
  expect(((await created.json()) as { errors?: unknown }).errors).toBeUndefined();

  const { context, page } = await signedIn("/admin/sso-providers");
  try {
    await eventually(async () => expect(await row(page, "Existing IdP").textContent()).toContain(idp.issuer));

    // Create.
    await page.getByRole("button", { name: "Add provider" }).click();
    const form = page.getByRole("form", { name: "New SSO provider" });
    await form.getByLabel("Name").fill("Acme");
    await form.getByLabel("Slug (in the URLs)").fill("acme");
    await form.getByLabel("Issuer URL").fill(idp.issuer);
    await form.getByLabel("Client id").fill("finance-gateway");
    await form.getByLabel(/Client secret/).fill("acme-secret");
    await form.getByLabel("Scopes").fill("openid email profile groups");
    await form.getByLabel(/Role mappings/).fill("finance-auditors=auditor");
    await form.getByLabel("Default role").selectOption("member");
    await form.getByRole("button", { name: "Create provider" }).click();
    await form.waitFor({ state: "detached" });
    await eventually(async () => expect(await row(page, "Acme").textContent()).toContain("enabled"));
    const acme = (await services.ssoProviders.bySlug("acme"))!;
    expect(acme).toMatchObject({ name: "Acme", issuer: idp.issuer, clientId: "finance-gateway", enabled: true, defaultRole: "member" });
    expect(acme.roleMappings).toEqual([{ group: "finance-auditors", role: "auditor" }]);
    // The secret is stored encrypted, and decrypts to what was typed.
    expect(JSON.stringify(acme)).not.toContain("acme-secret");
    expect(services.ssoProviders.credentialsOf(acme).clientSecret).toBe("acme-secret");
    expect(await auditOf("provider.created", acme.id)).toEqual([
      expect.objectContaining({ user: expect.objectContaining({ id: rig.admin.id }) }),
    ]);

    // Edit: a new name, the secret left empty (kept).
    await page.getByRole("button", { name: "Edit Acme" }).click();
    const edit = page.getByRole("form", { name: "Edit Acme" });
    await edit.getByLabel("Name").fill("Acme Corp");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await edit.waitFor({ state: "detached" });
    await row(page, "Acme Corp").waitFor();
    const edited = (await services.ssoProviders.bySlug("acme"))!;
    expect(edited.name).toBe("Acme Corp");
    expect(services.ssoProviders.credentialsOf(edited).clientSecret).toBe("acme-secret");
    const [updated] = await auditOf("provider.updated", acme.id);
    expect(updated.changes).toMatchObject({ name: { old: "Acme", new: "Acme Corp" } });

    // Disable, then enable.
    await page.getByRole("button", { name: "Disable Acme Corp" }).click();
    await eventually(async () => expect(await row(page, "Acme Corp").textContent()).toContain("disabled"));
    expect((await services.ssoProviders.bySlug("acme"))!.enabled).toBe(false);
    expect(await auditOf("provider.disabled", acme.id)).toHaveLength(1);
    await page.getByRole("button", { name: "Enable Acme Corp" }).click();
    await eventually(async () => expect(await row(page, "Acme Corp").locator("td").nth(3).textContent()).toBe("enabled"));
    expect((await services.ssoProviders.bySlug("acme"))!.enabled).toBe(true);
    expect(await auditOf("provider.enabled", acme.id)).toHaveLength(1);

    // Test: a real discovery at the loopback IdP, then the test sign-in it offers, through the IdP and back.
    const discoveries = idp.requests.filter((request) => request.path.endsWith("/.well-known/openid-configuration")).length;
    await page.getByRole("button", { name: "Test Acme Corp" }).click();
    await eventually(async () => expect(await statusLine(page).textContent()).toContain("Discovery of Acme Corp succeeded."));
    expect(idp.requests.filter((request) => request.path.endsWith("/.well-known/openid-configuration")).length).toBeGreaterThan(
      discoveries,
    );
    const testLogin = await statusLine(page).getByRole("link", { name: "Open the test sign-in" }).getAttribute("href");
    const tab = await context.newPage();
    await tab.goto(testLogin!);
    await tab.waitForURL((url) => url.origin === new URL(rig.app.url).origin && url.pathname.includes("/callback"));
    await tab.close();
    await eventually(async () =>
      expect((await auditOf("provider.test", acme.id)).map((event) => [event.action, event.error])).toEqual([
        ["test.discovery", null],
        ["test.login", null],
      ]),
    );
    const [, signedInAsAda] = await auditOf("provider.test", acme.id);
    expect(signedInAsAda.changes).toMatchObject({ outcome: { new: { email: "ada@example.test", role: "auditor" } } });
    // A test sign-in proves the provider works; it makes no account.
    expect(await services.users.findByEmail("ada@example.test")).toBeNull();
    await documentationScreenshot(page, "sso-providers.png");

    // Delete: declining the confirmation changes nothing; accepting removes it.
    expect(await declineConfirmation(page, page.getByRole("button", { name: "Delete Existing IdP" }))).toEqual([]);
    const existing = (await services.ssoProviders.bySlug("existing"))!;
    expect(existing).not.toBeNull();
    expect(await auditOf("provider.deleted", existing.id)).toEqual([]);
    let question = "";
    page.once("dialog", (dialog) => {
      question = dialog.message();
      void dialog.accept();
    });
    await page.getByRole("button", { name: "Delete Existing IdP" }).click();
    await row(page, "Existing IdP").waitFor({ state: "detached" });
    expect(question).toContain("Delete the SSO provider “Existing IdP”?");
    expect(await services.ssoProviders.bySlug("existing")).toBeNull();
    expect(await auditOf("provider.deleted", existing.id)).toHaveLength(1);
    expect((await services.ssoProviders.list()).map((provider) => provider.slug)).toEqual(["acme"]);
  } finally {
    await context.close();
  }
});

test("Users: search, change a role, suspend and reactivate, delete only after confirming", async () => {
  const { services } = rig.app.runtime;
  const stamp = Date.now();
  const grace = await rig.createUser("member", `grace.hopper${stamp}@example.test`);
  const other = await rig.createUser("member", `linus${stamp}@example.test`);
  const { context, page } = await signedIn("/admin/users");
  try {
    await eventually(async () => expect(await row(page, other.email).count()).toBe(1));

    await page.getByLabel("Search").fill(`grace.hopper${stamp}`);
    await eventually(async () => {
      const emails = await page.locator("table.data-table tbody tr td:first-child").allTextContents();
      expect(emails).toEqual([grace.email]);
    });

    // Role.
    await page.getByLabel(`Role of ${grace.email}`).selectOption("auditor");
    await eventually(async () => expect(await statusLine(page).textContent()).toBe(`${grace.email} is now auditor.`));
    expect((await services.users.getById(grace.id)).role).toBe("auditor");
    const [roleChange] = await auditOf("user.roles.updated", grace.id);
    expect(roleChange).toMatchObject({ user: expect.objectContaining({ id: rig.admin.id }) });
    expect(roleChange.changes).toMatchObject({ role: { old: "member", new: "auditor" } });

    // Suspend, with the reason the prompt asks for; then reactivate.
    page.once("dialog", (dialog) => void dialog.accept("left the company"));
    await page.getByRole("button", { name: `Suspend ${grace.email}` }).click();
    await eventually(async () => expect(await row(page, grace.email).locator("td").nth(3).textContent()).toBe("suspended"));
    expect((await services.users.getById(grace.id)).status).toBe("suspended");
    const [suspension] = await auditOf("user.suspended", grace.id);
    expect(suspension.changes).toMatchObject({ status: { old: "active", new: "suspended" }, reason: { new: "left the company" } });
    await page.getByRole("button", { name: `Reactivate ${grace.email}` }).click();
    await eventually(async () => expect(await row(page, grace.email).locator("td").nth(3).textContent()).toBe("active"));
    expect((await services.users.getById(grace.id)).status).toBe("active");
    expect(await auditOf("user.reactivated", grace.id)).toHaveLength(1);

    await page.getByLabel("Search").fill("");
    await eventually(async () => expect(await row(page, other.email).count()).toBe(1));
    await documentationScreenshot(page, "users.png");

    // Delete: declining changes nothing; accepting deletes (the row leaves the default list).
    expect(await declineConfirmation(page, page.getByRole("button", { name: `Delete ${grace.email}` }))).toEqual([]);
    expect((await services.users.getById(grace.id)).status).toBe("active");
    expect(await auditOf("user.deleted", grace.id)).toEqual([]);
    let question = "";
    page.once("dialog", (dialog) => {
      question = dialog.message();
      void dialog.accept();
    });
    await page.getByRole("button", { name: `Delete ${grace.email}` }).click();
    await row(page, grace.email).waitFor({ state: "detached" });
    expect(question).toContain(`Delete ${grace.email}? This cannot be undone`);
    expect((await services.users.getById(grace.id)).status).toBe("deleted");
    expect(await auditOf("user.deleted", grace.id)).toHaveLength(1);
    expect((await services.users.getById(other.id)).status).toBe("active");
    // The administrator cannot suspend or delete themself from here.
    await page.getByLabel("Search").fill(rig.admin.email);
    await eventually(async () => expect(await row(page, rig.admin.email).count()).toBe(1));
    expect(await row(page, rig.admin.email).getByRole("button").count()).toBe(0);
  } finally {
    await context.close();
  }
});

test("Users: five wrong passwords lock an account, the page shows it locked with its last sign-in, an administrator unlocks it, and the user signs in", async () => {
  const { services } = rig.app.runtime;
  const stamp = Date.now();
  const locked = await rig.createUser("member", `margaret.hamilton${stamp}@example.test`);
  const login = (password: string) =>
    fetch(`${rig.app.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: locked.email, password }),
    });
  expect((await login(PASSWORD)).status).toBe(200);
  for (let attempt = 0; attempt < 5; attempt++) expect((await login("not the password")).status).toBe(401);
  // Locked: the right password fails too.
  expect((await login(PASSWORD)).status).not.toBe(200);

  const { context, page } = await signedIn("/admin/users");
  try {
    await page.getByLabel("Search").fill(`margaret.hamilton${stamp}`);
    const cells = row(page, locked.email).locator("td");
    await eventually(async () => expect(await cells.nth(3).textContent()).toMatch(/^locked until /));
    // The time it unlocks by itself, in the chosen zone, with the exact instant on hover.
    const until = (await services.users.getById(locked.id)).lockedUntil!;
    expect(await cells.nth(3).locator("time").getAttribute("datetime")).toBe(new Date(until).toISOString());
    // Last sign-in: the successful one before the lock, and how.
    expect(await cells.nth(4).textContent()).toMatch(/password$/);
    expect(await cells.nth(4).locator("time").count()).toBe(1);

    await page.getByRole("button", { name: `Unlock ${locked.email}` }).click();
    await eventually(async () => expect(await statusLine(page).textContent()).toBe(`${locked.email} unlocked: they can sign in again.`));
    await eventually(async () => expect(await cells.nth(3).textContent()).toBe("active"));
    expect(
      await row(page, locked.email)
        .getByRole("button", { name: `Unlock ${locked.email}` })
        .count(),
    ).toBe(0);
    const [unlocked] = await auditOf("user.unlocked", locked.id);
    expect(unlocked).toMatchObject({ user: expect.objectContaining({ id: rig.admin.id }) });

    const signedInAgain = await login(PASSWORD);
    expect(signedInAgain.status).toBe(200);
    expect(((await signedInAgain.json()) as { access_token?: string }).access_token).toEqual(expect.any(String));
  } finally {
    await context.close();
  }
}, 120_000);
