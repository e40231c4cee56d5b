import { eventually } from "../helpers/eventually";
import type { Page } from "playwright-core";
import { SplunkReceiver } from "../fakes/siem-receivers";
import { WebhookReceiver } from "../fakes/webhook-receiver";
import { documentationScreenshot } from "../helpers/screenshots";
import { failLogin, seriousViolations, signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";

/**
 * The Audit streaming page in a real Chromium, against the service with its workers delivering to
 * loopback receivers: the webhook receiver verifies every message with the `standardwebhooks` package,
 * so a delivery only counts when the secret the page showed once really signs it.
 */
const HOOK = "Security webhook";
let rig: ConsoleRig;
const receiver = new WebhookReceiver([]);
const splunk = new SplunkReceiver("hec-token-1");

beforeAll(async () => {
  rig = await startConsoleRig(
    { RATE_LIMIT_REQUESTS: "0", OUTBOUND_ALLOWLIST: "127.0.0.1/32", STREAM_POLL_MS: "100", STREAM_RETRY_SCHEDULE: "50ms,100ms,1s" },
    { workers: true },
  );
  await receiver.start();
  await splunk.start();
}, 90_000);
afterAll(async () => {
  await receiver.stop();
  await splunk.stop();
  await rig?.stop();
});

const row = (page: Page, name: string) => page.getByRole("row").filter({ has: page.getByRole("button", { name, exact: true }) });
const status = (page: Page) => page.getByRole("status");
/** Audit events this webhook's filter (auth.*) takes: failed logins from a documentation address. */
const failedLogin = (n: number) => failLogin(rig.app.url, `streamed${n}@example.test`, "192.0.2.10");
const delivered = (eventType: string) => receiver.received.filter((message) => message.data.eventType === eventType);

test("an administrator creates a webhook, tests it, sees its deliveries, pauses, resumes and replays it", async () => {
  const { context, page, foreign, problems } = await rig.open();
  try {
    await page.goto("/admin/streaming");
    await signIn(page, rig.admin.email);
    await page.getByRole("heading", { name: "Audit streaming" }).waitFor();

    // Create, from the keyboard: the form submits with Enter.
    await page.getByRole("button", { name: "Add destination" }).click();
    const form = page.getByRole("form", { name: "New destination" });
    expect(await form.getByLabel("Kind").inputValue()).toBe("webhook");
    await form.getByLabel("Name").fill(HOOK);
    await form.getByLabel("URL", { exact: true }).fill(receiver.url);
    await form.getByLabel(/^Event types/).fill("auth.*");
    await form.getByLabel(/^Event types/).press("Enter");

    // The secret, once: the receiver trusts exactly what the page showed.
    const secret = (await page.getByTestId("signing-secret").textContent())!.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{20,}$/);
    receiver.trust([secret]);
    await page.getByRole("button", { name: "I have copied it" }).click();
    expect(await page.content()).not.toContain(secret);

    await page.getByRole("button", { name: `Send a test event to ${HOOK}` }).click();
    await eventually(async () =>
      expect(await status(page).textContent()).toMatch(/^Test event delivered to Security webhook \(204, \d+ ms\)\.$/),
    );
    expect(receiver.received.map((message) => message.type)).toEqual(["webhook.test"]);

    // Events the filter takes arrive; the delivery log shows each attempt.
    await failedLogin(1);
    await eventually(async () => expect(delivered("auth.login.failed")).toHaveLength(1));
    const first = delivered("auth.login.failed")[0];
    await page.getByRole("button", { name: HOOK, exact: true }).focus();
    await page.keyboard.press("Enter");
    const detail = page.getByRole("region", { name: HOOK });
    const log = detail.getByRole("table", { name: "Delivery log" });
    await eventually(async () => {
      await detail.getByRole("button", { name: "Refresh log" }).click();
      const rows = await log.locator("tbody tr").allTextContents();
      expect(rows).toEqual([
        expect.stringMatching(new RegExp(`delivered204\\d+ ms#${first.data.seq}$`)),
        expect.stringMatching(/^.*delivered \(test\)204\d+ mstest event$/),
      ]);
    });
    await eventually(async () => expect(await row(page, HOOK).textContent()).toContain("active"));

    // Pause: events wait as lag; resume delivers them.
    await page.getByRole("button", { name: `Pause ${HOOK}` }).click();
    await eventually(async () => expect(await row(page, HOOK).getByText("paused").count()).toBe(1));
    await failedLogin(2);
    await eventually(async () => expect(Number(await row(page, HOOK).getByTestId("lag").textContent())).toBeGreaterThan(0), {
      timeout: 20_000,
    });
    expect(delivered("auth.login.failed")).toHaveLength(1);
    await page.getByRole("button", { name: `Resume ${HOOK}` }).click();
    await eventually(async () => expect(delivered("auth.login.failed")).toHaveLength(2));
    await eventually(async () => expect(await row(page, HOOK).getByTestId("lag").textContent()).toBe("0"), { timeout: 20_000 });

    // Replay from the first event's sequence number: it arrives again, with the same webhook-id.
    await detail.getByLabel("First sequence number to deliver again").fill(first.data.seq!);
    await detail.getByRole("button", { name: "Replay" }).click();
    await eventually(async () => expect(await status(page).textContent()).toContain(`replays from sequence ${first.data.seq}`));
    await eventually(async () => expect(receiver.received.filter((message) => message.id === first.id).length).toBe(2));

    // A SIEM through the same form: its credential is write-only.
    await page.getByRole("button", { name: "Add destination" }).click();
    await form.getByLabel("Kind").selectOption("splunk");
    await form.getByLabel("Name").fill("Splunk");
    await form.getByLabel("URL", { exact: true }).fill(splunk.url);
    await form.getByLabel("Source type (optional)").fill("finance:audit");
    await form.getByLabel("HEC token").fill("hec-token-1");
    await form.getByRole("button", { name: "Create destination" }).click();
    await eventually(async () => expect(await status(page).textContent()).toBe("Splunk created."));
    expect(await page.getByTestId("signing-secret").count()).toBe(0);
    await failedLogin(3);
    await eventually(async () => expect(splunk.events.map((event) => event.sourcetype)).toContain("finance:audit"));
    await page.getByRole("button", { name: "Edit Splunk" }).click();
    const edit = page.getByRole("form", { name: "Edit Splunk" });
    expect(await edit.getByLabel("HEC token (stored; leave empty to keep)").inputValue()).toBe("");
    expect(await page.content()).not.toContain("hec-token-1");
    await edit.getByLabel("Description").fill("SOC index");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await eventually(async () => expect(await status(page).textContent()).toBe("Splunk saved."));

    await eventually(async () => expect(await row(page, "Splunk").getByTestId("lag").textContent()).toBe("0"), { timeout: 20_000 });
    expect(await seriousViolations(page)).toEqual([]);
    await documentationScreenshot(page, "streaming.png", { fullPage: true });

    // Rotation shows the new secret once; both secrets sign during the overlap.
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: `Rotate secret of ${HOOK}` }).click();
    await eventually(async () => expect(await page.getByTestId("signing-secret").textContent()).not.toBe(secret));
    const rotated = (await page.getByTestId("signing-secret").textContent())!.trim();
    receiver.trust([rotated]);
    await failedLogin(4);
    const fourth = () =>
      receiver.received.find((message) => (message.data.user as { email?: string } | undefined)?.email === "streamed4@example.test");
    await eventually(async () => expect(fourth()).toBeDefined());
    expect(fourth()!.signatures).toHaveLength(2);
    await page.getByRole("button", { name: "I have copied it" }).click();

    // Delete asks first: dismissed, nothing happens; accepted, the destination goes.
    page.once("dialog", (dialog) => void dialog.dismiss());
    await page.getByRole("button", { name: "Delete Splunk" }).click();
    expect(await row(page, "Splunk").count()).toBe(1);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Delete Splunk" }).click();
    await eventually(async () => expect(await row(page, "Splunk").count()).toBe(0));
    expect(receiver.rejected).toEqual([]);
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
  } finally {
    await context.close();
  }
});

test("an auditor sees the destinations, their health and delivery log, and no write control; the API refuses their changes", async () => {
  const auditor = await rig.createUser("auditor");
  const { context, page } = await rig.open({ colorScheme: "dark", viewport: { width: 768, height: 900 } });
  try {
    await page.goto("/admin/streaming");
    await signIn(page, auditor.email);
    await page.getByRole("heading", { name: "Audit streaming" }).waitFor();
    await page.getByRole("button", { name: HOOK, exact: true }).click();
    const detail = page.getByRole("region", { name: HOOK });
    await eventually(async () =>
      expect(await detail.getByRole("table", { name: "Delivery log" }).locator("tbody tr").count()).toBeGreaterThan(2),
    );
    expect(await row(page, HOOK).textContent()).toContain("active");
    const writes = /Add destination|Edit|Test|Pause|Resume|Retry|Rotate|Delete|Replay/;
    expect(await page.getByRole("button", { name: writes }).count()).toBe(0);
    expect(await page.getByRole("form").count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);

    const id = await page.evaluate(async () => {
      const response = await fetch("/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ streamDestinations { id name } }" }),
      });
      return ((await response.json()) as { data: { streamDestinations: Array<{ id: string; name: string }> } }).data.streamDestinations[0]
        .id;
    });
    const refused = await page.evaluate(async (destinationId) => {
      const response = await fetch("/graphql", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: `mutation { pauseStreamDestination(id: "${destinationId}") { id } }` }),
      });
      return ((await response.json()) as { errors?: Array<{ extensions: { code: string } }> }).errors?.[0].extensions.code;
    }, id);
    expect(refused).toBe("FORBIDDEN");
  } finally {
    await context.close();
  }
});
