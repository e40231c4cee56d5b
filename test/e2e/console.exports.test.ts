/**
 * The console's Exports and Reports pages in a real Chromium, as an auditor uses them: "Export this
 * view" from the audit log carries its filters, the export waits for a worker and then becomes ready
 * on its own (the page follows its progress), the file downloads through its signed URL and parses
 * back to exactly last month's events; the authentication report downloads as a PDF whose text
 * (poppler's pdftotext, not our code) has the totals SQL gives. Keyboard only where a person would
 * press keys; axe-core finds nothing serious; an auditor sees no administrator's controls.
 */
import { eventually } from "../helpers/eventually";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { parse as parseCsv } from "csv-parse/sync";
import type { Page } from "playwright-core";
import { createLogger } from "../../src/platform/common/logger";
import { CSV_COLUMNS } from "../../src/audit/exports/export-formats";
import { WorkerHost } from "../../workers/worker-host";
import { documentationScreenshot } from "../helpers/screenshots";
import { seriousViolations, signIn, startConsoleRig, type ConsoleRig } from "../helpers/console";

/** Values a CSV writer gets wrong: quotes, commas, line breaks, non-ASCII, a spreadsheet formula. */
const AWKWARD = ['Agent "quoted", with a comma', "two\nlines", "Zoë 日本語 🎉", '=HYPERLINK("http://evil.example")', "plain"];
const SEEDED = 30;
jest.setTimeout(120_000);

let rig: ConsoleRig;
let host: WorkerHost | undefined;
let exportDir: string;
let downloads: string;
let auditor: { id: string; email: string };

/** Last month's first and last day (UTC, the browser's zone here). */
function lastMonth(now = new Date()): { from: string; to: string } {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 10);
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0)).toISOString().slice(0, 10);
  return { from, to };
}
const PERIOD = lastMonth();
const IN_PERIOD = `occurred_at >= '${PERIOD.from}T00:00:00Z' AND occurred_at < '${PERIOD.to}T00:00:00Z'::timestamptz + interval '1 day'`;

async function sql<T>(query: string): Promise<T[]> {
  return (await rig.app.runtime.sequelize.query(query, { type: "SELECT" })) as T[];
}

beforeAll(async () => {
  exportDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-console-exports-"));
  downloads = fs.mkdtempSync(path.join(os.tmpdir(), "fg-console-downloads-"));
  // No worker at first: the page shows a request waiting, then follows it once a worker starts.
  rig = await startConsoleRig({ RATE_LIMIT_REQUESTS: "0", EXPORT_DIR: exportDir });
  auditor = await rig.createUser("auditor");
  // A month of sign-ins and changes (the awkward values among them), and events just outside it on both sides.
  await rig.app.runtime.sequelize.query(
    `WITH seeded AS (
       SELECT g, CASE WHEN g < $1 THEN $2::timestamptz + (g * interval '23 hours')
                      WHEN g = $1 THEN $2::timestamptz - interval '1 second'
                      ELSE $3::timestamptz + interval '1 day' END AS at
         FROM generate_series(0, $1 + 1) AS g),
     inserted AS (
       INSERT INTO audit_events (id, occurred_at, event_type, severity, user_email, provider, ip_address, user_agent, request_id, error)
       SELECT gen_random_uuid(), at,
              CASE WHEN g % 3 = 0 THEN 'auth.login.failed' WHEN g % 3 = 1 THEN 'auth.login.success' ELSE 'user.updated' END,
              CASE WHEN g % 3 = 0 THEN 'warning' ELSE 'info' END,
              'person' || (g % 4) || '@example.com', CASE WHEN g % 2 = 0 THEN 'okta' END, ('198.51.100.' || (g % 7))::inet,
              ($4::text[])[1 + g % array_length($4::text[], 1)], 'seed-' || g, CASE WHEN g % 3 = 0 THEN 'invalid_password' END
         FROM seeded
       RETURNING id, occurred_at)
     INSERT INTO audit_unchained (event_id, occurred_at) SELECT id, occurred_at FROM inserted`,
    { bind: [SEEDED, `${PERIOD.from}T00:00:00Z`, `${PERIOD.to}T00:00:00Z`, AWKWARD] },
  );
  await rig.app.runtime.services.audit.chainCommitted();
}, 60_000);

afterAll(async () => {
  await host?.stop();
  await rig?.stop();
  for (const dir of [exportDir, downloads]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function startWorker(): Promise<void> {
  if (host) return;
  host = new WorkerHost(rig.app.runtime.queues, { services: rig.app.runtime.services, logger: createLogger("silent") });
  await host.start();
}

async function signedInAs(email: string, url: string) {
  const opened = await rig.open();
  await opened.page.goto(url);
  await signIn(opened.page, email);
  await opened.page.waitForURL((current) => !current.pathname.endsWith("/sign-in"));
  return opened;
}

/** The newest request's row on the page, once the list shows it. */
const newestRow = (page: Page) => page.locator(".export-requests tbody tr").first();

/** Presses Enter on the row's Download button and saves what the browser downloads. */
async function downloadFrom(page: Page, name: string): Promise<{ file: string; url: string }> {
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    newestRow(page)
      .getByRole("button", { name: /^Download/ })
      .press("Enter"),
  ]);
  const file = path.join(downloads, name);
  await download.saveAs(file);
  return { file, url: download.url() };
}

test("an auditor exports last month as CSV from the audit log's view; the file is exactly last month's events", async () => {
  const { context, page, foreign } = await signedInAs(auditor.email, `/admin/audit-logs?from=${PERIOD.from}&to=${PERIOD.to}`);
  try {
    await eventually(async () => expect(await page.getByTestId("total").textContent()).toBe(String(SEEDED)));
    await page.getByRole("link", { name: "Export this view" }).click();
    await page.waitForURL(`**/admin/exports?from=${PERIOD.from}&to=${PERIOD.to}`);
    await eventually(async () => expect(await page.getByTestId("export-scope").textContent()).toContain(`${SEEDED} right now`));
    // An auditor sees the pages an auditor may use, none of an administrator's.
    const navigation = await page.getByRole("navigation", { name: "Console" }).getByRole("link").allTextContents();
    expect(navigation).toEqual(expect.arrayContaining(["Audit log", "Exports", "Reports"]));
    expect(navigation).not.toContain("Users");
    expect(navigation).not.toContain("SSO providers");

    expect(await page.getByRole("radio", { name: /^CSV/ }).isChecked()).toBe(true);
    expect(await page.getByRole("radio", { name: /^gzip/ }).isChecked()).toBe(true);
    await page.getByRole("button", { name: "Create export" }).press("Enter");
    await eventually(async () => expect(await page.getByRole("status").first().textContent()).toContain("CSV export requested"));
    // No worker yet: it waits, with its progress shown, until one starts; the page follows on its own.
    await eventually(async () => expect(await newestRow(page).getAttribute("data-status")).toBe("QUEUED"));
    await newestRow(page).getByRole("progressbar").waitFor();
    await startWorker();
    await eventually(async () => expect(await newestRow(page).getAttribute("data-status")).toBe("COMPLETED"), { timeout: 30_000 });
    expect(await newestRow(page).locator("td").nth(4).textContent()).toBe(String(SEEDED));
    expect({ exports: await seriousViolations(page) }).toEqual({ exports: [] });
    await documentationScreenshot(page, "exports.png", { fullPage: true });

    const { file, url } = await downloadFrom(page, "last-month.csv.gz");
    expect(new URL(url).pathname).toMatch(/^\/exports\/[0-9a-f-]{36}\/download$/);
    expect(new URL(url).searchParams.get("signature")).toBeTruthy();
    const rows: Record<string, string>[] = parseCsv(gunzipSync(fs.readFileSync(file)), { columns: true });
    expect(Object.keys(rows[0])).toEqual([...CSV_COLUMNS]);
    const expected = await sql<{ id: string; type: string; ip: string; agent: string; error: string | null }>(
      `SELECT id, event_type AS type, host(ip_address) AS ip, user_agent AS agent, error FROM audit_events WHERE ${IN_PERIOD} ORDER BY occurred_at, id`,
    );
    expect(expected).toHaveLength(SEEDED);
    // A field a spreadsheet would run as a formula is written with a leading apostrophe; everything else as it is.
    const asWritten = (value: string) => (/^[=+\-@\t\r]/.test(value) ? `'${value}` : value);
    expect(rows.map((row) => [row.id, row.eventType, row.ipAddress, row.userAgent, row.error])).toEqual(
      expected.map((event) => [event.id, event.type, event.ip, asWritten(event.agent), event.error ?? ""]),
    );
    expect(foreign).toEqual([]);
  } finally {
    await context.close();
  }
});

test("an auditor downloads last month's authentication report as PDF; its totals are the log's", async () => {
  const { context, page } = await signedInAs(auditor.email, "/admin/audit-logs");
  try {
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Reports" }).click();
    await page.waitForURL("**/admin/reports");
    // The defaults are what an auditor asks for most: the authentication template over last month, as PDF.
    expect(await page.getByLabel("Template").inputValue()).toBe("AUTHENTICATION");
    expect(await page.getByLabel("From (day)").inputValue()).toBe(PERIOD.from);
    expect(await page.getByLabel("To (day, inclusive)").inputValue()).toBe(PERIOD.to);
    expect(await page.getByRole("radio", { name: "PDF" }).isChecked()).toBe(true);
    expect(await page.locator("#template-hint").textContent()).toContain("SOC 2 CC6.1, CC6.2, CC6.3, CC7.2");
    // An auditor picks users by e-mail too (console.user-picker.test.ts); nobody pastes ids.
    expect(await page.getByRole("combobox", { name: "Users" }).count()).toBe(1);

    await page.getByLabel("Template").selectOption("CUSTOM");
    // The custom fields render after the change: wait for them rather than count at once.
    await page.getByLabel("Group by").waitFor();
    await page.getByRole("group", { name: "Columns" }).waitFor();
    expect({ customReport: await seriousViolations(page) }).toEqual({ customReport: [] });
    await page.getByLabel("Template").selectOption("AUTHENTICATION");

    await startWorker();
    await page.getByRole("button", { name: "Create report" }).press("Enter");
    await eventually(async () => expect(await newestRow(page).getAttribute("data-status")).toBe("COMPLETED"), { timeout: 30_000 });
    await documentationScreenshot(page, "reports.png", { fullPage: true });
    const { file } = await downloadFrom(page, "authentication-report.pdf");
    expect(fs.readFileSync(file).subarray(0, 5).toString()).toBe("%PDF-");

    const pages = Number(/Pages:\s+(\d+)/.exec(execFileSync("pdfinfo", [file], { encoding: "utf8" }))![1]);
    const text = execFileSync("pdftotext", ["-layout", file, "-"], { encoding: "utf8" });
    const [counts] = await sql<{ scope: string; ok: string; failed: string }>(
      `SELECT count(*) FILTER (WHERE event_type LIKE 'auth.%') AS scope,
              count(*) FILTER (WHERE event_type = 'auth.login.success') AS ok,
              count(*) FILTER (WHERE event_type = 'auth.login.failed') AS failed
         FROM audit_events WHERE ${IN_PERIOD}`,
    );
    expect(Number(counts.failed)).toBeGreaterThan(0);
    expect(text).toContain(`Period: ${PERIOD.from} to ${PERIOD.to}`);
    expect(text).toContain(`by ${auditor.email}`);
    expect(text).toContain(`Events in scope: ${counts.scope}`);
    expect(text).toMatch(new RegExp(`All providers\\s+${counts.ok}\\s+${counts.failed}`));
    for (let n = 1; n <= pages; n++) expect(text).toContain(`Page ${n} of ${pages}`);
  } finally {
    await context.close();
  }
});

test("an administrator's report form looks users up by name; the pages are keyboard-reachable from the navigation", async () => {
  const { context, page } = await signedInAs(rig.admin.email, "/admin/reports");
  try {
    await page.getByLabel("Template").waitFor();
    expect(await page.getByRole("combobox", { name: "Users" }).count()).toBe(1);
    // From the skip link onwards, Tab reaches the Exports link in the navigation, and Enter opens it.
    await page.goto("/admin/audit-logs");
    await page.locator(".topbar").waitFor();
    let reached = false;
    for (let presses = 0; presses < 15 && !reached; presses++) {
      await page.keyboard.press("Tab");
      // Read at once: a locator would wait for a focused element when the page itself has the focus.
      reached =
        (await page.evaluate(
          () =>
            (globalThis as unknown as { document: { activeElement: { textContent: string | null } | null } }).document.activeElement
              ?.textContent,
        )) === "Exports";
    }
    expect(reached).toBe(true);
    await page.keyboard.press("Enter");
    await page.waitForURL("**/admin/exports");
    // The URL changes before the page renders: wait for its heading (waitFor fails the test when it never comes).
    await page.getByRole("heading", { name: "Exports", level: 1 }).waitFor();
  } finally {
    await context.close();
  }
});

test("the days of an export and a report are whole days in the viewer's zone", async () => {
  // India has no daylight saving time: its days begin at 18:30 UTC the day before, whatever the month.
  const { context, page } = await rig.open({ timezoneId: "Asia/Kolkata" });
  try {
    await page.goto(`/admin/exports?from=${PERIOD.from}&to=${PERIOD.to}`);
    await signIn(page, auditor.email);
    await page.waitForURL(`**/admin/exports?from=${PERIOD.from}&to=${PERIOD.to}`);
    await startWorker();
    await page.getByRole("radio", { name: /^JSONL/ }).check();
    await page.getByRole("button", { name: "Create export" }).click();
    await eventually(async () => expect(await page.getByRole("status").first().textContent()).toContain("JSONL export requested"));
    await page.goto("/admin/reports");
    await page.getByRole("radio", { name: "JSON" }).check();
    await page.getByRole("button", { name: "Create report" }).click();
    await eventually(async () => expect(await page.getByRole("status").first().textContent()).toContain("requested"));

    const dayBefore = new Date(Date.parse(`${PERIOD.from}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    const requests = await rig.app.runtime.services.repositories.exports.listFor(auditor.id, { kind: null, limit: 2 });
    const report = requests.find((request) => request.kind === "report")!.params.report as { from: string; to: string };
    const exported = requests.find((request) => request.kind === "events")!.params.filter as { from: string; to: string };
    for (const period of [report, exported]) {
      expect({ from: period.from, to: period.to }).toEqual({ from: `${dayBefore}T18:30:00.000Z`, to: `${PERIOD.to}T18:29:59.999Z` });
    }
  } finally {
    await context.close();
  }
});
