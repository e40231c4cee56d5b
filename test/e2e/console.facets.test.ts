import { eventually } from "../helpers/eventually";
import { apiAs, failLogin, seedFailedLogins, signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";

/**
 * Facets beside the audit log: the top values of each facet for the current filter, with counts that are
 * the API's own counts for that filter narrowed to the value; clicking a value filters the view by it.
 */
jest.setTimeout(120_000);
let rig: ConsoleRig;
const FILTER = { eventTypes: ["auth.login.failed"] };

beforeAll(async () => {
  rig = await startConsoleRig({ RATE_LIMIT_REQUESTS: "0" });
  await seedFailedLogins(rig.app, ["10.0.0.1", "10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.2", "192.0.2.7"]);
  const known = await rig.createUser("member", `known${Date.now()}@example.test`);
  for (const ip of ["10.0.0.1", "198.51.100.4"]) await failLogin(rig.app.url, known.email, ip);
  await rig.app.runtime.services.audit.chainCommitted();
}, 60_000);
afterAll(() => rig?.stop());

/** The facets the page shows: per facet, each value (as the filter takes it) with its count. */
async function shownFacets(page: import("playwright-core").Page) {
  const out: Record<string, Array<{ value: string; count: number }>> = {};
  for (const dimension of ["eventType", "user", "ipAddress", "provider", "severity"]) {
    const buttons = page.getByTestId(`facet-${dimension}`).locator("button");
    out[dimension] = [];
    for (let index = 0; index < (await buttons.count()); index += 1) {
      const button = buttons.nth(index);
      out[dimension].push({
        value: (await button.getAttribute("data-value"))!,
        count: Number((await button.locator(".facet-count").textContent())!.replace(/,/g, "")),
      });
    }
  }
  return out;
}

test("each facet value's count is the API's count for the filter narrowed to it; clicking one filters the view", async () => {
  const api = await apiAs(rig.app.url, rig.admin.email);
  const { context, page } = await rig.open({ viewport: { width: 1280, height: 900 } });
  try {
    await page.goto("/admin/audit-logs?type=auth.login.failed");
    await signIn(page, rig.admin.email);
    await page.waitForURL(/\/admin\/audit-logs/);
    await eventually(async () => expect(await page.getByTestId("total").textContent()).toBe("8"));
    await page.getByTestId("facet-ipAddress").waitFor();
    const facets = await shownFacets(page);
    // Human labels; on hover the whole label and the code.
    expect(await page.getByTestId("facet-eventType").locator("button").first().textContent()).toContain("Failed login attempt");
    expect(await page.getByTestId("facet-eventType").locator("button").first().getAttribute("title")).toBe(
      "Failed login attempt (auth.login.failed)",
    );

    const narrow: Record<string, (value: string) => Record<string, unknown>> = {
      eventType: (value) => ({ eventTypes: [value] }),
      user: (value) => ({ userIds: [value] }),
      ipAddress: (value) => ({ ipAddress: value }),
      provider: (value) => ({ providers: [value] }),
      severity: (value) => ({ severities: [value] }),
    };
    const checked = [];
    for (const [dimension, values] of Object.entries(facets)) {
      for (const { value } of values) {
        const answer = await api<{ auditEvents: { pageInfo: { total: number } } }>(
          `query($filter: AuditEventFilter) { auditEvents(filter: $filter, first: 1) { pageInfo { total } } }`,
          { filter: { ...FILTER, ...narrow[dimension](value) } },
        );
        checked.push({ dimension, value, count: answer.auditEvents.pageInfo.total });
      }
    }
    expect(Object.entries(facets).flatMap(([dimension, values]) => values.map((entry) => ({ dimension, ...entry })))).toEqual(checked);
    expect(facets.ipAddress).toEqual([
      { value: "10.0.0.1", count: 4 },
      { value: "10.0.0.2", count: 2 },
      { value: "192.0.2.7", count: 1 },
      { value: "198.51.100.4", count: 1 },
    ]);
    expect(facets.user).toHaveLength(1);
    expect(facets.severity).toEqual([{ value: "warning", count: 8 }]);

    await page.getByTestId("facet-ipAddress").locator('button[data-value="10.0.0.2"]').click();
    await page.waitForURL((url) => url.searchParams.get("ip") === "10.0.0.2");
    await eventually(async () => expect(await page.getByTestId("total").textContent()).toBe("2"));
  } finally {
    await context.close();
  }
});
