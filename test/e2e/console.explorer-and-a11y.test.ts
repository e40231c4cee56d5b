import { eventually } from "../helpers/eventually";
import { failLogin, seriousViolations, signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";
import { documentationScreenshot } from "../helpers/screenshots";

// Functions passed to page.evaluate and addInitScript run in the browser, where these exist.
declare const window: any;
let rig: ConsoleRig;

beforeAll(async () => {
  rig = await startConsoleRig({ RATE_LIMIT_REQUESTS: "0" });
  await failLogin(rig.app.url, "someone@example.test", "10.1.2.3");
}, 60_000);
afterAll(() => rig?.stop());

test("the bundled explorer at /graphql runs a query and a subscription with the session, and asks nothing of the internet", async () => {
  const { context, page, foreign } = await rig.open();
  try {
    await page.goto("/admin/audit-logs");
    await signIn(page, rig.admin.email);
    await page.waitForURL(/\/admin\/audit-logs/);
    // GraphiQL runs a document once it has the schema (its introspection query).
    const introspected = () => page.waitForResponse((answer) => Boolean(answer.request().postData()?.includes("IntrospectionQuery")));
    let schemaLoaded = introspected();
    const response = await page.goto("/graphql");
    await schemaLoaded;
    expect(response!.headers()["content-security-policy"]).toContain("script-src 'self'");
    await page.locator(".graphiql-container").waitFor();
    await page.getByRole("button", { name: /Execute query/ }).click();
    await eventually(async () => expect(await page.locator(".result-window").textContent()).toContain("10.1.2.3")).catch(async (error) => {
      await page.screenshot({ path: "/tmp/explorer.png" });
      throw error;
    });
    await documentationScreenshot(page, "explorer.png");
    // A way back to the console, above the editor.
    expect(await page.getByRole("link", { name: "← Admin console" }).getAttribute("href")).toBe("/admin/");

    const subscription = "subscription Live { auditEventRecorded { timestamp eventType ipAddress } }";
    schemaLoaded = introspected();
    await page.goto(`/graphql#query=${encodeURIComponent(subscription)}`);
    await page.reload();
    await schemaLoaded;
    await page.getByRole("button", { name: /Execute query/ }).click();
    // Subscribing has no acknowledgement: a failed login until the live result shows one.
    await eventually(
      async () => {
        if ((await page.locator(".result-window").textContent())?.includes("10.9.8.7")) return true;
        await failLogin(rig.app.url, "later@example.test", "10.9.8.7");
        return false;
      },
      { what: "the failed login in the live result", interval: 250 },
    );
    expect(foreign).toEqual([]);
  } finally {
    await context.close();
  }
});

// Ten page loads with axe each: more than the default 30 s on a loaded 2-core machine.
test("every view passes axe-core without serious violations, in light and dark (following the system), down to 768 px", async () => {
  const colours: Record<string, string[]> = {};
  const views = [
    "/admin/audit-logs",
    "/admin/audit-logs?type=auth.login.failed&event=",
    "/admin/alerts",
    "/admin/exports",
    "/admin/reports",
    "/admin/archives",
    "/admin/sso-providers",
    "/admin/users",
    "/admin/two-factor",
  ];
  for (const [scheme, width] of [
    ["light", 1280],
    ["dark", 768],
  ] as const) {
    const { context, page } = await rig.open({ colorScheme: scheme, viewport: { width, height: 900 } });
    try {
      await page.goto("/admin/sign-in");
      expect(await seriousViolations(page)).toEqual([]);
      await signIn(page, rig.admin.email);
      await page.waitForURL(/\/admin\/audit-logs/);
      // The theme follows the system's preference (emulated per context): the page's own colours change.
      await page.locator(".topbar").waitFor();
      colours[scheme] = await page.evaluate(() =>
        [window.document.documentElement, window.document.querySelector(".topbar")].flatMap((element: any) => {
          const style = window.getComputedStyle(element);
          return [style.backgroundColor, style.color];
        }),
      );
      for (const view of views) {
        await page.goto(view);
        await page.locator(".topbar").waitFor();
        if (view.includes("event=")) {
          await eventually(async () => expect(await page.locator(".events-scroller [role=row]").count()).toBeGreaterThan(0));
          await page.locator(".events-scroller [role=row]").first().click();
          await page.getByRole("complementary").waitFor();
        }
        await page.waitForLoadState("networkidle");
        expect({ view, scheme, width, violations: await seriousViolations(page) }).toEqual({ view, scheme, width, violations: [] });
        // Usable at this width: nothing wider than the window, so no sideways scrolling of the page.
        expect({ view, width, pageWidth: await page.evaluate(() => window.document.documentElement.scrollWidth) }).toEqual({
          view,
          width,
          pageWidth: width,
        });
        if (scheme === "dark" && view === views[1]) await documentationScreenshot(page, "audit-log-dark-768.png");
      }
    } finally {
      await context.close();
    }
  }
  expect(colours.light).toHaveLength(4);
  colours.light.forEach((colour, index) => expect({ index, dark: colours.dark[index] }).not.toEqual({ index, dark: colour }));
}, 90_000);
