import { QueryTypes } from "sequelize";
import { eventually } from "../helpers/eventually";
import type { Page } from "playwright-core";
import { signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";

/**
 * The events view's filter controls as a person uses them (user autocomplete, providers, event types,
 * severities, a date preset), the chart for the current filter, infinite scroll by cursor with a bounded
 * number of rows in the page, and the total shown as "≥ N" when the API could only count a lower bound.
 */
let rig: ConsoleRig;
let alice: { id: string; email: string };
const BULK = 600;
const bulk = (n: number) => `bulk-${String(n).padStart(5, "0")}`;

beforeAll(async () => {
  // The count's budget is long enough for the last test to see the count waiting behind a lock before it gives up.
  rig = await startConsoleRig({ RATE_LIMIT_REQUESTS: "0", AUDIT_COUNT_BUDGET_MS: "1500" });
  alice = await rig.createUser("member", `alice.filters${Date.now()}@example.test`);
  const { services, sequelize } = rig.app.runtime;
  await sequelize.transaction(async (transaction) => {
    // Six pages of events to scroll through.
    let newest = 0;
    for (let n = 1; n <= BULK; n++) {
      // Events share a millisecond on a fast machine (ties are ordered by id): the last one is made strictly
      // the newest, since the test expects it on top.
      if (n === BULK) await eventually(() => Date.now() > newest, { what: "the clock to pass the previous event", interval: 1 });
      const event = await services.audit.record(transaction, {
        type: "user.updated",
        user: { id: rig.admin.id, email: rig.admin.email },
        resource: { type: "user", id: rig.admin.id, label: bulk(n) },
      });
      newest = event.timestamp.getTime();
    }
    for (const [provider, severity] of [
      ["okta", "critical"],
      ["okta", "warning"],
      ["azure", "critical"],
    ] as const) {
      await services.audit.record(transaction, {
        type: "auth.login.failed",
        severity,
        provider,
        user: { id: alice.id, email: alice.email },
        resource: { type: "session", id: alice.id, label: `${provider}-${severity}` },
      });
    }
  });
  await services.audit.chainCommitted();
}, 120_000);
afterAll(() => rig?.stop());

const rows = (page: Page) => page.locator(".events-scroller [role=row]");

test("filters set with the controls combine, live in the URL, and the chart counts what they match", async () => {
  const { context, page } = await rig.open();
  try {
    await page.goto("/admin/audit-logs");
    await signIn(page, rig.admin.email);
    await page.waitForURL(/\/admin\/audit-logs/);
    await eventually(async () => expect(await page.getByTestId("total").textContent()).toMatch(/^\d[\d,]*$/));

    // A user through the autocomplete, a provider, an event-type prefix from its group, one severity, a preset range.
    await page.getByRole("combobox", { name: "Users" }).fill("alice.filters");
    await page.getByRole("listbox", { name: "Matching users" }).getByRole("button", { name: alice.email }).click();
    await page.getByRole("list", { name: "Chosen users" }).getByText(alice.email).waitFor();
    await page.getByLabel("Providers").fill("okta");
    await page.getByRole("combobox", { name: "Event types" }).fill("auth");
    await page
      .getByRole("listbox", { name: "Matching event types" })
      .getByRole("button", { name: /^auth\.\* / })
      .click();
    await page.getByRole("list", { name: "Chosen event types" }).getByText("auth.*").waitFor();
    await page.getByRole("group", { name: "Severities" }).getByLabel("critical").check();
    await page.getByLabel("Date range").selectOption("24h");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => url.searchParams.get("range") === "24h");
    const params = new URL(page.url()).searchParams;
    expect({
      user: params.getAll("user"),
      provider: params.getAll("provider"),
      type: params.getAll("type"),
      severity: params.getAll("severity"),
    }).toEqual({ user: [alice.id], provider: ["okta"], type: ["auth.*"], severity: ["critical"] });
    await eventually(async () => {
      expect(await rows(page).allTextContents()).toEqual([expect.stringContaining("okta-critical")]);
      expect(await page.getByTestId("total").textContent()).toBe("1");
    });
    // The chart above the table counts the same filter: one critical event in all its buckets.
    await eventually(async () => {
      const titles = await page.locator("figure.chart title").allTextContents();
      const counted = titles.map((title) => /: (\d+) events? \((\d+) info, (\d+) warning, (\d+) error, (\d+) critical\)/.exec(title)!);
      expect(counted.length).toBeGreaterThan(0);
      expect(counted.reduce((sum, match) => sum + Number(match[1]), 0)).toBe(1);
      expect(counted.reduce((sum, match) => sum + Number(match[5]), 0)).toBe(1);
    });

    // Another severity ticked: the warning one joins; the other provider's event stays out.
    await page.getByRole("group", { name: "Severities" }).getByLabel("warning").check();
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => url.searchParams.getAll("severity").length === 2);
    await eventually(async () =>
      expect((await rows(page).allTextContents()).map((text) => /okta-\w+/.exec(text)?.[0]).sort()).toEqual([
        "okta-critical",
        "okta-warning",
      ]),
    );
    // Removing the user chip widens the search to everyone again.
    await page.getByRole("button", { name: `Remove ${alice.email}` }).click();
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL((url) => !url.searchParams.has("user"));
    await eventually(async () => expect(await rows(page).count()).toBe(2));
  } finally {
    await context.close();
  }
});

test("scrolling loads older events page by page by cursor, with a bounded number of rows; a total the API could not count shows as ≥ N", async () => {
  const { context, page } = await rig.open();
  try {
    await page.goto("/admin/audit-logs?type=user.updated");
    await signIn(page, rig.admin.email);
    await page.waitForURL(/\/admin\/audit-logs/);
    await eventually(async () => expect(await rows(page).first().textContent()).toContain(bulk(BULK)));
    const cursors: string[] = [];
    page.on("request", (request) => {
      const body = request.postData();
      if (body?.includes("query AuditEvents(")) {
        const after = (JSON.parse(body) as { variables: { after?: string | null } }).variables.after;
        if (after) cursors.push(after);
      }
    });
    const scroller = page.getByTestId("events-scroller");
    let mostRows = 0;
    // Scroll to the end of the list, the oldest event: five more pages of 100 behind the first, each asked for by cursor.
    const target = bulk(1);
    await eventually(
      async () => {
        await scroller.evaluate((element) => {
          element.scrollTop = element.scrollHeight;
        });
        mostRows = Math.max(mostRows, await rows(page).count());
        expect(await scroller.textContent()).toContain(target);
      },
      { timeout: 60_000 },
    );
    expect(new Set(cursors).size).toBeGreaterThanOrEqual(5);
    // Virtualised: a screenful and some overscan, not the hundreds loaded.
    expect(mostRows).toBeLessThan(100);

    // A count that runs out of its time budget (another session holds the table meanwhile) is a lower bound: "≥ N".
    const { sequelize } = rig.app.runtime;
    const lock = await sequelize.transaction();
    try {
      await sequelize.query("LOCK TABLE audit_events IN ACCESS EXCLUSIVE MODE", { transaction: lock });
      const asked = page.waitForRequest((request) => Boolean(request.postData()?.includes("query AuditEvents(")));
      await page.reload({ waitUntil: "commit" });
      await asked;
      // The page's count waits for the table, then gives up when its budget (AUDIT_COUNT_BUDGET_MS) runs out,
      // while the page's own read keeps waiting. Both moments are read from the server's activity: the count
      // seen waiting for the lock, then no longer running. Activity is read afresh each time: within a
      // transaction PostgreSQL keeps its first reading.
      const countsRunning = async (waitingForLock: boolean) => {
        await sequelize.query("SELECT pg_stat_clear_snapshot()", { transaction: lock });
        const [row] = await sequelize.query<{ running: number }>(
          `SELECT count(*)::int AS running FROM pg_stat_activity
            WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()
              AND query LIKE 'BEGIN READ ONLY;%DECLARE bounded_count NO SCROLL CURSOR FOR SELECT 1 FROM audit_events%'
              AND ($1::boolean IS FALSE OR wait_event_type = 'Lock')`,
          { bind: [waitingForLock], type: QueryTypes.SELECT, transaction: lock },
        );
        return row.running;
      };
      await eventually(async () => expect(await countsRunning(true)).toBeGreaterThanOrEqual(1), { interval: 20 });
      await eventually(async () => expect(await countsRunning(false)).toBe(0));
    } finally {
      await lock.rollback();
    }
    await eventually(async () => expect(await page.getByTestId("total").textContent()).toMatch(/^≥ \d+$/));
    expect(await rows(page).first().textContent()).toContain(bulk(BULK));
  } finally {
    await context.close();
  }
}, 90_000);
