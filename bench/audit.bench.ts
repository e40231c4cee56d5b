/**
 * Audit log benchmark: `npm run bench:audit`.
 *
 * On a scratch database it loads BENCH_AUDIT_ROWS realistic events (default 10 million) with
 * set-based SQL (generate_series, not the API), spread over BENCH_AUDIT_MONTHS monthly partitions,
 * builds the migration's indexes, then reports in one run:
 *
 *   - p50/p95 latency of the first page (AuditService.list: the page of 50 plus its capped total) for
 *     each single filter, combined filters, free-text search and the IP wildcard;
 *   - deep paging by cursor (100 consecutive pages of 100 from the newest event);
 *   - recording throughput of audit.record() (one event per transaction, sequential and with
 *     concurrent writers; and 100 per transaction) as a ratio to plain INSERTs of the same rows into
 *     the same table, measured alternately in the same run.
 *
 * Settings (environment, all optional):
 *   BENCH_DATABASE_URL   admin connection URL of the Postgres server (default postgres://postgres@127.0.0.1:5432/postgres);
 *                        fg_bench_audit_<random> is created there and dropped at the end
 *   BENCH_AUDIT_ROWS     events to load (default 10000000)
 *   BENCH_AUDIT_MONTHS   months the events span, ending now (default 12)
 *   BENCH_SAMPLES        timed runs per query case (default 25)
 *   BENCH_RECORDS        events per recording case (default 2000)
 *   BENCH_WRITERS        concurrent writers in the concurrent recording case (default 8)
 *   BENCH_ROUNDS         alternating rounds of each recording case, the best of which is reported (default 2)
 *   BENCH_LOAD_JOBS      parallel connections for the load and the index builds (default 2)
 *   BENCH_KEEP           "true" keeps the database (its name is printed)
 *   BENCH_REUSE          name of a database kept by an earlier run: skips the load and measures again
 *   BENCH_AUDIT_PARTS    which measurements to run: "search", "recording" or both (default "search,recording")
 */
import "reflect-metadata";
import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import type { Sequelize } from "sequelize";
import { runInAuditContext } from "../src/platform/common/audit-context";
import type { AuditEventInput } from "../src/audit/log/audit.service";
import type { AuditFilterInput } from "../src/audit/log/audit-filter";
import { createLogger } from "../src/platform/common/logger";
import { loadConfig } from "../src/platform/config/config";
import { createSequelize } from "../src/platform/db/database";
import { migrateToLatest } from "../src/platform/db/migrator";
import { initModels } from "../src/app/models";
import { LocalEventBus } from "../src/platform/events/event-bus";
import { createServices, type Services } from "../src/app/services";
import { createQueueBackend } from "../workers/queues";
import { integerSetting } from "./bench-settings";
import { loadAuditEvents, PROVIDERS, userId, USERS } from "./audit-load";
import { cpuSeconds } from "./process-stats";

const settings = {
  adminUrl: process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  rows: integerSetting("BENCH_AUDIT_ROWS", 10_000_000, 1000, 1_000_000_000),
  months: integerSetting("BENCH_AUDIT_MONTHS", 12, 1, 120),
  samples: integerSetting("BENCH_SAMPLES", 25, 3, 10_000),
  records: integerSetting("BENCH_RECORDS", 2000, 100, 1_000_000),
  writers: integerSetting("BENCH_WRITERS", 8, 1, 64),
  rounds: integerSetting("BENCH_ROUNDS", 2, 1, 20),
  loadJobs: integerSetting("BENCH_LOAD_JOBS", 2, 1, 16),
  keep: process.env.BENCH_KEEP === "true" || Boolean(process.env.BENCH_REUSE),
  reuse: process.env.BENCH_REUSE,
  parts: partsSetting(process.env.BENCH_AUDIT_PARTS),
};

function partsSetting(raw: string | undefined): Set<"search" | "recording"> {
  const parts = (raw || "search,recording").split(",").map((part) => part.trim());
  const unknown = parts.find((part) => part !== "search" && part !== "recording");
  if (unknown !== undefined) throw new Error(`BENCH_AUDIT_PARTS takes "search" and/or "recording", got ${JSON.stringify(unknown)}`);
  return new Set(parts as Array<"search" | "recording">);
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

type Case = { name: string; filter: () => AuditFilterInput };

async function timeCase(services: Services, testCase: Case): Promise<{ p50: number; p95: number; rows: number }> {
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < settings.samples + 2; i += 1) {
    const filter = testCase.filter();
    const started = process.hrtime.bigint();
    const page = await services.audit.list(filter, { first: 50 });
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    if (i >= 2) times.push(elapsed);
    rows += page.events.length;
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95), rows: Math.round(rows / (settings.samples + 2)) };
}

function isoDaysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString();
}

const randomInt = (max: number) => Math.floor(Math.random() * max);
const randomUser = () => userId(1 + randomInt(USERS));

async function queryCases(services: Services): Promise<void> {
  const span = settings.months * 30;
  const cases: Case[] = [
    { name: "no filter (newest first)", filter: () => ({}) },
    { name: "user", filter: () => ({ userIds: [randomUser()] }) },
    { name: "provider", filter: () => ({ providers: [PROVIDERS[randomInt(PROVIDERS.length)]] }) },
    { name: "event type (exact, 8%)", filter: () => ({ eventTypes: ["auth.login.failed"] }) },
    { name: "event type (rare exact)", filter: () => ({ eventTypes: ["provider.deleted"] }) },
    { name: "event type prefix user.*", filter: () => ({ eventTypes: ["user.*"] }) },
    { name: "severity warning", filter: () => ({ severities: ["warning"] }) },
    {
      name: "date range (one week)",
      filter: () => {
        const start = 7 + randomInt(span - 7);
        return { from: isoDaysAgo(start), to: isoDaysAgo(start - 7) };
      },
    },
    {
      name: "combined: user + auth.* + 3 months",
      filter: () => ({ userIds: [randomUser()], eventTypes: ["auth.*"], from: isoDaysAgo(90) }),
    },
    {
      name: "combined: provider + warning + 10.1.*",
      filter: () => ({ providers: ["okta"], severities: ["warning"], ipAddress: "10.1.*" }),
    },
    {
      name: "combined: failed + search + week",
      filter: () => {
        const start = 7 + randomInt(span - 7);
        return { eventTypes: ["auth.login.failed"], search: "account_locked", from: isoDaysAgo(start), to: isoDaysAgo(start - 7) };
      },
    },
    { name: "free text: common (firefox)", filter: () => ({ search: "firefox" }) },
    { name: "free text: rare (account_locked)", filter: () => ({ search: "account_locked" }) },
    { name: "free text: one user's e-mail", filter: () => ({ search: `user${1 + randomInt(USERS)}@example.com` }) },
    { name: "free text: no match", filter: () => ({ search: `nomatch${randomInt(1e9)}` }) },
    { name: "IP wildcard 10.1.*", filter: () => ({ ipAddress: `10.${randomInt(256)}.*` }) },
    { name: "IP wildcard 10.1.2.*", filter: () => ({ ipAddress: `10.${randomInt(256)}.${randomInt(256)}.*` }) },
  ];
  console.log(`\nFirst page (50 events + capped total), ${settings.samples} samples each, ms`);
  console.log(`  ${"case".padEnd(42)} ${"p50".padStart(8)} ${"p95".padStart(8)} ${"rows".padStart(6)}`);
  for (const testCase of cases) {
    const { p50, p95, rows } = await timeCase(services, testCase);
    console.log(`  ${testCase.name.padEnd(42)} ${p50.toFixed(1).padStart(8)} ${p95.toFixed(1).padStart(8)} ${String(rows).padStart(6)}`);
  }

  const pageTimes: number[] = [];
  let after: string | null = null;
  for (let page = 0; page < 100; page += 1) {
    const started = process.hrtime.bigint();
    const result: Awaited<ReturnType<Services["audit"]["list"]>> = await services.audit.list({}, { first: 100, after });
    pageTimes.push(Number(process.hrtime.bigint() - started) / 1e6);
    after = result.nextCursor;
  }
  pageTimes.sort((a, b) => a - b);
  console.log(
    `  ${"cursor paging, pages 1-100 of 100".padEnd(42)} ${percentile(pageTimes, 50).toFixed(1).padStart(8)} ${percentile(pageTimes, 95).toFixed(1).padStart(8)}`,
  );
}

function sampleEvent(i: number): AuditEventInput {
  return {
    type: "auth.login.success",
    user: { id: userId(1 + (i % USERS)), email: `user${1 + (i % USERS)}@example.com` },
    provider: "okta",
    action: "login",
    resource: { type: "session", id: randomUUID() },
  };
}

const PLAIN_INSERT = `INSERT INTO audit_events (id, occurred_at, event_type, severity, user_id, user_email, provider, action,
  resource_type, resource_id, ip_address, user_agent, session_id, request_id)
  VALUES ($1, $2, $3, 'info', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`;

function plainInsert(sequelize: Sequelize, i: number, transaction: unknown) {
  const event = sampleEvent(i);
  return sequelize.query(PLAIN_INSERT, {
    bind: [
      randomUUID(),
      new Date(),
      event.type,
      event.user!.id,
      event.user!.email,
      event.provider,
      event.action,
      "session",
      event.resource!.id,
      "10.1.2.3",
      "bench",
      null,
      "bench-request",
    ],
    transaction: transaction as never,
  });
}

/**
 * record() returns once the event is in the caller's transaction; the sequencer links committed
 * events afterwards, on the same machine. So two rates for record(): as its callers see it, and until
 * the last event is linked (the rate the chain sustains), each against plain INSERTs of the same rows.
 */
async function recordingCases(sequelize: Sequelize, services: Services): Promise<void> {
  const context = { ipAddress: "10.1.2.3", userAgent: "bench", requestId: "bench-request", sessionId: null };
  const n = settings.records;
  const seconds = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e9;
  const cpu = new CpuOfRun(sequelize);
  const run = async (writers: number, perTransaction: number, write: (i: number, transaction: unknown) => Promise<unknown>) => {
    let next = 0;
    await cpu.start();
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: writers }, async () => {
        while (next < n) {
          const base = next;
          next += perTransaction;
          await sequelize.transaction(async (transaction) => {
            for (let i = base; i < Math.min(n, base + perTransaction); i += 1) await write(i, transaction);
          });
        }
      }),
    );
    const written = n / seconds(started);
    await services.audit.settle();
    const linked = n / seconds(started);
    // Milliseconds of CPU per event until the last one is linked: the cost a busy machine blurs least.
    return { written, linked, cpuMs: (await cpu.stop()) / n };
  };
  const record = (i: number, transaction: unknown) => services.audit.record(transaction as never, sampleEvent(i));
  const plain = (i: number, transaction: unknown) => plainInsert(sequelize, i, transaction);
  const variants = [
    { name: "one per transaction, 1 writer", writers: 1, per: 1 },
    { name: `one per transaction, ${settings.writers} writers`, writers: settings.writers, per: 1 },
    { name: "100 per transaction, 1 writer", writers: 1, per: 100 },
  ];
  const columns = ["record()", "+linked", "INSERT", "ratio", "linked", "cpu rec", "cpu ins", "cpu ratio"];
  console.log(`\nRecording ${n} events per case, events/s (best of ${settings.rounds} alternating rounds)`);
  console.log(
    "  cpu: ms of CPU per event (this process and the database's backends), least of the rounds; cpu ratio = INSERT's / record()'s",
  );
  console.log(`  ${"case".padEnd(42)} ${columns.map((column) => column.padStart(9)).join(" ")}`);
  await runInAuditContext(context, async () => {
    for (const variant of variants) {
      const best = { written: 0, linked: 0, plain: 0, cpuRecord: Infinity, cpuPlain: Infinity };
      for (let round = 0; round < settings.rounds; round += 1) {
        const plainRates = await run(variant.writers, variant.per, plain);
        best.plain = Math.max(best.plain, plainRates.written);
        best.cpuPlain = Math.min(best.cpuPlain, plainRates.cpuMs);
        const rates = await run(variant.writers, variant.per, record);
        best.written = Math.max(best.written, rates.written);
        best.linked = Math.max(best.linked, rates.linked);
        best.cpuRecord = Math.min(best.cpuRecord, rates.cpuMs);
      }
      const cells = [best.written.toFixed(0), best.linked.toFixed(0), best.plain.toFixed(0)];
      cells.push((best.written / best.plain).toFixed(2), (best.linked / best.plain).toFixed(2));
      cells.push(best.cpuRecord.toFixed(3), best.cpuPlain.toFixed(3), (best.cpuPlain / best.cpuRecord).toFixed(2));
      console.log(`  ${variant.name.padEnd(42)} ${cells.map((cell) => cell.padStart(9)).join(" ")}`);
    }
  });
}

/**
 * CPU seconds of one recording run: this process (writers and sequencer alike) and every backend of
 * the scratch database, read from /proc (the database is on this machine). A backend that connects
 * during the run counts from its start; one that closes during it is missed, so the pool's idle
 * connections are kept (the runs are seconds apart, well within its idle timeout).
 */
class CpuOfRun {
  private node = process.cpuUsage();
  private backends = new Map<number, number>();

  constructor(private readonly sequelize: Sequelize) {}

  private async backendPids(): Promise<number[]> {
    const rows = (await this.sequelize.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`, {
      type: "SELECT",
    })) as Array<{ pid: number }>;
    return rows.map((row) => row.pid);
  }

  async start(): Promise<void> {
    this.backends = new Map((await this.backendPids()).map((pid) => [pid, cpuSeconds(pid) ?? 0]));
    this.node = process.cpuUsage();
  }

  /** Milliseconds of CPU since start. */
  async stop(): Promise<number> {
    const node = process.cpuUsage(this.node);
    let backends = 0;
    for (const pid of new Set([...this.backends.keys(), ...(await this.backendPids())])) {
      const now = cpuSeconds(pid);
      if (now !== null) backends += now - (this.backends.get(pid) ?? 0);
    }
    return (node.user + node.system) / 1000 + backends * 1000;
  }
}

async function main(): Promise<void> {
  const name = settings.reuse ?? `fg_bench_audit_${randomBytes(4).toString("hex")}`;
  if (!/^fg_bench_audit_\w+$/.test(name)) throw new Error("BENCH_REUSE must name a database of an earlier run (fg_bench_audit_…)");
  const admin = new pg.Client({ connectionString: settings.adminUrl });
  await admin.connect();
  if (!settings.reuse) await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(settings.adminUrl);
  url.pathname = `/${name}`;
  const config = loadConfig({ DATABASE_URL: url.toString(), LOG_LEVEL: "silent", DATABASE_POOL_MAX: String(settings.writers + 2) });
  const sequelize = createSequelize({ url: url.toString(), poolMax: settings.writers + 2 });
  const events = new LocalEventBus(createLogger("silent"));
  // Nothing here enqueues: queues are created on first use, so this backend opens no connection.
  const queues = createQueueBackend(config, url.toString());
  try {
    initModels(sequelize);
    await migrateToLatest(sequelize);
    const services = createServices(sequelize, events, { config, queues });
    if (settings.reuse) {
      console.log(`audit benchmark on the kept database ${name}`);
    } else {
      const from = new Date();
      from.setUTCMonth(from.getUTCMonth() - settings.months);
      await services.audit.ensurePartitions(settings.months + 1, from);
      console.log(`audit benchmark on ${name}: ${settings.rows.toLocaleString("en")} events over ${settings.months} months`);
      const loadStarted = Date.now();
      await loadAuditEvents(sequelize, settings);
      console.log(`  load + indexes: ${Math.round((Date.now() - loadStarted) / 1000)} s`);
    }
    const [{ size }] = (await sequelize.query(`SELECT pg_size_pretty(pg_database_size(current_database())) AS size`, {
      type: "SELECT",
    })) as Array<{ size: string }>;
    console.log(`  database size: ${size}`);
    if (settings.parts.has("search")) await queryCases(services);
    if (settings.parts.has("recording")) await recordingCases(sequelize, services);
  } finally {
    await queues.close();
    await sequelize.close();
    await events.close();
    if (settings.keep) console.log(`kept database ${name}`);
    else await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

if (require.main === module)
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
