/**
 * The console chart's aggregation at scale: `npm run bench:histogram`.
 *
 * Loads BENCH_HISTOGRAM_ROWS audit events (default 10 million, over 12 months, with set-based SQL like
 * `bench:audit`) into a database of its own, then times `auditEventHistogram` (events per time bucket
 * by severity) for the filters the console draws most, each exact (no time budget) and as served
 * (within AUDIT_HISTOGRAM_BUDGET_MS, else estimated from a sample), p50/p95 of BENCH_RUNS runs.
 *
 * Baseline, measured in the same run on the same rows: a plain `count(*)` of the same filter and range,
 * the least any exact aggregation must do. The ratio says what bucketing by time and severity adds.
 *
 * Settings: BENCH_DATABASE_URL (admin URL, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_HISTOGRAM_ROWS (10000000), BENCH_RUNS (5), BENCH_HISTOGRAM_DATABASE (a database name to load
 * once and keep between runs: loaded when missing, reused when present, never dropped).
 */
import "reflect-metadata";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { parseFilter, type AuditFilterInput } from "../src/audit/log/audit-filter";
import { auditConditions } from "../src/audit/log/audit-query.sql";
import { loadConfig } from "../src/platform/config/config";
import { startRuntime } from "../src/app/runtime";
import { integerSetting } from "./bench-settings";
import { percentile } from "./audit.bench";
import { loadAuditEvents } from "./audit-load";

const settings = {
  adminUrl: process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  rows: integerSetting("BENCH_HISTOGRAM_ROWS", 10_000_000, 1000, 100_000_000),
  runs: integerSetting("BENCH_RUNS", 5, 1, 100),
  keep: process.env.BENCH_HISTOGRAM_DATABASE,
};
const ms = (value: number) => `${value.toFixed(0)} ms`;

async function main(): Promise<void> {
  if (settings.keep !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(settings.keep)) {
    throw new Error("BENCH_HISTOGRAM_DATABASE must be a plain lower-case database name");
  }
  const name = settings.keep ?? `fg_bench_hist_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: settings.adminUrl });
  await admin.connect();
  const exists = (await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1;
  if (!exists) await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(settings.adminUrl);
  url.pathname = `/${name}`;
  // Loading and exact counts at this size outlast the service's statement timeout: none here.
  const config = loadConfig({
    DATABASE_URL: url.toString(),
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    DATABASE_STATEMENT_TIMEOUT_MS: "0",
  });
  const runtime = await startRuntime(config, { api: false, workers: false });
  let loadFailed = false;
  try {
    const { services, sequelize } = runtime;
    const [{ count: present }] = (await sequelize.query("SELECT count(*)::bigint AS count FROM audit_events", {
      type: "SELECT",
    })) as Array<{
      count: string;
    }>;
    if (Number(present) === 0) {
      const from = new Date();
      from.setUTCMonth(from.getUTCMonth() - 12);
      await services.audit.ensurePartitions(13, from);
      console.log(`loading ${settings.rows.toLocaleString("en")} audit events over 12 months into ${name}`);
      const started = Date.now();
      loadFailed = true;
      // The chart never filters by text: its trigram and e-mail indexes would only lengthen the load.
      await loadAuditEvents(sequelize, {
        rows: settings.rows,
        months: 12,
        loadJobs: 2,
        keepIndex: (index) => !["audit_events_search_idx", "audit_events_email_idx"].includes(index),
      });
      loadFailed = false;
      console.log(`  loaded in ${Math.round((Date.now() - started) / 1000)} s`);
    }
    const [{ count: rows }] = (await sequelize.query("SELECT count(*)::bigint AS count FROM audit_events", { type: "SELECT" })) as Array<{
      count: string;
    }>;
    console.log(`auditEventHistogram on ${name}: ${Number(rows).toLocaleString("en")} audit events`);

    const now = new Date();
    const dayAgo = new Date(now.getTime() - 86_400_000).toISOString();
    const monthAgo = new Date(now.getTime() - 30 * 86_400_000).toISOString();
    const cases: Array<{ label: string; filter: AuditFilterInput | null }> = [
      { label: "whole range (12 months)", filter: null },
      { label: "last 30 days", filter: { from: monthAgo } },
      { label: "last 24 hours", filter: { from: dayAgo } },
      { label: "auth.login.failed, whole range", filter: { eventTypes: ["auth.login.failed"] } },
      {
        label: "auth.* and warning+, 30 days",
        filter: { eventTypes: ["auth.*"], severities: ["warning", "error", "critical"], from: monthAgo },
      },
      { label: "critical, whole range", filter: { severities: ["critical"] } },
    ];
    const audit = services.audit as unknown as { settings: { histogramBudgetMs?: number } };
    const servedBudget = config.auditHistogramBudgetMs;
    const timed = async (run: () => Promise<unknown>) => {
      const times: number[] = [];
      for (let i = 0; i < settings.runs; i++) {
        const started = performance.now();
        await run();
        times.push(performance.now() - started);
      }
      const sorted = times.sort((a, b) => a - b);
      return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
    };
    const results = [];
    for (const { label, filter } of cases) {
      // Baseline: the same range's rows counted, nothing more (the histogram reports the range it used).
      const shape = await services.audit.histogram(filter);
      const events = shape.buckets.reduce((sum, bucket) => sum + bucket.total, 0);
      const { where, bind } = auditConditions({ ...parseFilter(filter), from: shape.from, before: shape.to });
      const baseline = await timed(() => sequelize.query(`SELECT count(*) FROM audit_events WHERE ${where.join(" AND ")}`, { bind }));
      audit.settings.histogramBudgetMs = 600_000;
      let sampled = false;
      const exact = await timed(async () => {
        sampled = (await services.audit.histogram(filter)).sampled;
      });
      if (sampled) throw new Error(`${label}: an exact histogram came back sampled`);
      audit.settings.histogramBudgetMs = servedBudget;
      let servedSampled = false;
      const served = await timed(async () => {
        servedSampled = (await services.audit.histogram(filter)).sampled;
      });
      results.push({ label, events, buckets: shape.buckets.length, baseline, exact, served, servedSampled });
    }

    console.log(`\n${"filter".padEnd(34)} ${"events".padStart(11)}  exact p50/p95      count(*) p50   ratio   as served p50`);
    for (const result of results) {
      console.log(
        `${result.label.padEnd(34)} ${result.events.toLocaleString("en").padStart(11)}  ${ms(result.exact.p50).padStart(7)} / ${ms(result.exact.p95).padEnd(8)}  ${ms(result.baseline.p50).padStart(8)}   ${(result.exact.p50 / result.baseline.p50).toFixed(2).padStart(5)}×   ${ms(result.served.p50)}${result.servedSampled ? " (sampled)" : ""}`,
      );
    }
    console.log(JSON.stringify({ rows: Number(rows), runs: settings.runs, results }));
  } finally {
    await runtime.stop();
    // A half-loaded database is not worth keeping: the next run would take it for a loaded one.
    if (settings.keep === undefined || loadFailed) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
