/**
 * Admin console benchmark: `npm run bench:dashboard`.
 *
 * On a scratch database with BENCH_DASHBOARD_ROWS audit events (default 1 million, over 12 months,
 * loaded like `bench:audit`), the service and a headless Chromium (Debian's, driven by playwright-core):
 *
 *   - first rows painted: time from navigation to /admin/audit-logs until the first row of events is in
 *     the page (performance.now() in the page, which counts from the navigation), p50/p95 over
 *     BENCH_LOADS loads (default 20), next to the baseline measured in the same run: the same first
 *     page (AuditEvents, 100 events) fetched over HTTP by Node, so the ratio is what the browser adds;
 *   - scrolling 10,000 rows (infinite scroll by cursor): the largest number of rows in the DOM meanwhile
 *     (it must stay bounded: virtualisation), and the time taken;
 *   - the chart's aggregation (auditEventHistogram) over the whole range and over one event type, exact
 *     (no time budget) and as served (within AUDIT_HISTOGRAM_BUDGET_MS, else sampled), p50 of 5.
 *
 * Settings: BENCH_DATABASE_URL (admin URL, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_DASHBOARD_ROWS (1000000), BENCH_LOADS (20), BENCH_SCROLL_ROWS (10000).
 */
import "reflect-metadata";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { loadConfig } from "../src/platform/config/config";
import { startRuntime } from "../src/app/runtime";
import { launchChromium } from "../test/helpers/chromium";
import { percentile } from "./audit.bench";
import { loadAuditEvents } from "./audit-load";

const setting = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
};
const settings = {
  adminUrl: process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  rows: setting("BENCH_DASHBOARD_ROWS", 1_000_000),
  loads: setting("BENCH_LOADS", 20),
  scrollRows: setting("BENCH_SCROLL_ROWS", 10_000),
};
const PASSWORD = "dashboard bench password";
const ROW = ".events-scroller [role=row]";
const FIRST_PAGE = `query ($first: Int) { auditEvents(first: $first) { nodes { id seq timestamp eventType severity user { id email }
  provider action resource { type id label } ipAddress userAgent sessionId requestId changes error prevHash hash }
  pageInfo { hasNextPage endCursor total totalCapped } } }`;

// Functions passed to page.evaluate run in the browser, where this exists.
declare const document: { querySelector(selector: string): unknown };

const ms = (value: number) => `${value.toFixed(0)} ms`;
const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
};

async function main(): Promise<void> {
  const name = `fg_bench_dash_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: settings.adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(settings.adminUrl);
  url.pathname = `/${name}`;
  const config = loadConfig({ DATABASE_URL: url.toString(), PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", RATE_LIMIT_REQUESTS: "0" });
  const runtime = await startRuntime(config, { api: true, workers: false });
  const chromium = await launchChromium();
  try {
    const { services, sequelize } = runtime;
    const from = new Date();
    from.setUTCMonth(from.getUTCMonth() - 12);
    await services.audit.ensurePartitions(13, from);
    console.log(`dashboard benchmark on ${name}: ${settings.rows.toLocaleString("en")} audit events over 12 months`);
    await loadAuditEvents(sequelize, { rows: settings.rows, months: 12, loadJobs: 2 });
    const user = await services.users.create({ email: "bench@example.test", role: "admin", password: PASSWORD });
    const base = runtime.url!;

    const login = await fetch(`${base}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: user.email, password: PASSWORD }),
    });
    const { access_token: token } = (await login.json()) as { access_token: string };
    const baseline: number[] = [];
    for (let i = 0; i < settings.loads; i++) {
      const started = performance.now();
      const response = await fetch(`${base}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: FIRST_PAGE, variables: { first: 100 } }),
      });
      await response.json();
      baseline.push(performance.now() - started);
    }

    const context = await chromium.browser.newContext({ baseURL: base, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto("/admin/sign-in");
    await page.getByLabel("E-mail").fill(user.email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.locator(ROW).first().waitFor({ timeout: 60_000 });
    const painted: number[] = [];
    for (let i = 0; i < settings.loads; i++) {
      await page.goto("/admin/audit-logs", { waitUntil: "commit" });
      const handle = await page.waitForFunction((selector) => document.querySelector(selector) && performance.now(), ROW, {
        polling: "raf",
        timeout: 60_000,
      });
      painted.push((await handle.jsonValue()) as number);
    }

    // Scroll through 10,000 rows as a reader would, a screenful at a time, counting rows in the DOM.
    await page.goto("/admin/audit-logs");
    await page.locator(ROW).first().waitFor();
    const scroller = page.getByTestId("events-scroller");
    let maxRows = 0;
    const scrollStarted = performance.now();
    const deadline = Date.now() + 10 * 60_000;
    for (;;) {
      const state = await scroller.evaluate((element, selector) => {
        element.scrollTop += element.clientHeight;
        return { top: element.scrollTop, rows: element.querySelectorAll(selector).length, height: element.scrollHeight };
      }, "[role=row]");
      maxRows = Math.max(maxRows, state.rows);
      if (state.top / 36 >= settings.scrollRows) break;
      if (Date.now() > deadline) throw new Error(`scrolled only ${Math.round(state.top / 36)} rows in 10 minutes`);
      await page.waitForTimeout(16);
    }
    const scrollMs = performance.now() - scrollStarted;

    const histogramCase = async (filter: Record<string, unknown> | null, exact: boolean) => {
      const times: number[] = [];
      let sampled = false;
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const result = await services.audit.histogram(filter);
        times.push(performance.now() - started);
        sampled = result.sampled;
        if (exact && result.sampled) throw new Error("an exact histogram came back sampled");
      }
      return { ...stats(times), sampled };
    };
    const served = {
      all: await histogramCase(null, false),
      failedLogins: await histogramCase({ eventTypes: ["auth.login.failed"] }, false),
    };
    // The same, counted exactly whatever it takes: a second service view with no budget.
    (services.audit as unknown as { settings: { histogramBudgetMs: number } }).settings.histogramBudgetMs = 600_000;
    const exact = {
      all: await histogramCase(null, true),
      failedLogins: await histogramCase({ eventTypes: ["auth.login.failed"] }, true),
    };

    const paint = stats(painted);
    const api = stats(baseline);
    console.log(`\nFirst rows painted, ${settings.loads} loads of /admin/audit-logs (${settings.rows.toLocaleString("en")} events)`);
    console.log(`  console           p50 ${ms(paint.p50)}  p95 ${ms(paint.p95)}`);
    console.log(`  baseline (API)    p50 ${ms(api.p50)}  p95 ${ms(api.p95)}   (the same first page over HTTP from Node)`);
    console.log(`  ratio             p50 ${(paint.p50 / api.p50).toFixed(1)}× baseline  p95 ${(paint.p95 / api.p95).toFixed(1)}× baseline`);
    console.log(`\nScrolling ${settings.scrollRows.toLocaleString("en")} rows: at most ${maxRows} rows in the DOM, ${ms(scrollMs)}`);
    console.log(`\nChart aggregation (auditEventHistogram), p50/p95 of 5`);
    for (const [label, result] of Object.entries({
      "whole range, as served": served.all,
      "whole range, exact": exact.all,
      "auth.login.failed, as served": served.failedLogins,
      "auth.login.failed, exact": exact.failedLogins,
    })) {
      console.log(`  ${label.padEnd(30)} p50 ${ms(result.p50)}  p95 ${ms(result.p95)}${result.sampled ? "  (sampled)" : ""}`);
    }
    console.log(
      JSON.stringify({
        rows: settings.rows,
        firstRowsPaintedMs: paint,
        baselineMs: api,
        ratioP50: paint.p50 / api.p50,
        maxDomRows: maxRows,
        scrollMs,
        histogram: { served, exact },
      }),
    );
    await context.close();
  } finally {
    await chromium.close();
    await runtime.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
