import { eventually } from "../helpers/eventually";
import type { Page } from "playwright-core";
import {
  failLogin,
  holdRequests,
  interruptibleSocket,
  openLiveView,
  rowIps,
  seedFailedLogins,
  startConsoleRig,
  type ConsoleRig,
} from "../helpers/console";

let rig: ConsoleRig;
const LIVE = "Live: new events appear as they are recorded";

beforeAll(async () => {
  rig = await startConsoleRig({ RATE_LIMIT_REQUESTS: "0" });
  // Enough failed logins that the table scrolls (the viewport shows about a dozen rows).
  await seedFailedLogins(
    rig.app,
    Array.from({ length: 40 }, (_, i) => `192.0.2.${i + 1}`),
  );
}, 60_000);
afterAll(() => rig?.stop());

const liveState = (page: Page) => page.getByTestId("live-state").textContent();

/** Failed logins from `ips`, one after the other through the HTTP API (so their order is the order of `ips`). */
async function failedLogins(ips: string[]): Promise<void> {
  for (const ip of ips) await failLogin(rig.app.url, "outsider@example.test", ip);
}

test("scrolled away, new events wait behind an 'N new' marker with the right count; clicking it shows them at the top", async () => {
  const { context, page } = await rig.open();
  try {
    await openLiveView(page, rig.admin.email, "type=auth.login.failed");
    await eventually(async () => expect(await liveState(page)).toContain(LIVE));
    await eventually(async () => expect((await rowIps(page))[0]).toBe("192.0.2.40"));
    const scroller = page.getByTestId("events-scroller");
    await scroller.evaluate((element) => element.scrollTo({ top: 360 }));
    await eventually(async () => expect(await rowIps(page)).not.toContain("192.0.2.40"));
    const shownBefore = await rowIps(page);

    await failedLogins(["203.0.113.1", "203.0.113.2", "203.0.113.3"]);
    const marker = page.getByRole("button", { name: /new/ });
    await eventually(async () => expect(await marker.textContent()).toBe("3 new ↑"));
    // Held back: the rows the reader is looking at did not move.
    expect(await rowIps(page)).toEqual(shownBefore);
    expect(await scroller.evaluate((element) => element.scrollTop)).toBeGreaterThan(300);

    await marker.click();
    await eventually(async () =>
      expect((await rowIps(page)).slice(0, 4)).toEqual(["203.0.113.3", "203.0.113.2", "203.0.113.1", "192.0.2.40"]),
    );
    expect(await scroller.evaluate((element) => element.scrollTop)).toBe(0);
    expect(await marker.count()).toBe(0);
    expect(await page.getByTestId("total").textContent()).toBe("43");

    // At the top, a new event goes straight in, with no marker.
    await failedLogins(["203.0.113.4"]);
    await eventually(async () => expect((await rowIps(page))[0]).toBe("203.0.113.4"));
    expect(await marker.count()).toBe(0);
  } finally {
    await context.close();
  }
});

test("after the WebSocket drops, the state says so; once it is back every missed event appears exactly once, in order", async () => {
  const { context, page } = await rig.open();
  try {
    const socket = await interruptibleSocket(page);
    await openLiveView(page, rig.admin.email, "type=auth.login.failed");
    await eventually(async () => expect(await liveState(page)).toContain(LIVE));
    const [newest] = await rowIps(page);

    await socket.drop();
    await eventually(async () => expect(await liveState(page)).not.toContain(LIVE));
    const missed = ["198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4", "198.51.100.5"];
    await failedLogins(missed);
    // The console tried again while the socket was refused: the events above were committed during an outage it saw.
    await eventually(() => expect(socket.refused).toBeGreaterThan(0));
    expect((await rowIps(page)).filter((ip) => ip.startsWith("198.51.100."))).toEqual([]);

    // The gap fill is held back on the wire (a slow answer) until an event newer than the gap has come through the new socket.
    const gapFill = holdRequests(page, (body) => body.includes("AuditEventsAfterSeq"));
    socket.allow();
    await eventually(async () => expect(await liveState(page)).toContain(LIVE), { timeout: 30_000 });
    await eventually(() => expect(gapFill.held).toBeGreaterThan(0));
    await failedLogins(["198.51.100.6"]);
    await eventually(async () => expect((await rowIps(page))[0]).toBe("198.51.100.6"));
    await gapFill.release();

    const expected = ["198.51.100.6", ...[...missed].reverse()];
    await eventually(async () => expect((await rowIps(page)).slice(0, 7)).toEqual([...expected, newest]));
    const ips = await rowIps(page);
    expect(ips.filter((ip) => ip.startsWith("198.51.100."))).toEqual(expected);
    expect(new Set(ips).size).toBe(ips.length);
    expect(socket.connections).toBeGreaterThanOrEqual(2);
  } finally {
    await context.close();
  }
});
