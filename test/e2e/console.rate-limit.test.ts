import type { Page } from "playwright-core";
import { loadConfig } from "../../src/platform/config/config";
import { countFetches, signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";
import { eventually } from "../helpers/eventually";

/**
 * A signed-in console session spends a budget of its own (RATE_LIMIT_CONSOLE_REQUESTS), not the API's:
 * an administrator touring every page again and again, under the default limits, never meets a 429 and
 * is never sent back to the sign-in page, although the tours make more requests than the API's budget.
 * The tours stop a little past that budget (a whole minute of browsing to prove nothing more).
 */
// Functions passed to page.evaluate and addInitScript run in the browser, where these exist.
declare const window: any;
declare const document: any;
declare const MutationObserver: any;
jest.setTimeout(900_000);
let rig: ConsoleRig;
const PAGES = ["Audit log", "Alerts", "Audit streaming", "Exports", "Reports", "Retention & archives", "SSO providers", "Users"];
/** A bound on the tours, far above what spending the API's budget takes (about 60 tours of 18 reads). */
const MAX_TOURS = 100;
/** How far past the API's budget the tours go: past it by enough that a limit counted loosely would show. */
const PAST_THE_BUDGET = 1.1;

/**
 * One visit, as a person makes it, inside the page (800 visits through the automation protocol's
 * actionability checks and polling cost the browser more than the pages themselves): clicks the
 * navigation's link to `title`, waits for that page's heading, lets the page start its reads, and waits
 * until every one is answered.
 */
function visit(page: Page, title: string): Promise<void> {
  return page.evaluate(async (title) => {
    /** What `find` finds in the page, once it is there (a person waits for the page to show it too). */
    const until = async <T>(find: () => T | undefined): Promise<T> => {
      const found = find();
      if (found) return found;
      return new Promise<T>((resolve) => {
        const observer = new MutationObserver(() => {
          const now = find();
          if (!now) return;
          observer.disconnect();
          resolve(now);
        });
        observer.observe(document.body, { childList: true, subtree: true, characterData: true });
      });
    };
    const link: any = await until(() =>
      Array.from(document.querySelectorAll('nav[aria-label="Console"] a')).find((a: any) => a.textContent.trim() === title),
    );
    link.click();
    await until(() => Array.from(document.querySelectorAll("h1")).find((h1: any) => h1.textContent.trim() === title));
    // React runs a page's effects (its reads) after the frame that shows it.
    await new Promise((resolve) => window.requestAnimationFrame(() => window.setTimeout(resolve, 0)));
    while (window.__fetches.inFlight > 0) await new Promise((resolve) => window.setTimeout(resolve, 5));
  }, title);
}

beforeAll(async () => {
  // The default limits: nothing in env about rate limiting.
  rig = await startConsoleRig();
}, 60_000);
afterAll(() => rig?.stop());

test("every console page, toured until the session has made more requests than the API's whole budget: no 429", async () => {
  const defaults = loadConfig({});
  expect(rig.app.runtime.config.rateLimitRequests).toBe(defaults.rateLimitRequests);
  const { context, page } = await rig.open();
  try {
    await page.addInitScript(countFetches);
    const statuses = new Map<number, number>();
    page.on("response", (response) => {
      if (new URL(response.url()).pathname !== "/graphql") return;
      statuses.set(response.status(), (statuses.get(response.status()) ?? 0) + 1);
    });
    await page.goto("/admin/audit-logs");
    await signIn(page, rig.admin.email);
    await page.waitForURL(/\/admin\/audit-logs/);
    const answeredSoFar = (): Promise<number> => page.evaluate(() => window.__fetches.answered["/graphql"] ?? 0);
    for (let tour = 0; tour < MAX_TOURS && (await answeredSoFar()) <= defaults.rateLimitRequests * PAST_THE_BUDGET; tour += 1) {
      for (const title of PAGES) await visit(page, title);
      expect(new URL(page.url()).pathname).not.toBe("/admin/sign-in");
    }
    const answered = await answeredSoFar();
    // Every answer the page had was seen here too (whose statuses are counted), and none refused the session.
    await eventually(() => expect([...statuses.values()].reduce((sum, count) => sum + count, 0)).toBeGreaterThanOrEqual(answered));
    expect({ tooMany: statuses.get(429) ?? 0, unauthorized: statuses.get(401) ?? 0 }).toEqual({ tooMany: 0, unauthorized: 0 });
    // The tour really spent more than the API's whole budget: on it, this test would have met a 429.
    expect(answered).toBeGreaterThan(defaults.rateLimitRequests);
  } finally {
    await context.close();
  }
});
