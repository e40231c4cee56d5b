import { eventually } from "../helpers/eventually";
import type { Page } from "playwright-core";
import { signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";

/**
 * Times in the viewer's zone (the browser's, set per context with `timezoneId`) or one they pick and
 * keep, UTC on hover, and date ranges as whole days in that zone. Four events sit around midnight in
 * Tokyo (UTC+9) on day D, which is mid-morning in New York (UTC−5 in winter, −4 in summer): the same
 * one-day range selects different events in the two zones.
 */
let rig: ConsoleRig;
let day: string;
let previousDay: string;
let instants: string[];

const MARK = "tzmark";
const shiftDay = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  rig = await startConsoleRig({ RATE_LIMIT_REQUESTS: "0" });
  // Day D: the 10th of this month in UTC (a day whose neighbours are in the same month, so the partitions exist).
  day = `${new Date().toISOString().slice(0, 8)}10`;
  previousDay = shiftDay(day, -1);
  // Tokyo's day D runs from (D−1) 15:00 UTC to D 15:00 UTC.
  instants = [`${previousDay}T14:30:00.000Z`, `${previousDay}T15:30:00.000Z`, `${day}T14:30:00.000Z`, `${day}T15:30:00.000Z`];
  const { services, sequelize } = rig.app.runtime;
  await services.audit.ensurePartitions(2, new Date(`${previousDay}T00:00:00Z`));
  // The service stamps each event with the clock's time: the clock is set to each instant in turn, and
  // back to the real one before the commit, whose hook schedules the chain sequencer's next run.
  const realTimers = ["nextTick", "setImmediate", "setTimeout", "setInterval", "clearTimeout", "clearInterval", "clearImmediate"] as const;
  jest.useFakeTimers({ doNotFake: [...realTimers, "queueMicrotask", "hrtime", "performance"] });
  try {
    await sequelize.transaction(async (transaction) => {
      try {
        for (const [index, instant] of instants.entries()) {
          jest.setSystemTime(new Date(instant));
          await services.audit.record(transaction, {
            type: "user.updated",
            user: { id: rig.admin.id, email: rig.admin.email },
            resource: { type: "user", id: rig.admin.id, label: `${MARK}-${index + 1}` },
          });
        }
      } finally {
        jest.useRealTimers();
      }
    });
  } finally {
    jest.useRealTimers();
  }
  await services.audit.chainCommitted();
}, 60_000);
afterAll(() => rig?.stop());

/** The marked events the table shows, by number (1–4), and each one's time cell (text and hover title). */
async function shown(page: Page) {
  const rows = page.locator(".events-scroller [role=row]");
  const out: Array<{ mark: number; time: string; utc: string }> = [];
  for (let i = 0; i < (await rows.count()); i++) {
    const text = (await rows.nth(i).textContent()) ?? "";
    const mark = new RegExp(`${MARK}-(\\d)`).exec(text);
    if (!mark) continue;
    const time = rows.nth(i).locator("time");
    out.push({ mark: Number(mark[1]), time: (await time.textContent()) ?? "", utc: (await time.getAttribute("title")) ?? "" });
  }
  return out.sort((a, b) => a.mark - b.mark);
}

async function view(page: Page, query: string, expected: number[]) {
  await page.goto(`/admin/audit-logs?q=${MARK}${query}`);
  await eventually(async () => expect((await shown(page)).map((event) => event.mark)).toEqual(expected));
  return shown(page);
}

test("times show in the browser's zone with UTC on hover; a picked zone is kept across reloads; a day range is that zone's whole days", async () => {
  const { context, page } = await rig.open({ timezoneId: "America/New_York" });
  try {
    await page.goto(`/admin/audit-logs?q=${MARK}`);
    await signIn(page, rig.admin.email);
    await page.waitForURL(/\/admin\/audit-logs/);

    // The browser's zone by default. New York's offset on D (−5 or −4), from the browser's own rules.
    expect(await page.getByLabel("Time zone").inputValue()).toBe("America/New_York");
    const newYork = (instant: string) =>
      new Intl.DateTimeFormat("sv-SE", { timeZone: "America/New_York", dateStyle: "short", timeStyle: "medium" }).format(new Date(instant));
    const all = await view(page, "", [1, 2, 3, 4]);
    expect(all.map((event) => event.time)).toEqual(instants.map(newYork));
    // On hover, the browser shows each time's title: the instant in UTC.
    expect(all.map((event) => event.utc)).toEqual(instants.map((instant) => `${instant.replace("T", " ").replace("Z", "")} UTC`));

    // One inclusive day, D to D, in New York: D 00:00 to 23:59:59.999 there holds events 3 and 4.
    await view(page, `&from=${day}&to=${day}`, [3, 4]);

    // Pick Tokyo: times follow, and the same range is now Tokyo's day D (events 2 and 3).
    await page.getByLabel("Time zone").selectOption("Asia/Tokyo");
    await eventually(async () => expect((await shown(page)).map((event) => event.time)).toEqual([`${day} 00:30:00`, `${day} 23:30:00`]));
    await page.reload();
    await eventually(async () => expect((await shown(page)).map((event) => event.mark)).toEqual([2, 3]));
    expect(await page.getByLabel("Time zone").inputValue()).toBe("Asia/Tokyo");
    expect((await shown(page)).map((event) => event.time)).toEqual([`${day} 00:30:00`, `${day} 23:30:00`]);

    // Two days, D−1 to D, both included: everything up to Tokyo's midnight after D.
    await view(page, `&from=${previousDay}&to=${day}`, [1, 2, 3]);
    // The range as the API got it: from the first instant of D−1 to the last of D, in Tokyo.
    const requested = page.waitForRequest((request) => Boolean(request.postData()?.includes("query AuditEvents(")));
    await page.reload();
    const variables = JSON.parse((await requested).postData()!).variables as { filter: { from: string; to: string } };
    expect(variables.filter).toMatchObject({ from: `${shiftDay(previousDay, -1)}T15:00:00.000Z`, to: `${day}T14:59:59.999Z` });

    // Another browser (its own storage) starts in its own zone again.
    const { context: fresh, page: other } = await rig.open({ timezoneId: "Europe/Paris" });
    try {
      await other.goto(`/admin/audit-logs`);
      await signIn(other, rig.admin.email);
      await other.waitForURL(/\/admin\/audit-logs/);
      expect(await other.getByLabel("Time zone").inputValue()).toBe("Europe/Paris");
    } finally {
      await fresh.close();
    }
  } finally {
    await context.close();
  }
});
