/**
 * Export benchmark: `npm run bench:export`.
 *
 * On a scratch database it loads BENCH_EXPORT_ROWS events (default 10 million, with the audit
 * benchmark's loader), then exports all of them as JSONL.gz and as CSV.gz with the service's own
 * worker code (AuditExportService.run: keyset batches, framing, SHA-256, gzip, manifest), and measures
 * in the same run the baseline: `COPY (the same rows, same join to the chain) TO STDOUT` piped through
 * `gzip -6`, as an administrator would do by hand. It prints rows/s of each as a ratio to its baseline
 * and the process's peak RSS, sampled every 100 ms, at each quarter of the run (flat = constant memory).
 *
 * Settings (environment, all optional):
 *   BENCH_DATABASE_URL   admin connection URL (default postgres://postgres@127.0.0.1:5432/postgres);
 *                        fg_bench_export_<random> is created there and dropped at the end
 *   BENCH_EXPORT_ROWS    events to load (default 10000000)
 *   BENCH_AUDIT_MONTHS   months the events span (default 12)
 *   BENCH_LOAD_JOBS      parallel connections for the load (default 2)
 *   EXPORT_BATCH_ROWS    the service's setting (default 20000)
 *   BENCH_ROUNDS         rounds; each format's best round counts, ours and the baseline alike (default 2)
 *   BENCH_KEEP / BENCH_REUSE   keep the database / measure a kept one again (fg_bench_export_…)
 */
import "reflect-metadata";
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { createLogger } from "../src/platform/common/logger";
import { loadConfig } from "../src/platform/config/config";
import { createSequelize } from "../src/platform/db/database";
import { migrateToLatest } from "../src/platform/db/migrator";
import { initModels } from "../src/app/models";
import { LocalEventBus } from "../src/platform/events/event-bus";
import { createServices } from "../src/app/services";
import { createQueueBackend } from "../workers/queues";
import { integerSetting } from "./bench-settings";
import { loadAuditEvents } from "./audit-load";

const settings = {
  adminUrl: process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  rows: integerSetting("BENCH_EXPORT_ROWS", 10_000_000, 1000, 1_000_000_000),
  months: integerSetting("BENCH_AUDIT_MONTHS", 12, 1, 120),
  loadJobs: integerSetting("BENCH_LOAD_JOBS", 2, 1, 16),
  rounds: integerSetting("BENCH_ROUNDS", 2, 1, 20),
  keep: process.env.BENCH_KEEP === "true" || Boolean(process.env.BENCH_REUSE),
  reuse: process.env.BENCH_REUSE,
};

/** The baseline's rows: every event with its chain link, oldest first, as COPY writes them. */
const baselineSelect = (until: string) => `SELECT e.*, c.seq, c.prev_hash, c.hash FROM audit_events e
  LEFT JOIN audit_chain c ON c.occurred_at = e.occurred_at AND c.event_id = e.id WHERE e.occurred_at <= '${until}' ORDER BY e.occurred_at, e.id`;

/** COPY … TO STDOUT | gzip -6, counting the compressed bytes. */
function copyBaseline(url: string, csv: boolean, until: string): Promise<{ seconds: number; bytes: number }> {
  const started = process.hrtime.bigint();
  const copy = `COPY (${baselineSelect(until)}) TO STDOUT${csv ? " WITH (FORMAT csv, HEADER)" : ""}`;
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-o", "pipefail", "-c", `psql "$BENCH_URL" -X -q -c "$BENCH_COPY" | gzip -6 | wc -c`], {
      env: { ...process.env, BENCH_URL: url, BENCH_COPY: copy },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`baseline exited with ${code}`));
      resolve({ seconds: Number(process.hrtime.bigint() - started) / 1e9, bytes: Number(out.trim()) });
    });
  });
}

/** Peak RSS overall and per quarter of a run, sampled every 100 ms. */
function rssSampler() {
  const samples: number[] = [];
  const timer = setInterval(() => samples.push(process.memoryUsage.rss()), 100);
  return {
    stop() {
      clearInterval(timer);
      samples.push(process.memoryUsage.rss());
      const quarter = Math.max(1, Math.ceil(samples.length / 4));
      const quarters = [0, 1, 2, 3].map((q) => Math.max(...samples.slice(q * quarter, (q + 1) * quarter), 0));
      return { peak: Math.max(...samples), quarters };
    },
  };
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function main(): Promise<void> {
  const name = settings.reuse ?? `fg_bench_export_${randomBytes(4).toString("hex")}`;
  if (!/^fg_bench_export_\w+$/.test(name)) throw new Error("BENCH_REUSE must name a database of an earlier run (fg_bench_export_…)");
  const admin = new pg.Client({ connectionString: settings.adminUrl });
  await admin.connect();
  if (!settings.reuse) await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(settings.adminUrl);
  url.pathname = `/${name}`;
  const exportDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-bench-export-"));
  const config = loadConfig({
    DATABASE_URL: url.toString(),
    LOG_LEVEL: "silent",
    EXPORT_DIR: exportDir,
    DATA_DIR: exportDir,
    EXPORT_BATCH_ROWS: process.env.EXPORT_BATCH_ROWS ?? "",
  });
  const sequelize = createSequelize({ url: url.toString(), poolMax: 4 });
  const events = new LocalEventBus(createLogger("silent"));
  const queues = createQueueBackend(config, url.toString());
  try {
    initModels(sequelize);
    await migrateToLatest(sequelize);
    const services = createServices(sequelize, events, { config, queues });
    if (!settings.reuse) {
      const from = new Date();
      from.setUTCMonth(from.getUTCMonth() - settings.months);
      await services.audit.ensurePartitions(settings.months + 1, from);
      console.log(`export benchmark on ${name}: loading ${settings.rows.toLocaleString("en")} events over ${settings.months} months`);
      const loadStarted = Date.now();
      await loadAuditEvents(sequelize, settings);
      console.log(`  load + indexes: ${Math.round((Date.now() - loadStarted) / 1000)} s`);
    }
    const requester = await services.users.create({ email: `bench-${randomUUID()}@example.com`, role: "auditor" });
    // Exports end at a fixed moment, so the events this run records itself are not among their rows.
    const until = new Date().toISOString();
    const [{ count }] = (await sequelize.query("SELECT count(*)::int AS count FROM audit_events WHERE occurred_at <= $1", {
      type: "SELECT",
      bind: [until],
    })) as Array<{ count: number }>;
    global.gc?.();
    const atRest = process.memoryUsage.rss();
    console.log(`  the process at rest, before the first export: RSS ${mb(atRest)}`);
    const results: Array<{ format: string; ratio: number; peakRss: number }> = [];
    const best = new Map<
      string,
      { ours: number; base: number; peakRss: number; quarters: number[]; fileBytes: number; baseBytes: number }
    >();
    // Rounds alternate ours and the baseline, so a noisy spell of the machine hits both.
    for (let round = 1; round <= settings.rounds; round++) {
      for (const format of ["jsonl", "csv"] as const) {
        const baseline = await copyBaseline(url.toString(), format === "csv", until);
        const record = await sequelize.transaction((transaction) =>
          services.repositories.exports.insert(
            {
              id: randomUUID(),
              kind: "events",
              format,
              params: { filter: { to: until } },
              requestedBy: requester.id,
              requestedByEmail: requester.email,
              requestedSession: null,
            },
            transaction,
          ),
        );
        const sampler = rssSampler();
        const started = process.hrtime.bigint();
        const done = await services.auditExports.run(record.id);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const rss = sampler.stop();
        if (done?.status !== "completed" || done.rowsWritten !== count) {
          throw new Error(`export ${format} ended ${done?.status} with ${done?.rowsWritten} rows`);
        }
        fs.rmSync(path.join(exportDir, done.fileName!), { force: true });
        const ours = count / seconds;
        const base = count / baseline.seconds;
        console.log(
          `  round ${round} ${format}.gz: ours ${Math.round(ours).toLocaleString("en")} rows/s (${seconds.toFixed(1)} s), COPY|gzip ${Math.round(base).toLocaleString("en")} rows/s (${baseline.seconds.toFixed(1)} s), peak RSS ${mb(rss.peak)} (per quarter: ${rss.quarters.map(mb).join(", ")})`,
        );
        const previous = best.get(format);
        best.set(format, {
          ours: Math.max(previous?.ours ?? 0, ours),
          base: Math.max(previous?.base ?? 0, base),
          peakRss: Math.max(previous?.peakRss ?? 0, rss.peak),
          quarters: rss.quarters,
          fileBytes: done.fileBytes ?? 0,
          baseBytes: baseline.bytes,
        });
      }
    }
    for (const [format, figures] of best) {
      const ratio = figures.ours / figures.base;
      results.push({ format, ratio, peakRss: figures.peakRss });
      console.log(
        `${format}.gz  ${count.toLocaleString("en")} rows  ours ${Math.round(figures.ours).toLocaleString("en")} rows/s (${mb(figures.fileBytes)})` +
          `  COPY|gzip ${Math.round(figures.base).toLocaleString("en")} rows/s (${mb(figures.baseBytes)})` +
          `  ratio ${ratio.toFixed(2)}×  peak RSS ${mb(figures.peakRss)}`,
      );
    }
    for (const result of results) {
      console.log(`target ${result.format}.gz ≥ 0.5× COPY|gzip: ${result.ratio >= 0.5 ? "MET" : "NOT MET"} (${result.ratio.toFixed(2)}×)`);
      console.log(
        `target ${result.format}.gz peak RSS < 300 MB: ${result.peakRss < 300 * 1024 * 1024 ? "MET" : "NOT MET"} (${mb(result.peakRss)})`,
      );
    }
    console.log(JSON.stringify({ rows: count, results: results.map((r) => ({ ...r, peakRssMb: Math.round(r.peakRss / 1048576) })) }));
  } finally {
    await queues.close();
    await sequelize.close();
    await events.close();
    fs.rmSync(exportDir, { recursive: true, force: true });
    if (settings.keep) console.log(`kept database ${name}`);
    else await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
