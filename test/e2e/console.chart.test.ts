import type { Page } from "playwright-core";
import { eventually } from "../helpers/eventually";
import { apiAs, signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";

/**
 * The audit log's chart explains itself (counts up the side, times in the chosen zone along the bottom,
 * a legend by severity, the whole range of the filter) and drives the view: dragging across it puts that
 * stretch of time in the URL, and the table then shows exactly the events the API has in it.
 */
jest.setTimeout(120_000);
let rig: ConsoleRig;
let day: string;
/** Marked events, one every 30 minutes from 00:15 UTC on day D: 48 of them. */
const MARK = "chartmark";
const instants: string[] = [];

beforeAll(async () => {
  rig = await startConsoleRig({ RATE_LIMIT_REQUESTS: "0" });
  day = `${new Date().toISOString().slice(0, 8)}10`;
  for (let index = 0; index < 48; index += 1) instants.push(new Date(Date.parse(`${day}T00:15:00Z`) + index * 1_800_000).toISOString());
  const { services, sequelize } = rig.app.runtime;
  await services.audit.ensurePartitions(2, new Date(`${day}T00:00:00Z`));
  // The service stamps events with the clock's time: the clock visits each instant, then comes back.
  const realTimers = ["nextTick", "setImmediate", "setTimeout", "setInterval", "clearTimeout", "clearInterval", "clearImmediate"] as const;
  jest.useFakeTimers({ doNotFake: [...realTimers, "queueMicrotask", "hrtime", "performance"] });
  try {
    await sequelize.transaction(async (transaction) => {
      for (const [index, instant] of instants.entries()) {
        jest.setSystemTime(new Date(instant));
        await services.audit.record(transaction, {
          type: "user.updated",
          user: { id: rig.admin.id, email: rig.admin.email },
          resource: { type: "user", id: rig.admin.id, label: `${MARK}-${index}` },
        });
      }
      jest.useRealTimers();
    });
  } finally {
    jest.useRealTimers();
  }
  await services.audit.chainCommitted();
}, 60_000);
afterAll(() => rig?.stop());

async function chartTexts(page: Page): Promise<string[]> {
  return page.getByTestId("event-chart").locator("text").allTextContents();
}

test("axes in the chosen zone and a legend; dragging across the bars sets the range in the URL and the table shows exactly the API's events", async () => {
  const { context, page } = await rig.open({ timezoneId: "Asia/Tokyo", viewport: { width: 1280, height: 900 } });
  try {
    await page.goto(`/admin/audit-logs?q=${MARK}&from=${day}&to=${day}`);
    await signIn(page, rig.admin.email);
    await page.waitForURL(/\/admin\/audit-logs/);
    // Tokyo's day D: from D−1 15:00 UTC to D 15:00 UTC, so 30 of the events; the chart spans that day.
    await eventually(async () => expect(await page.getByTestId("total").textContent()).toBe("30"));
    const chart = page.getByTestId("event-chart");
    const nextDay = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    await eventually(async () =>
      expect(await chart.getAttribute("aria-label")).toContain(`from ${day} 00:00:00 to ${nextDay} 00:00:00 (Asia/Tokyo)`),
    );
    const texts = await chartTexts(page);
    // Time labels in Tokyo's hours, first at its midnight; counts on the side, from 0.
    expect(texts).toContain("00:00");
    expect(texts).toContain("0");
    expect(texts.some((text) => /^\d{2}:\d{2}$/.test(text) && text !== "00:00")).toBe(true);
    expect(await page.locator(".legend").textContent()).toBe("infowarningerrorcritical");

    // Drag from a third to two thirds of the plot.
    const box = (await chart.boundingBox())!;
    const plotLeft = box.x + 44;
    const plotWidth = box.width - 44;
    const y = box.y + box.height / 2;
    await page.mouse.move(plotLeft + plotWidth / 3, y);
    await page.mouse.down();
    await page.mouse.move(plotLeft + plotWidth / 2, y, { steps: 4 });
    await page.mouse.move(plotLeft + (2 * plotWidth) / 3, y, { steps: 4 });
    await page.mouse.up();

    await page.waitForURL((url) => /T\d\d:\d\d/.test(url.searchParams.get("from") ?? ""));
    const url = new URL(page.url());
    const from = url.searchParams.get("from")!;
    const to = url.searchParams.get("to")!;
    // About the middle third of Tokyo's day D (23:00 UTC of D−1 to 07:00 UTC of D), give or take a bucket.
    const start = Date.parse(`${day}T00:00:00+09:00`);
    expect(Math.abs(Date.parse(from) - (start + 8 * 3_600_000))).toBeLessThan(3_600_000);
    expect(Math.abs(Date.parse(to) - (start + 16 * 3_600_000))).toBeLessThan(3_600_000);

    // The API's events for the same filter, and the table's: the same ones.
    const api = await apiAs(rig.app.url, rig.admin.email);
    const answer = await api<{ auditEvents: { pageInfo: { total: number }; nodes: Array<{ resource: { label: string } }> } }>(
      `query($filter: AuditEventFilter) { auditEvents(filter: $filter, first: 100) { pageInfo { total } nodes { resource { label } } } }`,
      { filter: { search: MARK, from, to } },
    );
    const expected = answer.auditEvents.nodes.map((node) => node.resource.label).sort();
    expect(expected.length).toBeGreaterThan(10);
    expect(expected.length).toBe(answer.auditEvents.pageInfo.total);
    expect(expected).toEqual(instants.flatMap((instant, index) => (instant >= from && instant <= to ? [`${MARK}-${index}`] : [])).sort());
    await eventually(async () => expect(await page.getByTestId("total").textContent()).toBe(String(expected.length)));
    await eventually(async () => {
      const rows = await page.locator(".events-scroller [role=row]").allTextContents();
      expect(rows.map((row) => new RegExp(`${MARK}-\\d+`).exec(row)?.[0]).sort()).toEqual(expected);
    });
  } finally {
    await context.close();
  }
});
