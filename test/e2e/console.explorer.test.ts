import { eventually } from "../helpers/eventually";
import { failLogin, signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";
import { documentationScreenshot } from "../helpers/screenshots";

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
