import { eventually } from "../helpers/eventually";
import { failLogin, signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";
import { documentationScreenshot } from "../helpers/screenshots";

let rig: ConsoleRig;

beforeAll(async () => {
  rig = await startConsoleRig();
}, 60_000);
afterAll(() => rig?.stop());

test("the console is served at /admin/ with hashed, long-cached assets and a strict CSP; client routes fall back to the page", async () => {
  const page = await fetch(`${rig.app.url}/admin/audit-logs?severity=warning`);
  expect(page.status).toBe(200);
  const csp = page.headers.get("content-security-policy")!;
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain("unsafe-inline");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(page.headers.get("cache-control")).toBe("no-cache");
  expect(page.headers.get("x-frame-options")).toBe("DENY");
  const html = await page.text();
  expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  const asset = /src="(\/admin\/assets\/console-[\w-]+\.js)"/.exec(html)![1];
  const script = await fetch(`${rig.app.url}${asset}`);
  expect(script.status).toBe(200);
  expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  expect((await fetch(`${rig.app.url}/admin/assets/missing-0000.js`)).status).toBe(404);
  expect((await fetch(`${rig.app.url}/admin`, { redirect: "manual" })).headers.get("location")).toBe("/admin/");
});

test("an administrator signs in, is back on the page they asked for, and finds a failed login from an IP; signs out", async () => {
  await failLogin(rig.app.url, rig.admin.email, "203.0.113.77");
  await failLogin(rig.app.url, "nobody@example.test", "198.51.100.9");
  const { context, page, foreign, problems } = await rig.open();
  try {
    await page.goto("/admin/audit-logs?type=auth.login.failed");
    await page.waitForURL(/\/admin\/sign-in\?next=/);
    await documentationScreenshot(page, "sign-in.png");
    await signIn(page, rig.admin.email);
    await page.waitForURL(/\/admin\/audit-logs\?type=auth\.login\.failed$/);
    await eventually(async () => expect(await page.getByRole("grid").textContent()).toContain("198.51.100.9"));

    await page.getByLabel("IP address").fill("203.0.113.*");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/ip=203\.0\.113\.\*/);
    const rows = page.locator(".events-scroller [role=row]");
    await eventually(async () => {
      expect(await rows.allTextContents()).toEqual([expect.stringMatching(/auth\.login\.failed.*203\.0\.113\.77/)]);
      expect(await page.getByTestId("total").textContent()).toBe("1");
    });
    await documentationScreenshot(page, "audit-log.png");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/admin\/sign-in/);
    expect(foreign).toEqual([]);
    expect(problems.filter((problem) => !problem.includes("401"))).toEqual([]);
  } catch (error) {
    await page.screenshot({ path: "/tmp/console-fail.png" });
    console.log(problems, foreign);
    throw error;
  } finally {
    await context.close();
  }
});
