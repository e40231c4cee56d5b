/**
 * Audit streaming benchmark: `npm run bench:streaming`.
 *
 * On a scratch database, with a worker process (`finance-gateway worker`, as deployed) delivering to
 * five destinations on loopback receivers (3 webhooks, Splunk HEC, Datadog logs) while this process
 * records, it reports in one run:
 *
 *   - recording throughput (audit.record(), one event per transaction, BENCH_WRITERS writers) with the
 *     five destinations active, as a ratio to recording with no destination, alternating rounds, and
 *     the database's committed transactions per recorded event until delivered (load-independent);
 *   - delivery lag (commit → arrival at the receiver) p50/p95 while recording at a sustained
 *     BENCH_RATE events/s;
 *   - per destination (one at a time), deliveries/s draining a backlog of BENCH_BACKLOG events, as a
 *     ratio to a plain loop of HTTP POSTs (one event each, keep-alive) to the same receiver.
 *
 * Settings (environment, all optional): BENCH_DATABASE_URL (admin URL, default
 * postgres://postgres@127.0.0.1:5432/postgres), BENCH_REDIS_URL (`off` for none; default
 * redis://127.0.0.1:6379), BENCH_RECORDS (2000), BENCH_WRITERS (4), BENCH_ROUNDS (2), BENCH_RATE (200),
 * BENCH_SECONDS (5), BENCH_BACKLOG (3000).
 */
import "reflect-metadata";
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import path from "node:path";
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
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
  rate: numberSetting("BENCH_RATE", 200),
  seconds: numberSetting("BENCH_SECONDS", 5),
  backlog: numberSetting("BENCH_BACKLOG", 3000),
};

/** A receiver that answers at once and notes when each event id arrived (whatever the format). */
class CountingReceiver {
  readonly arrivals = new Map<string, number>();
  events = 0;
  private server: http.Server | null = null;

  constructor(private readonly ids: (body: string, headers: http.IncomingHttpHeaders) => string[]) {}

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const now = performance.timeOrigin + performance.now();
        for (const id of this.ids(Buffer.concat(chunks).toString("utf8"), req.headers)) {
          this.events++;
          if (!this.arrivals.has(id)) this.arrivals.set(id, now);
        }
        res.writeHead(req.url?.includes("/api/v2/logs") ? 202 : 200, { "content-type": "application/json" });
        res.end('{"text":"Success","code":0}');
      });
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

const webhookIds = (_body: string, headers: http.IncomingHttpHeaders) => [String(headers["webhook-id"])];
const splunkIds = (body: string) => [...body.matchAll(/"event":\{"id":"([^"]+)"/g)].map((match) => match[1]);
const datadogIds = (body: string, headers: http.IncomingHttpHeaders) => {
  const parsed = JSON.parse(body || "[]") as unknown;
  // The plain POST loop sends one object; the service sends arrays.
  return Array.isArray(parsed) ? parsed.map((entry: { audit?: { id: string } }) => entry.audit?.id ?? "") : webhookIds(body, headers);
};

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const ratio = (value: number) => `${value.toFixed(2)}×`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Records `count` events with `writers` concurrent writers, one event per transaction; returns events/s. */
async function recordBurst(runtime: Runtime, count: number, writers: number, commits?: Map<string, number>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (next < count) {
        next++;
        const event = await runtime.sequelize.transaction((transaction) =>
          runtime.services.audit.record(transaction, {
            type: "auth.login.success",
            user: { id: null, email: `bench${next}@example.test` },
            action: "bench",
          }),
        );
        commits?.set(event.id, performance.timeOrigin + performance.now());
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

/** A plain sequential loop of single-event POSTs with keep-alive to the same receiver; returns requests/s. */
async function plainPostLoop(url: string, count: number, body: string): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const target = new URL(url);
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    await new Promise<void>((resolve, reject) => {
      const request = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "webhook-id": `plain-${i}` },
        },
        (response) => {
          response.resume();
          response.on("end", resolve);
        },
      );
      request.on("error", reject);
      request.end(body);
    });
  }
  agent.destroy();
  return count / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  const database = `fg_bench_streaming_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: settings.adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(settings.adminUrl);
  url.pathname = `/${database}`;
  const receivers = {
    webhook1: new CountingReceiver(webhookIds),
    webhook2: new CountingReceiver(webhookIds),
    webhook3: new CountingReceiver(webhookIds),
    splunk: new CountingReceiver(splunkIds),
    datadog: new CountingReceiver(datadogIds),
  };
  const urls = Object.fromEntries(
    await Promise.all(Object.entries(receivers).map(async ([name, receiver]) => [name, await receiver.start()])),
  );
  const env = {
    DATABASE_URL: url.toString(),
    ...(settings.redisUrl ? { REDIS_URL: settings.redisUrl } : {}),
    REDIS_PREFIX: `fgbench_${randomBytes(3).toString("hex")}`,
    LOG_LEVEL: "warn",
    DATABASE_POOL_MAX: "10",
    OUTBOUND_ALLOWLIST: "127.0.0.1/32",
    STREAM_POLL_MS: "200",
  };
  const runtime = await startRuntime(loadConfig(env), { api: false, workers: false });
  const worker = spawn(process.execPath, [path.join(__dirname, "..", "..", "bin", "finance-gateway.js"), "worker"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    const user = await runtime.services.users.create({ email: "bench-admin@example.test", role: "admin" });
    const actor = {
      userId: user.id,
      familyId: user.familyId,
      email: "bench-admin@example.test",
      role: "admin",
      scope: "read_write",
      // As a request would resolve it: audit events name its credential (an API key here).
      credential: { kind: "api_key", id: randomUUID() },
    } as unknown as Actor;
    const destinations = runtime.services.streamDestinations;

    // 1. Recording throughput, no destination vs five, alternating rounds (best round of each counts).
    // Beside the rates, which a busy machine blurs, the database's committed transactions per recorded
    // event (a count, whatever the load): the worker's share of the database's work shows there.
    const transactions = async () => {
      await sleep(1500); // backends report their counters at most once a second
      const { rows } = await admin.query<{ n: string }>("SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1", [database]);
      return Number(rows[0].n);
    };
    const stream = new pg.Client({ connectionString: url.toString() });
    await stream.connect();
    const caughtUp = async () => {
      const query = "SELECT count(*)::int AS behind FROM audit_stream_consumers WHERE position < (SELECT seq FROM audit_chain_head)";
      while ((await stream.query<{ behind: number }>(query)).rows[0].behind > 0) await sleep(100);
    };
    const txPerEvent = { without: [] as number[], withFive: [] as number[] };
    const without: number[] = [];
    const withFive: number[] = [];
    const ids: Record<string, string> = {};
    for (let round = 0; round < settings.rounds; round++) {
      for (const id of Object.values(ids)) await destinations.delete(actor, id);
      for (const key of Object.keys(ids)) delete ids[key];
      await runtime.services.audit.chainCommitted();
      let before = await transactions();
      without.push(await recordBurst(runtime, settings.records, settings.writers));
      await runtime.services.audit.chainCommitted();
      txPerEvent.without.push(((await transactions()) - before) / settings.records);
      for (const name of ["webhook1", "webhook2", "webhook3"]) {
        ids[name] = (await destinations.create(actor, { kind: "webhook", name, url: urls[name], eventTypes: ["auth.*"] })).destination.id;
      }
      ids.splunk = (
        await destinations.create(actor, { kind: "splunk", name: "splunk", url: urls.splunk, credentials: { token: "t" } })
      ).destination.id;
      ids.datadog = (
        await destinations.create(actor, { kind: "datadog", name: "datadog", url: urls.datadog, credentials: { apiKey: "k" } })
      ).destination.id;
      await runtime.services.audit.chainCommitted();
      before = await transactions();
      withFive.push(await recordBurst(runtime, settings.records, settings.writers));
      // Let the destinations catch up before the next round.
      await runtime.services.audit.chainCommitted();
      await caughtUp();
      txPerEvent.withFive.push(((await transactions()) - before) / settings.records);
    }
    await stream.end();
    const recordingRatio = Math.max(...withFive) / Math.max(...without);

    // 2. Delivery lag at a sustained rate.
    const commits = new Map<string, number>();
    const interval = 1000 / settings.rate;
    const paced = performance.now();
    for (let i = 0; i < settings.rate * settings.seconds; i++) {
      await recordBurst(runtime, 1, 1, commits);
      const due = paced + (i + 1) * interval;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
    }
    for (const id of Object.values(ids)) while ((await destinations.get(id)).health.lag !== "0") await sleep(50);
    const lags: Record<string, number[]> = {};
    for (const [name, receiver] of Object.entries(receivers)) {
      lags[name] = [...commits].map(([id, committed]) => (receiver.arrivals.get(id) ?? NaN) - committed).filter(Number.isFinite);
    }
    const allLags = Object.values(lags).flat();

    // 3. Draining a backlog, per destination, against a plain POST loop to the same receiver.
    for (const id of Object.values(ids)) await destinations.setPaused(actor, id, true);
    await recordBurst(runtime, settings.backlog, settings.writers);
    await runtime.services.audit.chainCommitted();
    const drain: Record<string, number> = {};
    for (const [name, id] of Object.entries(ids)) {
      const started = performance.now();
      await destinations.setPaused(actor, id, false);
      while ((await destinations.get(id)).health.lag !== "0") await sleep(20);
      drain[name] = settings.backlog / ((performance.now() - started) / 1000);
    }
    const sample = JSON.stringify({
      type: "auth.login.success",
      timestamp: new Date().toISOString(),
      data: { id: "x".repeat(36), eventType: "auth.login.success" },
    });
    const plain: Record<string, number> = {};
    // Warmed up first (JIT, sockets), as the service's own path is by the time it drains: a cold loop
    // would flatter the ratio of whichever receiver is measured first.
    for (const name of Object.keys(ids)) await plainPostLoop(urls[name], 300, sample);
    for (const name of Object.keys(ids)) plain[name] = await plainPostLoop(urls[name], 1000, sample);

    console.log(`\nRecording (${settings.records} events, ${settings.writers} writers, best of ${settings.rounds})`);
    console.log(`  no destination        ${Math.max(...without).toFixed(0)} events/s`);
    console.log(`  5 destinations        ${Math.max(...withFive).toFixed(0)} events/s   ${ratio(recordingRatio)} no destination`);
    const fewest = (values: number[]) => Math.min(...values).toFixed(2);
    console.log(
      `  database transactions per recorded event, until delivered: no destination ${fewest(txPerEvent.without)}, 5 destinations ${fewest(txPerEvent.withFive)}`,
    );
    console.log(`\nDelivery lag at ${settings.rate} events/s for ${settings.seconds} s (commit → receiver)`);
    for (const [name, values] of Object.entries(lags))
      console.log(`  ${name.padEnd(10)} p50 ${percentile(values, 50).toFixed(0)} ms   p95 ${percentile(values, 95).toFixed(0)} ms`);
    console.log(`  all        p50 ${percentile(allLags, 50).toFixed(0)} ms   p95 ${percentile(allLags, 95).toFixed(0)} ms`);
    console.log(`\nDraining a backlog of ${settings.backlog} events (one destination at a time) vs a plain POST loop to the same receiver`);
    for (const name of Object.keys(ids))
      console.log(
        `  ${name.padEnd(10)} ${drain[name].toFixed(0)} deliveries/s   plain ${plain[name].toFixed(0)} POST/s   ${ratio(drain[name] / plain[name])}`,
      );
    const batched = ["splunk", "datadog"].map((name) => drain[name] / plain[name]);
    const targets = [
      { target: "recording with 5 destinations >= 0.8x no destination", met: recordingRatio >= 0.8 },
      { target: "batched platforms >= 0.5x a plain POST loop", met: batched.every((value) => value >= 0.5) },
    ];
    console.log("\nTargets");
    for (const { target, met } of targets) console.log(`  ${met ? "MET    " : "NOT MET"} ${target}`);
    console.log(
      JSON.stringify({
        recordingRatio,
        transactionsPerEvent: { without: Math.min(...txPerEvent.without), withFive: Math.min(...txPerEvent.withFive) },
        lagP50Ms: percentile(allLags, 50),
        lagP95Ms: percentile(allLags, 95),
        drainRatios: Object.fromEntries(Object.keys(ids).map((name) => [name, drain[name] / plain[name]])),
      }),
    );
  } finally {
    worker.kill("SIGTERM");
    await new Promise((resolve) => worker.once("exit", resolve));
    await runtime.stop();
    for (const receiver of Object.values(receivers)) await receiver.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
