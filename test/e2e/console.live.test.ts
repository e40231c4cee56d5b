import { eventually } from "../helpers/eventually";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Page } from "playwright-core";
import { CLI } from "../helpers/cli";
import { failLogin, signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";
import { redisUrl } from "../helpers/database-urls";

// Functions passed to page.evaluate and addInitScript run in the browser, where these exist.
declare const window: any;
declare const AudioContext: any;
type NotificationOptions = Record<string, unknown>;
let rig: ConsoleRig;

beforeAll(async () => {
  rig = await startConsoleRig({ RATE_LIMIT_REQUESTS: "0" });
}, 60_000);
afterAll(() => rig?.stop());

const rowTexts = (page: Page) => page.locator(".events-scroller [role=row]").allTextContents();

async function liveView(page: Page, query: string) {
  await page.goto(`/admin/audit-logs?${query}&live=1`);
  await signIn(page, rig.admin.email);
  await page.waitForURL(/\/admin\/audit-logs/);
}

test("live: an event recorded by another process appears at the top as it is recorded", async () => {
  const { context, page } = await rig.open();
  try {
    await liveView(page, "type=user.*");
    await eventually(async () => expect(await page.getByTestId("live-state").textContent()).toContain("Live: new events appear"));
    const email = `live${Date.now()}@example.test`;
    const { config } = rig.app.runtime;
    // `admin create` in its own process records user.created; its sequencer links the event and publishes it on the bus.
    await promisify(execFile)(process.execPath, [CLI, "admin", "create", "--email", email, "--password", "live test password 1"], {
      env: {
        ...process.env,
        DATABASE_URL: config.databaseUrl!,
        REDIS_URL: redisUrl(),
        REDIS_PREFIX: config.redisPrefix,
        LOG_LEVEL: "silent",
      },
    });
    // Pushed, not refreshed: the live view refreshes only without its socket, and then every 30 s.
    await eventually(async () => expect((await rowTexts(page))[0]).toContain(email), { timeout: 5_000 });
  } finally {
    await context.close();
  }
});

test("with the WebSocket blocked, the live view says so and refreshes every 30 s, missing nothing", async () => {
  const { context, page } = await rig.open();
  try {
    await page.clock.install();
    await page.routeWebSocket(/\/graphql$/, (socket) => socket.close());
    await liveView(page, "type=auth.login.failed");
    await eventually(async () => expect(await page.getByTestId("live-state").textContent()).toContain("refreshing every 30 s"));
    await failLogin(rig.app.url, "blocked@example.test", "203.0.113.200");
    await rig.app.runtime.services.audit.chainCommitted();
    await page.clock.runFor(5_000);
    expect((await rowTexts(page)).some((row) => row.includes("203.0.113.200"))).toBe(false);
    await page.clock.runFor(26_000);
    await eventually(async () => expect((await rowTexts(page))[0]).toContain("203.0.113.200"));
  } finally {
    await context.close();
  }
});

test("a critical event raises a desktop notification, a security event plays a sound; both switches are remembered", async () => {
  const { context, page } = await rig.open();
  await context.grantPermissions(["notifications"]);
  // Record what the page asks of the browser's Notification and Web Audio APIs.
  await context.addInitScript(() => {
    const seen = { notifications: [] as string[], sounds: 0 };
    (window as unknown as { __alerts: typeof seen }).__alerts = seen;
    const Original = window.Notification;
    class Recorded extends Original {
      constructor(title: string, options?: NotificationOptions) {
        super(title, options);
        seen.notifications.push(title);
      }
    }
    Object.defineProperty(window, "Notification", { value: Recorded });
    const createOscillator = AudioContext.prototype.createOscillator;
    AudioContext.prototype.createOscillator = function (this: unknown) {
      seen.sounds += 1;
      return createOscillator.call(this);
    };
  });
  const alerts = () => page.evaluate(() => (window as unknown as { __alerts: { notifications: string[]; sounds: number } }).__alerts);
  try {
    await liveView(page, "type=user.*&type=auth.login.failed");
    await page.getByLabel("Notify critical events").check();
    await page.getByLabel("Sound for security events").check();
    await eventually(async () => expect(await page.getByTestId("live-state").textContent()).toContain("Live: new events appear"));

    const { services, sequelize } = rig.app.runtime;
    await sequelize.transaction((transaction) =>
      services.audit.record(transaction, {
        type: "user.suspended",
        severity: "critical",
        user: { id: rig.admin.id, email: rig.admin.email },
        resource: { type: "user", id: rig.admin.id, label: "suspicious@example.test" },
      }),
    );
    await eventually(async () => expect((await alerts()).notifications).toEqual(["Critical audit event: user.suspended"]));
    const soundsBefore = (await alerts()).sounds;
    expect(soundsBefore).toBeGreaterThan(0);
    await failLogin(rig.app.url, "intruder@example.test", "198.51.100.66");
    await eventually(async () => expect((await alerts()).sounds).toBeGreaterThan(soundsBefore));

    await page.reload();
    await page.getByLabel("Notify critical events").waitFor();
    expect(await page.getByLabel("Notify critical events").isChecked()).toBe(true);
    expect(await page.getByLabel("Sound for security events").isChecked()).toBe(true);
  } finally {
    await context.close();
  }
});
