import { eventually } from "../helpers/eventually";
import { evaluatorCaughtUp, failedLogin } from "../helpers/alerts";
import { launchChromium, openContext, type HeadlessChromium } from "../helpers/chromium";
import { PASSWORD, signIn } from "../helpers/console";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * The Alerts page in a real browser, with a worker evaluating rules: an administrator enables the
 * brute-force preset in one click, a burst of failed logins fires it, a toast appears in the console
 * (the alertFired subscription) and the firing shows in the history.
 */
jest.setTimeout(90_000);

let app: TestApp;
let chromium: HeadlessChromium;
const email = `alerts-admin-${Date.now()}@example.test`;

beforeAll(async () => {
  app = await startTestApp({ roles: { workers: true }, env: { RATE_LIMIT_REQUESTS: "0", STREAM_POLL_MS: "100" } });
  await app.runtime.services.users.create({ email, role: "admin", password: PASSWORD });
  chromium = await launchChromium();
}, 60_000);
afterAll(async () => {
  await chromium?.close();
  await app?.stop();
});

test("enable a preset, see the firing as a toast and in the history", async () => {
  const { context, page } = await openContext(chromium.browser, app.url);
  try {
    await page.goto("/admin/alerts");
    await signIn(page, email);
    await page.waitForURL(/\/admin\/alerts/);
    await page.getByRole("button", { name: "Enable Failed logins from one IP" }).click();
    await eventually(async () =>
      expect(await page.getByRole("status").first().textContent()).toContain("Failed logins from one IP enabled."),
    );
    await eventually(async () =>
      expect(await page.getByRole("table", { name: "Alert rules" }).textContent()).toContain("≥ 5 × auth.login.failed"),
    );

    await Promise.all(Array.from({ length: 6 }, () => failedLogin(app.url, "81.2.69.142")));
    await evaluatorCaughtUp(app.runtime);
    const toast = page.locator(".toast");
    await eventually(async () => expect(await toast.first().textContent()).toContain("Alert: Failed logins from one IP"), {
      timeout: 10_000,
    });
    expect(await toast.count()).toBe(1);
    expect(await toast.first().textContent()).toContain("5 auth.login.failed event(s) from IP 81.2.69.142 within 10 min");
    const history = page.getByRole("table", { name: "Firing history" });
    await eventually(async () => expect(await history.textContent()).toContain("81.2.69.142"), { timeout: 10_000 });
    expect(await history.locator("tbody tr").count()).toBe(1);
    expect(await history.textContent()).toContain("5 triggering event(s)");

    // The toast is console-wide: another page gets the next firing too.
    await page.getByRole("link", { name: "Users" }).click();
    await page.waitForURL(/\/admin\/users/);
    await page.getByRole("button", { name: /^Dismiss alert/ }).click();
    await Promise.all(Array.from({ length: 5 }, () => failedLogin(app.url, "8.8.8.8")));
    await eventually(async () => expect(await page.locator(".toast").first().textContent()).toContain("from IP 8.8.8.8"), {
      timeout: 10_000,
    });
  } finally {
    await context.close();
  }
});
