import { eventually } from "../helpers/eventually";
import { failLogin, PASSWORD, signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";
import { documentationScreenshot } from "../helpers/screenshots";

let rig: ConsoleRig;
let target: { id: string; email: string };

beforeAll(async () => {
  rig = await startConsoleRig({ RATE_LIMIT_REQUESTS: "0" });
  target = await rig.createUser("member", `target${Date.now()}@example.test`);
  for (const ip of ["10.1.2.3", "10.1.9.9", "192.0.2.10"]) await failLogin(rig.app.url, target.email, ip);
  // A role change, so one event carries `changes` (old → new), recorded by an administrator's request.
  const login = await fetch(`${rig.app.url}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": "192.0.2.50" },
    body: JSON.stringify({ email: rig.admin.email, password: PASSWORD }),
  });
  const { access_token } = (await login.json()) as { access_token: string };
  await fetch(`${rig.app.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${access_token}`, "x-forwarded-for": "192.0.2.50" },
    body: JSON.stringify({ query: `mutation { setUserRole(id: "${target.id}", role: "auditor") { role } }` }),
  });
  await rig.app.runtime.services.audit.chainCommitted();
}, 60_000);
afterAll(() => rig?.stop());

async function signedIn(url: string) {
  const opened = await rig.open();
  await opened.page.goto(url);
  await signIn(opened.page, rig.admin.email);
  await opened.page.waitForURL((current) => !current.pathname.endsWith("/sign-in"));
  return opened;
}

const rowTexts = (page: import("playwright-core").Page) => page.locator(".events-scroller [role=row]").allTextContents();

test("combined filters live in the URL: a copied link reopens the view, back and forward step through searches", async () => {
  const { context, page } = await signedIn("/admin/audit-logs?type=auth.login.failed&ip=10.1.*");
  try {
    await eventually(async () => {
      const rows = await rowTexts(page);
      expect(rows).toHaveLength(2);
      expect(rows.every((row) => row.includes("auth.login.failed") && row.includes("10.1."))).toBe(true);
    });
    expect(await page.getByLabel("IP address").inputValue()).toBe("10.1.*");

    await page.getByLabel("IP address").fill("192.0.2.10");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/ip=192\.0\.2\.10/);
    await eventually(async () => expect(await rowTexts(page)).toEqual([expect.stringContaining("192.0.2.10")]));

    await page.goBack();
    await page.waitForURL(/ip=10\.1\.\*/);
    await eventually(async () => expect(await rowTexts(page)).toHaveLength(2));
    await page.goForward();
    await page.waitForURL(/ip=192\.0\.2\.10/);

    const copied = page.url();
    const other = await context.newPage();
    await other.goto(copied);
    await eventually(async () => expect(await rowTexts(other)).toEqual([expect.stringContaining("192.0.2.10")]));
    expect(await other.getByLabel("IP address").inputValue()).toBe("192.0.2.10");
  } finally {
    await context.close();
  }
});

test("the detail shows every field, changes as old → new, the same request's events, the chain link, and filters by user or IP", async () => {
  const { context, page } = await signedIn("/admin/audit-logs?type=user.roles.updated");
  try {
    await page.locator(".events-scroller [role=row]").first().click();
    const detail = page.getByRole("complementary");
    await eventually(async () => {
      const text = await detail.textContent();
      expect(text).toContain("user.roles.updated");
      expect(text).toContain("192.0.2.50");
      expect(text).toContain(rig.admin.email);
      expect(text).toMatch(/Linked at position \d+/);
    });
    const change = detail.locator("table.changes tbody tr").first();
    expect(await change.locator("th").textContent()).toBe("role");
    expect(await change.locator(".old").textContent()).toBe("member");
    expect(await change.locator(".new").textContent()).toBe("→ auditor");
    await documentationScreenshot(page, "event-detail.png");

    await detail.getByRole("button", { name: "Filter by this IP" }).click();
    await page.waitForURL(/ip=192\.0\.2\.50/);
    await detail.waitFor({ state: "detached" });
    await eventually(async () => expect((await rowTexts(page)).length).toBeGreaterThan(0));
  } finally {
    await context.close();
  }
});

test("keyboard: the table takes focus, arrows move between rows, Enter opens one", async () => {
  const { context, page } = await signedIn("/admin/audit-logs?type=auth.login.failed");
  try {
    await eventually(async () => expect(await rowTexts(page)).toHaveLength(3));
    await page.getByRole("grid").focus();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await page.waitForURL(/event=/);
    expect(await page.getByRole("complementary").textContent()).toContain("auth.login.failed");
  } finally {
    await context.close();
  }
});

test("saved searches: save the current filters, reopen, rename, delete", async () => {
  const { context, page } = await signedIn("/admin/audit-logs?type=auth.login.failed&ip=10.1.*");
  page.on("dialog", (dialog) => void dialog.accept());
  try {
    await eventually(async () => expect(await rowTexts(page)).toHaveLength(2));
    await page.getByText("Saved searches", { exact: true }).first().click();
    await page.getByLabel("Name of this search").fill("Failed logins from 10.1");
    await page.getByRole("button", { name: "Save current filters" }).click();
    await page.getByRole("button", { name: "Failed logins from 10.1", exact: true }).waitFor();

    await page.getByRole("button", { name: "Clear" }).click();
    await page.waitForURL((url) => !url.search.includes("ip="));
    await page.getByRole("button", { name: "Failed logins from 10.1", exact: true }).click();
    await page.waitForURL(/ip=10\.1\.\*/);
    await eventually(async () => expect(await rowTexts(page)).toHaveLength(2));

    await page.getByRole("button", { name: "Rename Failed logins from 10.1" }).click();
    await page.getByLabel("New name for Failed logins from 10.1").fill("Office network failures");
    await page.getByRole("button", { name: "Rename", exact: true }).click();
    await page.getByRole("button", { name: "Office network failures", exact: true }).waitFor();
    await page.getByRole("button", { name: "Delete Office network failures" }).click();
    await page.getByRole("button", { name: "Office network failures", exact: true }).waitFor({ state: "detached" });
    expect(await rig.app.runtime.services.auditSavedSearches.list(rig.admin.id)).toEqual([]);
  } finally {
    await context.close();
  }
});
