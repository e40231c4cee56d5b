import { loadConfig } from "../../src/platform/config/config";
import { signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";

/**
 * A signed-in console session spends a budget of its own (RATE_LIMIT_CONSOLE_REQUESTS), not the API's:
 * an administrator touring every page a hundred times, under the default limits, never meets a 429 and
 * is never sent back to the sign-in page, although the tour makes more requests than the API's budget.
 */
jest.setTimeout(900_000);
let rig: ConsoleRig;
const PAGES = ["Audit log", "Alerts", "Audit streaming", "Exports", "Reports", "Retention & archives", "SSO providers", "Users"];
const TOURS = 100;

beforeAll(async () => {
  // The default limits: nothing in env about rate limiting.
  rig = await startConsoleRig();
}, 60_000);
afterAll(() => rig?.stop());

test(`every console page ${TOURS} times in one session under the default rate limit: no 429`, async () => {
  const defaults = loadConfig({});
  expect(rig.app.runtime.config.rateLimitRequests).toBe(defaults.rateLimitRequests);
  const { context, page } = await rig.open();
  try {
    const statuses = new Map<number, number>();
    let graphql = 0;
    // The page's GraphQL requests in flight, and who waits for them all to be answered.
    let inFlight = 0;
    const waiting: Array<() => void> = [];
    const answered = () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve)));
    page.on("request", (request) => {
      if (new URL(request.url()).pathname === "/graphql") inFlight += 1;
    });
    const finished = (request: import("playwright-core").Request) => {
      if (new URL(request.url()).pathname !== "/graphql") return;
      inFlight -= 1;
      if (inFlight === 0) for (const resolve of waiting.splice(0)) resolve();
    };
    page.on("requestfinished", finished);
    page.on("requestfailed", finished);
    page.on("response", (response) => {
      if (new URL(response.url()).pathname !== "/graphql") return;
      graphql += 1;
      statuses.set(response.status(), (statuses.get(response.status()) ?? 0) + 1);
    });
    await page.goto("/admin/audit-logs");
    await signIn(page, rig.admin.email);
    await page.waitForURL(/\/admin\/audit-logs/);
    const nav = page.getByRole("navigation", { name: "Console" });
    for (let tour = 0; tour < TOURS; tour += 1) {
      for (const title of PAGES) {
        await nav.getByRole("link", { name: title, exact: true }).click();
        await page.getByRole("heading", { level: 1, name: title, exact: true }).waitFor();
        // The page's own reads answered before the next page: each visit costs what a person's would.
        await answered();
      }
      expect(new URL(page.url()).pathname).not.toBe("/admin/sign-in");
    }
    expect({ tooMany: statuses.get(429) ?? 0, unauthorized: statuses.get(401) ?? 0 }).toEqual({ tooMany: 0, unauthorized: 0 });
    // The tour really spent more than the API's whole budget: on it, this test would have met a 429.
    expect(graphql).toBeGreaterThan(defaults.rateLimitRequests);
  } finally {
    await context.close();
  }
});
