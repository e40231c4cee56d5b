/**
 * Alerts benchmark: `npm run bench:alerts`.
 *
 * On a scratch database, with a worker process (`finance-gateway worker`, as deployed) evaluating the
 * rules on the committed audit stream while this process records, it reports in one run:
 *
 *   - recording throughput (audit.record(), one failed login per transaction, BENCH_WRITERS writers)
 *     with 5 active rules (the three presets and two more on the same events), as a ratio to recording
 *     with no rule, alternating rounds (target ≥ 0.9×);
 *   - time from commit to the channel send (arrival at a signed-webhook receiver) p50/p95, for a rule
 *     that fires on every event, recording at BENCH_RATE events/s for BENCH_SECONDS (target p95 < 2 s).
 *
 * Settings (environment, all optional): BENCH_DATABASE_URL (admin URL, default
 * postgres://postgres@127.0.0.1:5432/postgres), BENCH_REDIS_URL (`off` for none; default
 * redis://127.0.0.1:6379), BENCH_RECORDS (2000), BENCH_WRITERS (4), BENCH_ROUNDS (2), BENCH_RATE (20),
 * BENCH_SECONDS (5).
 */
import "reflect-metadata";
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import pg from "pg";
import { EVALUATOR_CONSUMER } from "../src/audit/alerts/alert.evaluator";
import { loadConfig } from "../src/platform/config/config";
import type { Actor } from "../src/platform/security/actor";
import { startRuntime, type Runtime } from "../src/app/runtime";

function numberSetting(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw ? Number(raw) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}

const settings = {
  adminUrl: process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  redisUrl: process.env.BENCH_REDIS_URL === "off" ? undefined : process.env.BENCH_REDIS_URL || "redis://127.0.0.1:6379",
  records: numberSetting("BENCH_RECORDS", 2000),
  writers: numberSetting("BENCH_WRITERS", 4),
  rounds: numberSetting("BENCH_ROUNDS", 2),
  rate: numberSetting("BENCH_RATE", 20),
  seconds: numberSetting("BENCH_SECONDS", 5),
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Notes when the alert for each triggering event id arrived. */
class AlertReceiver {
  readonly arrivals = new Map<string, number>();
  private server: http.Server | null = null;

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const now = performance.timeOrigin + performance.now();
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data: { events: Array<{ id: string }> } };
        for (const event of body.data.events) if (!this.arrivals.has(event.id)) this.arrivals.set(event.id, now);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/alerts`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

let sequence = 0;

/** Records `count` failed logins from a few IPs with `writers` concurrent writers; returns events/s. */
async function recordBurst(runtime: Runtime, count: number, writers: number, commits?: Map<string, number>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (next < count) {
        next++;
        const n = ++sequence;
        const event = await runtime.sequelize.transaction((transaction) =>
          runtime.services.audit.record(transaction, {
            type: "auth.login.failed",
            user: { id: null, email: `bench${n}@example.test` },
            action: "bench",
            error: "bad password",
          }),
        );
        commits?.set(event.id, performance.timeOrigin + performance.now());
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

async function caughtUp(runtime: Runtime): Promise<void> {
  await runtime.services.audit.chainCommitted();
  const head = BigInt(await runtime.services.audit.chainHeadSeq());
  while (BigInt((await runtime.services.repositories.streamConsumers.get(EVALUATOR_CONSUMER))!.position) < head) await sleep(50);
}

async function main(): Promise<void> {
  const database = `fg_bench_alerts_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: settings.adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(settings.adminUrl);
  url.pathname = `/${database}`;
  const receiver = new AlertReceiver();
  const receiverUrl = await receiver.start();
  const env = {
    DATABASE_URL: url.toString(),
    ...(settings.redisUrl ? { REDIS_URL: settings.redisUrl } : {}),
    REDIS_PREFIX: `fgbench_${randomBytes(3).toString("hex")}`,
    LOG_LEVEL: "warn",
    DATABASE_POOL_MAX: "10",
    OUTBOUND_ALLOWLIST: "127.0.0.1/32",
    STREAM_POLL_MS: "200",
    ALERT_POLL_MS: "200",
  };
  const runtime = await startRuntime(loadConfig(env), { api: false, workers: false });
  const worker = spawn(process.execPath, [path.join(__dirname, "..", "..", "bin", "finance-gateway.js"), "worker"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    const user = await runtime.services.users.create({ email: "bench-admin@example.test", role: "admin" });
    // The caller as a request would resolve it: audit events name its credential (an API key here).
    const actor = {
      userId: user.id,
      familyId: user.familyId,
      email: user.email,
      role: "admin",
      scope: "read_write",
      credential: { kind: "api_key", id: randomUUID() },
    } as unknown as Actor;
    const alerts = runtime.services.alerts;

    // 1. Recording throughput, no rule vs five, alternating rounds (best round of each counts).
    const without: number[] = [];
    const withFive: number[] = [];
    for (let round = 0; round < settings.rounds; round++) {
      for (const rule of await alerts.rules()) await alerts.deleteRule(actor, rule.id);
      await caughtUp(runtime);
      without.push(await recordBurst(runtime, settings.records, settings.writers));
      await caughtUp(runtime);
      for (const preset of ["brute_force", "provider_change", "new_country"]) await alerts.enablePreset(actor, preset, []);
      await alerts.createRule(actor, {
        name: "Failures per user",
        eventTypes: ["auth.*"],
        threshold: 50,
        windowSeconds: 600,
        groupBy: "user",
      });
      await alerts.createRule(actor, {
        name: "Warnings overall",
        eventTypes: ["auth.login.failed"],
        minSeverity: "warning",
        threshold: 10_000,
      });
      withFive.push(await recordBurst(runtime, settings.records, settings.writers));
      await caughtUp(runtime);
    }
    const recordingRatio = Math.max(...withFive) / Math.max(...without);

    // 2. Commit → channel send: a rule that fires on every event (one group per event), to a signed webhook.
    for (const rule of await alerts.rules()) await alerts.deleteRule(actor, rule.id);
    const channel = await runtime.services.alertChannels.createChannel(actor, {
      kind: "webhook",
      name: "bench",
      settings: { url: receiverUrl },
    });
    await alerts.createRule(actor, {
      name: "Every failed login",
      eventTypes: ["auth.login.failed"],
      threshold: 1,
      windowSeconds: 600,
      groupBy: "user",
      channelIds: [channel.channel.id],
    });
    await caughtUp(runtime);
    const commits = new Map<string, number>();
    const interval = 1000 / settings.rate;
    const paced = performance.now();
    for (let i = 0; i < settings.rate * settings.seconds; i++) {
      await recordBurst(runtime, 1, 1, commits);
      const wait = paced + (i + 1) * interval - performance.now();
      if (wait > 0) await sleep(wait);
    }
    const deadline = Date.now() + 60_000;
    while (receiver.arrivals.size < commits.size && Date.now() < deadline) await sleep(50);
    const lags = [...commits].map(([id, committed]) => (receiver.arrivals.get(id) ?? NaN) - committed).filter(Number.isFinite);

    console.log(`\nRecording (${settings.records} failed logins, ${settings.writers} writers, best of ${settings.rounds})`);
    console.log(`  no rule      ${Math.max(...without).toFixed(0)} events/s`);
    console.log(`  5 rules      ${Math.max(...withFive).toFixed(0)} events/s   ${recordingRatio.toFixed(2)}× no rule`);
    console.log(`\nCommit → channel send at ${settings.rate} firings/s for ${settings.seconds} s (signed webhook on loopback)`);
    console.log(
      `  delivered ${lags.length}/${commits.size}   p50 ${percentile(lags, 50).toFixed(0)} ms   p95 ${percentile(lags, 95).toFixed(0)} ms`,
    );
    const targets = [
      { target: "recording with 5 rules >= 0.9x no rule", met: recordingRatio >= 0.9 },
      { target: "commit -> channel send p95 < 2 s", met: lags.length === commits.size && percentile(lags, 95) < 2000 },
    ];
    console.log("\nTargets");
    for (const { target, met } of targets) console.log(`  ${met ? "MET    " : "NOT MET"} ${target}`);
    console.log(
      JSON.stringify({ recordingRatio, sendP50Ms: percentile(lags, 50), sendP95Ms: percentile(lags, 95), delivered: lags.length }),
    );
  } finally {
    worker.kill("SIGTERM");
    await new Promise((resolve) => worker.once("exit", resolve));
    await runtime.stop();
    await receiver.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
