/**
 * REST adapter benchmark: `npm run bench:rest`.
 *
 * In one run, on one fresh database holding the demo family, it measures three ways of serving the
 * same two responses:
 *
 *   rest      GET /api/v1/transactions/{id} and GET /api/v1/transactions?per_page=100, i.e. the REST
 *             adapter (pre-parsed GraphQL operation, its root resolver called by the route's plan,
 *             read-ahead of relations, the answer shaped from the operation's selection);
 *   apollo    POST /graphql with the very document the adapter executes (same selection, aliases);
 *   baseline  a hand-written express + pg endpoint, below, that answers the same JSON from one SQL
 *             statement with joins after the same one-statement API key lookup.
 *
 * The machine is shared and noisy, so nothing is judged in absolute terms: every figure is compared
 * with the baseline measured in the same run, cases alternate across rounds and the best round counts.
 *
 * Settings (environment, all optional):
 *   BENCH_DATABASE_URL  Postgres server to create the scratch database on, as an admin connection URL
 *                       (default postgres://postgres@127.0.0.1:5432/postgres). The database
 *                       fg_bench_<random> is created there and dropped at the end.
 *   BENCH_REDIS_URL     Redis for the service (default redis://127.0.0.1:6379; used only if it answers;
 *                       "off" to run without). Keys live under a random prefix, deleted at the end.
 *   BENCH_CONNECTIONS   autocannon connections (default 10)
 *   BENCH_DURATION      seconds measured per case (default 8)
 *   BENCH_WARMUP        seconds of unmeasured load before each case (default 2)
 *   BENCH_ROUNDS        rounds over all cases, in alternating order (default 3)
 *   BENCH_POOL_MAX      database pool size of the service and of the baseline alike (default 10)
 *   BENCH_GRAPHQL_MAX_COST  the service's GRAPHQL_MAX_COST (default: the service's default); 0 turns the
 *                       GraphQL operation limits off, to measure what they cost
 *   BENCH_PROFILE_SECONDS  seconds of load per case profiled after the measured rounds, for the per-layer
 *                       CPU table (default 4; 0 skips it). Never during the measured rounds: the profiler
 *                       slows the process it samples.
 *   BENCH_PROFILE_DIR   directory to keep each case's .cpuprofile in (open it in Chrome DevTools); unset: not kept
 */
import "reflect-metadata";
import assert from "node:assert/strict";
import { fork, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import express, { type NextFunction, type Request, type Response } from "express";
import { print } from "graphql";
import IORedis from "ioredis";
import pg from "pg";
import { prepareOperations } from "../rest-adapter/operations";
import { checkOperation, limitsFor, measureOperation } from "../src/transports/graphql/operation-limits";
import { seedDemo } from "../src/app/cli/demo";
import { loadConfig } from "../src/platform/config/config";
import { absolute, formatMoney, toMinorUnits } from "../src/finance/money/money";
import { signKind } from "../src/finance/transactions/transaction.rules";
import { startRuntime, type Runtime } from "../src/app/runtime";
import type { LoadJob, LoadReply, LoadResult } from "./load-generator";
import { LAYERS, profileWhile, scaledTo, summarise, type LayerTable } from "./cpu-layers";

// ---------------------------------------------------------------------------------------------------
// Settings

function numberSetting(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`${name} must be a number in [${min}, ${max}], got ${raw}`);
  return value;
}

const settings = {
  adminUrl: process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  redisUrl: process.env.BENCH_REDIS_URL || "redis://127.0.0.1:6379",
  connections: Math.round(numberSetting("BENCH_CONNECTIONS", 10, 1, 256)),
  duration: numberSetting("BENCH_DURATION", 8, 1, 60),
  warmup: numberSetting("BENCH_WARMUP", 2, 0, 30),
  rounds: Math.round(numberSetting("BENCH_ROUNDS", 3, 1, 10)),
  poolMax: Math.round(numberSetting("BENCH_POOL_MAX", 10, 2, 200)),
  /** GRAPHQL_MAX_COST of the service; 0 measures /graphql without the operation limits. */
  graphqlMaxCost: process.env.BENCH_GRAPHQL_MAX_COST || undefined,
  profileSeconds: numberSetting("BENCH_PROFILE_SECONDS", 4, 0, 60),
  profileDir: process.env.BENCH_PROFILE_DIR || undefined,
};

/** The product's targets: REST at least this share of the baseline's requests/s… */
const TARGET_RATIO = 0.95;
/** …and at most this multiple of its server CPU per request. */
const TARGET_CPU_RATIO = 1.2;
/** Profiler sampling interval: fine enough for layers of a few µs per request, coarse enough to cost little. */
const PROFILE_SAMPLING_US = 200;

// ---------------------------------------------------------------------------------------------------
// Scratch database and Redis

type ScratchDatabase = { name: string; url: string; drop(): Promise<void> };

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: settings.adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function createScratchDatabase(): Promise<ScratchDatabase> {
  const name = `fg_bench_${process.pid}_${randomBytes(4).toString("hex")}`;
  await withAdmin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(settings.adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () => withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** The Redis URL if a server answers there within a second, else null. */
async function reachableRedis(): Promise<string | null> {
  if (settings.redisUrl === "off") return null;
  const redis = new IORedis(settings.redisUrl, {
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on("error", () => undefined);
  try {
    await redis.connect();
    await redis.ping();
    return settings.redisUrl;
  } catch {
    return null;
  } finally {
    redis.disconnect();
  }
}

async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new IORedis(url, { maxRetriesPerRequest: 1 });
  redis.on("error", () => undefined);
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------------
// The baseline: what a careful hand-written endpoint would do. One statement authenticates the key by
// its SHA-256 hash (as ApiKeyService.authenticate does, including the at-most-once-a-minute
// last_used_at refresh off the critical path); one statement with joins reads the transaction(s) with
// account, category, merchant, tags and transfer. Money is formatted with the project's own helpers,
// so both sides do the same formatting work and the comparison is about everything around it.

const KEY_PREFIX = "fgk_";
const UNAUTHORIZED = { error: "unauthorized", message: "Access token or API key is invalid, expired, or missing" };
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const AUTH_SQL = `
  SELECT k.id AS key_id, k.last_used_at, u.family_id, u.status
    FROM api_keys k JOIN users u ON u.id = k.user_id
   WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`;

const TRANSACTION_COLUMNS = `
  t.id, to_char(t.date, 'YYYY-MM-DD') AS date, t.amount, t.currency, t.name, t.notes, t.pending, t.created_at, t.updated_at,
  a.id AS account_id, a.name AS account_name, a.account_type AS account_type,
  c.id AS category_id, c.name AS category_name, c.classification AS category_classification, c.color AS category_color, c.icon AS category_icon,
  m.id AS merchant_id, m.name AS merchant_name,
  coalesce(tout.id, tin.id) AS transfer_id, oa.id AS other_account_id, oa.name AS other_account_name, oa.account_type AS other_account_type,
  tg.tags`;

// Every join is scoped to the transaction's family, as the service's loaders are to the actor's.
const TRANSACTION_JOINS = `
  JOIN accounts a ON a.family_id = t.family_id AND a.id = t.account_id
  LEFT JOIN categories c ON c.family_id = t.family_id AND c.id = t.category_id
  LEFT JOIN merchants m ON m.family_id = t.family_id AND m.id = t.merchant_id
  LEFT JOIN transfers tout ON tout.outflow_transaction_id = t.id
  LEFT JOIN transfers tin ON tin.inflow_transaction_id = t.id
  LEFT JOIN transactions other ON other.id = coalesce(tout.inflow_transaction_id, tin.outflow_transaction_id)
  LEFT JOIN accounts oa ON oa.family_id = t.family_id AND oa.id = other.account_id
  CROSS JOIN LATERAL (
    SELECT coalesce(json_agg(json_build_object('id', g.id, 'name', g.name, 'color', g.color) ORDER BY g.name), '[]'::json) AS tags
      FROM transaction_tags tt JOIN tags g ON g.id = tt.tag_id
     WHERE tt.transaction_id = t.id AND g.family_id = t.family_id
  ) tg`;

const BY_ID_SQL = `SELECT ${TRANSACTION_COLUMNS} FROM transactions t ${TRANSACTION_JOINS} WHERE t.family_id = $1 AND t.id = $2`;

// Page first (the window count needs every matching row, the joins only the page's), then join.
const PAGE_SQL = `
  WITH page AS (
    SELECT t.*, count(*) OVER () AS total
      FROM transactions t
     WHERE t.family_id = $1
     ORDER BY t.date DESC, t.created_at DESC, t.id DESC
     LIMIT $2 OFFSET $3
  )
  SELECT ${TRANSACTION_COLUMNS}, t.total
    FROM page t ${TRANSACTION_JOINS}
   ORDER BY t.date DESC, t.created_at DESC, t.id DESC`;

const COUNT_SQL = `SELECT count(*) AS total FROM transactions WHERE family_id = $1`;

type TransactionSqlRow = {
  id: string;
  date: string;
  amount: string;
  currency: string;
  name: string;
  notes: string | null;
  pending: boolean;
  created_at: Date;
  updated_at: Date;
  account_id: string;
  account_name: string;
  account_type: string;
  category_id: string | null;
  category_name: string;
  category_classification: string;
  category_color: string;
  category_icon: string;
  merchant_id: string | null;
  merchant_name: string;
  transfer_id: string | null;
  other_account_id: string;
  other_account_name: string;
  other_account_type: string;
  tags: Array<{ id: string; name: string; color: string }>;
};

/** Keys in the order of fragments.graphql, so the serialized bytes match too. */
function transactionJson(row: TransactionSqlRow) {
  const income = signKind(row.amount) === "income";
  const cents = toMinorUnits(row.amount, row.currency);
  return {
    id: row.id,
    date: row.date,
    amount: formatMoney(row.amount, row.currency),
    amount_cents: cents,
    signed_amount_cents: income ? cents : -cents,
    currency: row.currency,
    name: row.name,
    notes: row.notes,
    pending: row.pending,
    classification: income ? "income" : "expense",
    account: { id: row.account_id, name: row.account_name, account_type: row.account_type },
    category:
      row.category_id === null
        ? null
        : {
            id: row.category_id,
            name: row.category_name,
            classification: row.category_classification,
            color: row.category_color,
            icon: row.category_icon,
          },
    merchant: row.merchant_id === null ? null : { id: row.merchant_id, name: row.merchant_name },
    tags: row.tags,
    transfer:
      row.transfer_id === null
        ? null
        : {
            id: row.transfer_id,
            amount: formatMoney(absolute(row.amount), row.currency),
            currency: row.currency,
            other_account: { id: row.other_account_id, name: row.other_account_name, account_type: row.other_account_type },
          },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Query-string integers as the adapter reads them: digits only, else absent. */
function intParam(value: unknown): number | undefined {
  const text = Array.isArray(value) ? value[value.length - 1] : value;
  return typeof text === "string" && /^-?\d+$/.test(text.trim()) ? Number.parseInt(text, 10) : undefined;
}

type Server = { url: string; close(): Promise<void> };

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function startBaseline(databaseUrl: string, poolMax: number): Promise<Server> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolMax, idleTimeoutMillis: 10_000 });
  pool.on("error", () => undefined);
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");

  app.use("/api/v1", async (req: Request, res: Response, next: NextFunction) => {
    const key = req.get("x-api-key");
    if (!key || !key.startsWith(KEY_PREFIX)) return res.status(401).json(UNAUTHORIZED);
    const { rows } = await pool.query(AUTH_SQL, [createHash("sha256").update(key).digest()]);
    const owner = rows[0] as { key_id: string; last_used_at: Date | null; family_id: string; status: string } | undefined;
    if (!owner) return res.status(401).json(UNAUTHORIZED);
    if (owner.status !== "active") return res.status(401).json({ error: "unauthorized", message: "Your account has been deactivated" });
    if (!owner.last_used_at || Date.now() - owner.last_used_at.getTime() > 60_000) {
      pool.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1", [owner.key_id]).catch(() => undefined);
    }
    res.locals.familyId = owner.family_id;
    next();
  });

  app.get("/api/v1/transactions/:id", async (req: Request, res: Response) => {
    const id = req.params.id as string;
    const { rows } = UUID_PATTERN.test(id) ? await pool.query<TransactionSqlRow>(BY_ID_SQL, [res.locals.familyId, id]) : { rows: [] };
    if (rows.length === 0) return res.status(404).json({ error: "not_found", message: "Transaction not found" });
    res.json(transactionJson(rows[0]));
  });

  app.get("/api/v1/transactions", async (req: Request, res: Response) => {
    const query = req.query as Record<string, unknown>;
    const requestedPage = intParam(query.page);
    const requestedPerPage = intParam(query.per_page);
    const page = requestedPage !== undefined && requestedPage >= 1 ? requestedPage : 1;
    const perPage = Math.min(requestedPerPage !== undefined && requestedPerPage >= 1 ? requestedPerPage : 25, 100);
    const offset = (page - 1) * perPage;
    const { rows } = await pool.query<TransactionSqlRow & { total: string }>(PAGE_SQL, [res.locals.familyId, perPage, offset]);
    const total =
      rows.length > 0
        ? Number(rows[0].total)
        : offset === 0
          ? 0
          : Number((await pool.query<{ total: string }>(COUNT_SQL, [res.locals.familyId])).rows[0].total);
    res.json({
      transactions: rows.map(transactionJson),
      pagination: { page, per_page: perPage, total_count: total, total_pages: Math.ceil(total / perPage) },
    });
  });

  app.use((_req: Request, res: Response) => {
    res.status(404).json({ error: "not_found", message: "baseline serves only the two benchmarked routes" });
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    console.error("baseline error:", error);
    if (!res.headersSent) res.status(500).json({ error: "internal_server_error", message: "An unexpected error occurred" });
  });

  const server = http.createServer(app);
  const url = await listen(server);
  return {
    url,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Load generator (a forked process, see load-generator.ts)

class LoadGenerator {
  private readonly child: ChildProcess;
  private readonly pending = new Map<
    number,
    { resolve: (result: LoadResult) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }
  >();
  private nextId = 1;

  constructor() {
    this.child = fork(path.join(__dirname, "load-generator.js"), [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    this.child.on("message", (reply: LoadReply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      clearTimeout(waiter.timer);
      if (reply.ok) waiter.resolve(reply.result);
      else waiter.reject(new Error(`load generator: ${reply.error}`));
    });
    this.child.on("exit", (code, signal) => {
      for (const [id, waiter] of this.pending) {
        this.pending.delete(id);
        clearTimeout(waiter.timer);
        waiter.reject(new Error(`load generator exited (code ${code}, signal ${signal})`));
      }
    });
  }

  run(job: Omit<LoadJob, "id">): Promise<LoadResult> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // Bounded: a run that does not report within its duration plus 30 s is a failure.
      const timer = setTimeout(
        () => {
          this.pending.delete(id);
          reject(new Error(`load generator did not finish a ${job.duration}s run in time`));
        },
        (job.duration + 30) * 1000,
      );
      this.pending.set(id, { resolve, reject, timer });
      this.child.send({ ...job, id } satisfies LoadJob);
    });
  }

  stop(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill();
  }
}

// ---------------------------------------------------------------------------------------------------
// CPU accounting. Requests per second on a shared two-core machine move with everything else running;
// CPU time spent per request moves much less, so it is reported next to the rates: the bench process's
// own CPU (the servers under test; the load generator is another process) and, when Postgres runs on
// this machine, the CPU of the scratch database's backends read from /proc.

/** CPU milliseconds of one process from /proc/<pid>/stat (utime + stime, in USER_HZ ticks of 10 ms). */
function processCpuMs(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

class DatabaseCpu {
  private constructor(
    private readonly client: pg.Client,
    private readonly database: string,
  ) {}

  /** Null when the backends' CPU cannot be read (Postgres elsewhere, or no /proc). */
  static async open(url: string, database: string): Promise<DatabaseCpu | null> {
    const host = new URL(url).hostname;
    if (!["127.0.0.1", "localhost", "::1", "[::1]", ""].includes(host) || !fs.existsSync("/proc/self/stat")) return null;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const probe = new DatabaseCpu(client, database);
    const sample = await probe.sample();
    if (sample.size === 0) {
      await client.end();
      return null;
    }
    return probe;
  }

  /** CPU ms per backend of the database, this monitoring connection excluded. */
  async sample(): Promise<Map<number, number>> {
    const { rows } = await this.client.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
      [this.database],
    );
    const cpu = new Map<number, number>();
    for (const { pid } of rows) {
      const ms = processCpuMs(pid);
      if (ms !== null) cpu.set(pid, ms);
    }
    return cpu;
  }

  /** Backends that exit in between are missed; the pools keep theirs for the length of a case. */
  static delta(before: Map<number, number>, after: Map<number, number>): number {
    let total = 0;
    for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
    return total;
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

// ---------------------------------------------------------------------------------------------------
// Cases

type PathName = "rest" | "apollo" | "baseline";
type EndpointName = "get" | "list";

const PATH_LABELS: Record<PathName, string> = { rest: "REST adapter", apollo: "Apollo /graphql", baseline: "baseline (express+pg)" };
const ENDPOINT_LABELS: Record<EndpointName, string> = { get: "GET /transactions/{id}", list: "GET /transactions?per_page=100" };

type Request_ = { url: string; method: "GET" | "POST"; headers: Record<string, string>; body?: string };
type Case = { endpoint: EndpointName; path: PathName; request: Request_ };

type Fetched = { status: number; contentType: string | null; text: string; json: unknown };

async function send(request: Request_): Promise<Fetched> {
  const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, contentType: response.headers.get("content-type"), text, json };
}

function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return `at byte ${i}:\n    adapter : …${a.slice(Math.max(0, i - 80), i + 80)}…\n    baseline: …${b.slice(Math.max(0, i - 80), i + 80)}…`;
}

// ---------------------------------------------------------------------------------------------------
// Report

type Run = LoadResult & { serverCpuMsPerRequest: number; databaseCpuMsPerRequest: number | null };
type Measured = { runs: Run[]; best: Run };

function fmt(value: number, digits = 0): string {
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

/** The per-layer CPU table: µs per request, a column per case, REST's difference from the baseline last. */
function printLayerTable(layers: Record<string, LayerTable>, seconds: number): void {
  const columns = (["get", "list"] as EndpointName[]).flatMap((endpoint) =>
    (["rest", "apollo", "baseline"] as PathName[]).map((pathName) => ({ endpoint, pathName, key: `${endpoint}:${pathName}` })),
  );
  console.log(
    `\nServer CPU per request by layer (µs; each case's V8 CPU profile, ${seconds}s under load, self time by source file, as shares of the case's server CPU/req above)\n`,
  );
  const head =
    pad("layer", 36) +
    columns.map((c) => pad(`${c.endpoint} ${c.pathName === "baseline" ? "base" : c.pathName}`, 11, true)).join("") +
    pad("get Δ", 9, true) +
    pad("list Δ", 9, true);
  console.log(head);
  console.log("-".repeat(head.length));
  const row = (label: string, value: (table: LayerTable) => number) => {
    const cells = columns.map((c) => (layers[c.key] ? value(layers[c.key]) : NaN));
    const delta = (endpoint: EndpointName) =>
      layers[`${endpoint}:rest`] && layers[`${endpoint}:baseline`]
        ? value(layers[`${endpoint}:rest`]) - value(layers[`${endpoint}:baseline`])
        : NaN;
    console.log(
      pad(label, 36) +
        cells.map((v) => pad(Number.isNaN(v) ? "n/a" : fmt(v), 11, true)).join("") +
        pad(fmt(delta("get")), 9, true) +
        pad(fmt(delta("list")), 9, true),
    );
  };
  for (const layer of LAYERS) row(layer, (table) => table.perRequestUs[layer]);
  console.log("-".repeat(head.length));
  row("total", (table) => table.totalUs);
  for (const c of columns) {
    const top = layers[c.key]?.otherTop.filter((entry) => entry.us >= 1);
    if (top?.length) console.log(`  "other" in ${c.endpoint} ${c.pathName}: ${top.map((e) => `${e.where} ${fmt(e.us)} µs`).join(", ")}`);
  }
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const cleanups: Array<[string, () => Promise<unknown> | unknown]> = [];
  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    for (const [what, step] of cleanups.reverse()) {
      try {
        await step();
      } catch (error) {
        console.error(`cleanup: ${what} failed: ${(error as Error).message}`);
      }
    }
  };
  const abort = (why: string, code: number) => {
    console.error(`\n${why}: cleaning up`);
    void cleanup().finally(() => process.exit(code));
  };
  process.once("SIGINT", () => abort("interrupted", 130));
  process.once("SIGTERM", () => abort("terminated", 143));
  const caseSeconds = settings.warmup + settings.duration + 2;
  const budgetSeconds = 2 * (settings.rounds * 6 * caseSeconds + 6 * (settings.warmup + settings.profileSeconds + 1)) + 300;
  const watchdog = setTimeout(() => abort(`bench exceeded its ${budgetSeconds}s budget`, 1), budgetSeconds * 1000);
  watchdog.unref();

  try {
    // 1. Database, service, demo data.
    const database = await createScratchDatabase();
    cleanups.push([`drop database ${database.name}`, () => database.drop()]);
    const redisUrl = await reachableRedis();
    const redisPrefix = `fgbench_${randomBytes(4).toString("hex")}`;
    if (redisUrl) cleanups.push(["delete Redis keys", () => deleteRedisKeys(redisUrl, redisPrefix)]);

    const config = loadConfig({
      DATABASE_URL: database.url,
      DATABASE_POOL_MAX: String(settings.poolMax),
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "silent",
      RATE_LIMIT_REQUESTS: "0",
      GRAPHQL_LANDING_PAGE: "false",
      ...(settings.graphqlMaxCost === undefined ? {} : { GRAPHQL_MAX_COST: settings.graphqlMaxCost }),
      ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_PREFIX: redisPrefix } : {}),
    });
    const runtime: Runtime = await startRuntime(config, { api: true, workers: false });
    cleanups.push(["stop runtime", () => runtime.stop()]);
    const demo = await seedDemo(runtime.sequelize, runtime.services);
    // Fresh statistics and visibility map, so autovacuum does not change plans between rounds.
    await runtime.sequelize.query("VACUUM ANALYZE");

    const baseline = await startBaseline(database.url, settings.poolMax);
    cleanups.push(["stop baseline", () => baseline.close()]);
    for (const url of [runtime.url!, baseline.url]) assert.equal(new URL(url).hostname, "127.0.0.1", `${url} is not on 127.0.0.1`);

    console.log(
      `REST adapter benchmark — node ${process.version}, NODE_ENV ${process.env.NODE_ENV ?? "unset"}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(2)}`,
    );
    console.log(
      `database ${database.name} (${demo.transactions} demo transactions), Redis ${redisUrl ? "on" : "off (not reachable)"}, rate limit off, ` +
        `pool ${settings.poolMax}; ${settings.connections} connections, ${settings.warmup}s warm-up + ${settings.duration}s per case, ${settings.rounds} rounds`,
    );
    console.log(`service ${runtime.url}, baseline ${baseline.url}\n`);

    // 2. Requests. A representative transaction for the measured GET: category, merchant and a tag.
    const probe = new pg.Client({ connectionString: database.url });
    await probe.connect();
    const pick = async (where: string): Promise<string> => {
      const { rows } = await probe.query<{ id: string }>(
        `SELECT t.id FROM transactions t WHERE t.family_id = $1 AND ${where} ORDER BY t.date DESC, t.created_at DESC, t.id DESC LIMIT 1`,
        [demo.family_id],
      );
      assert.ok(rows[0], `the demo data has no transaction where ${where}`);
      return rows[0].id;
    };
    const measuredId = await pick(
      "t.category_id IS NOT NULL AND t.merchant_id IS NOT NULL AND EXISTS (SELECT 1 FROM transaction_tags tt WHERE tt.transaction_id = t.id)",
    );
    const verifyIds = [
      measuredId,
      await pick("EXISTS (SELECT 1 FROM transfers x WHERE x.outflow_transaction_id = t.id)"),
      await pick("EXISTS (SELECT 1 FROM transfers x WHERE x.inflow_transaction_id = t.id)"),
      await pick("t.notes IS NOT NULL"),
      await pick("t.amount < 0 AND t.merchant_id IS NOT NULL"),
      await pick("t.category_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM transaction_tags tt WHERE tt.transaction_id = t.id)"),
    ];
    await probe.end();

    const key = demo.api_key;
    const rest = (pathAndQuery: string): Request_ => ({
      url: `${runtime.url}/api/v1${pathAndQuery}`,
      method: "GET",
      headers: { "x-api-key": key },
    });
    const base = (pathAndQuery: string): Request_ => ({
      url: `${baseline.url}/api/v1${pathAndQuery}`,
      method: "GET",
      headers: { "x-api-key": key },
    });
    // The exact documents the adapter executes (operation + the fragments it spreads), printed.
    const operations = prepareOperations(runtime.schema!, ["getTransaction", "listTransactions"]);
    const graphql = (operation: "getTransaction" | "listTransactions", variables: Record<string, unknown>): Request_ => {
      const prepared = operations.get(operation)!;
      return {
        url: `${runtime.url}/graphql`,
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ operationName: prepared.definition.name!.value, query: print(prepared.document), variables }),
      };
    };

    // 3. Verify: the baseline answers byte-for-byte what the adapter answers, and Apollo's data is the same.
    const pairs: Array<{ label: string; path: string; graphqlRequest?: Request_; pickData?: (data: any) => unknown }> = [
      ...verifyIds.map((id) => ({
        label: `GET /transactions/${id}`,
        path: `/transactions/${id}`,
        graphqlRequest: graphql("getTransaction", { id }),
        pickData: (data: any) => data.transaction,
      })),
      {
        label: "GET /transactions?per_page=100",
        path: "/transactions?per_page=100",
        graphqlRequest: graphql("listTransactions", { perPage: 100 }),
        pickData: (data: any) => data.transactions,
      },
      { label: "GET /transactions?per_page=100&page=3", path: "/transactions?per_page=100&page=3" },
      { label: "GET /transactions", path: "/transactions" },
      { label: "GET /transactions?page=999", path: "/transactions?page=999" },
      { label: "GET /transactions/not-a-uuid (404)", path: "/transactions/not-a-uuid" },
      { label: "GET /transactions/{unknown} (404)", path: "/transactions/00000000-0000-4000-8000-000000000000" },
    ];
    for (const pair of pairs) {
      const [adapter, hand] = await Promise.all([send(rest(pair.path)), send(base(pair.path))]);
      assert.equal(
        hand.status,
        adapter.status,
        `${pair.label}: baseline status ${hand.status}, adapter status ${adapter.status}\n${adapter.text.slice(0, 400)}`,
      );
      assert.equal(hand.contentType, adapter.contentType, `${pair.label}: content types differ`);
      assert.deepStrictEqual(hand.json, adapter.json, `${pair.label}: baseline JSON differs from the adapter's`);
      assert.ok(hand.text === adapter.text, `${pair.label}: same JSON but different bytes ${firstDifference(adapter.text, hand.text)}`);
      if (pair.graphqlRequest) {
        const apollo = await send(pair.graphqlRequest);
        const body = apollo.json as { data?: unknown; errors?: unknown } | undefined;
        assert.equal(apollo.status, 200, `${pair.label}: Apollo answered ${apollo.status}: ${apollo.text.slice(0, 400)}`);
        assert.equal(body?.errors, undefined, `${pair.label}: Apollo errors: ${JSON.stringify(body?.errors)}`);
        assert.deepStrictEqual(pair.pickData!(body!.data), adapter.json, `${pair.label}: Apollo data differs from the adapter's JSON`);
      }
    }
    const sample = await send(rest(`/transactions/${measuredId}`));
    const listSample = await send(rest("/transactions?per_page=100"));
    console.log(
      `verified: ${pairs.length} requests answer identical JSON (and identical bytes) from the adapter and the baseline; Apollo's data matches for ${verifyIds.length + 1}.`,
    );
    console.log(`  GET /transactions/{id}: ${sample.text.length} bytes, e.g. ${sample.text.slice(0, 160)}…`);
    console.log(
      `  GET /transactions?per_page=100: ${listSample.text.length} bytes, ${(listSample.json as { transactions: unknown[] }).transactions.length} transactions\n`,
    );

    // 4. Measure.
    const cases: Case[] = [
      { endpoint: "get", path: "rest", request: rest(`/transactions/${measuredId}`) },
      { endpoint: "get", path: "apollo", request: graphql("getTransaction", { id: measuredId }) },
      { endpoint: "get", path: "baseline", request: base(`/transactions/${measuredId}`) },
      { endpoint: "list", path: "rest", request: rest("/transactions?per_page=100") },
      { endpoint: "list", path: "apollo", request: graphql("listTransactions", { perPage: 100 }) },
      { endpoint: "list", path: "baseline", request: base("/transactions?per_page=100") },
    ];
    const loader = new LoadGenerator();
    cleanups.push(["stop load generator", () => loader.stop()]);
    const databaseCpu = await DatabaseCpu.open(database.url, database.name);
    if (databaseCpu) cleanups.push(["close CPU probe", () => databaseCpu.close()]);
    const runs = new Map<string, Run[]>();
    for (let round = 1; round <= settings.rounds; round++) {
      // Odd rounds run rest, apollo, baseline; even rounds the reverse, so drift favours no path.
      for (const endpoint of ["get", "list"] as EndpointName[]) {
        const order = cases.filter((c) => c.endpoint === endpoint);
        if (round % 2 === 0) order.reverse();
        for (const c of order) {
          const job = { ...c.request, connections: settings.connections };
          if (settings.warmup > 0) await loader.run({ ...job, duration: settings.warmup });
          const dbBefore = await databaseCpu?.sample();
          const cpuBefore = process.cpuUsage();
          const load = await loader.run({ ...job, duration: settings.duration });
          const cpu = process.cpuUsage(cpuBefore);
          const dbAfter = await databaseCpu?.sample();
          if (load.non2xx || load.errors || load.timeouts || load.total === 0) {
            throw new Error(
              `${ENDPOINT_LABELS[endpoint]} via ${PATH_LABELS[c.path]}: ${load.non2xx} non-2xx, ${load.errors} errors, ${load.timeouts} timeouts`,
            );
          }
          const result: Run = {
            ...load,
            serverCpuMsPerRequest: (cpu.user + cpu.system) / 1000 / load.total,
            databaseCpuMsPerRequest: dbBefore && dbAfter ? DatabaseCpu.delta(dbBefore, dbAfter) / load.total : null,
          };
          const key_ = `${endpoint}:${c.path}`;
          runs.set(key_, [...(runs.get(key_) ?? []), result]);
          console.log(
            `  round ${round}  ${pad(ENDPOINT_LABELS[endpoint], 31)} ${pad(PATH_LABELS[c.path], 22)} ${pad(fmt(result.requestsPerSecond, 1), 9, true)} req/s  p99 ${pad(fmt(result.latencyP99), 5, true)} ms` +
              `  CPU/req: server ${result.serverCpuMsPerRequest.toFixed(2)} ms, database ${result.databaseCpuMsPerRequest === null ? "n/a" : `${result.databaseCpuMsPerRequest.toFixed(2)} ms`}`,
          );
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    }

    // 5. Report: best round per case (noise only ever slows a run down); CPU per request is the
    // lowest over the rounds, for the same reason.
    const measured = (endpoint: EndpointName, pathName: PathName): Measured => {
      const list = runs.get(`${endpoint}:${pathName}`)!;
      return { runs: list, best: list.reduce((a, b) => (b.requestsPerSecond > a.requestsPerSecond ? b : a)) };
    };
    const lowest = (values: Array<number | null>): number | null =>
      values.some((v) => v === null) ? null : Math.min(...(values as number[]));
    const round2 = (value: number | null) => (value === null ? null : Math.round(value * 100) / 100);
    const header =
      `${pad("endpoint", 31)} ${pad("path", 22)} ${pad("req/s", 9, true)} ${pad("p99 ms", 7, true)} ${pad("× baseline", 11, true)}` +
      `  ${pad("CPU ms/req: server", 19, true)} ${pad("database", 9, true)}   rounds (req/s)`;
    console.log(`\nResults (best of ${settings.rounds} rounds; ${settings.connections} connections, ${settings.duration}s each)\n`);
    console.log(header);
    console.log("-".repeat(header.length + 6));
    type Figures = {
      rps: number;
      p99_ms: number;
      ratio: number;
      server_cpu_ms_per_req: number | null;
      db_cpu_ms_per_req: number | null;
      rounds_rps: number[];
    };
    const summary: Record<string, Record<PathName, Figures>> = {};
    for (const endpoint of ["get", "list"] as EndpointName[]) {
      const baselineRps = measured(endpoint, "baseline").best.requestsPerSecond;
      summary[endpoint] = {} as Record<PathName, Figures>;
      for (const pathName of ["rest", "apollo", "baseline"] as PathName[]) {
        const { best, runs: all } = measured(endpoint, pathName);
        const ratio = best.requestsPerSecond / baselineRps;
        const serverCpu = lowest(all.map((r) => r.serverCpuMsPerRequest));
        const databaseCpu_ = lowest(all.map((r) => r.databaseCpuMsPerRequest));
        summary[endpoint][pathName] = {
          rps: Math.round(best.requestsPerSecond * 10) / 10,
          p99_ms: best.latencyP99,
          ratio: Math.round(ratio * 1000) / 1000,
          server_cpu_ms_per_req: round2(serverCpu),
          db_cpu_ms_per_req: round2(databaseCpu_),
          rounds_rps: all.map((r) => Math.round(r.requestsPerSecond * 10) / 10),
        };
        console.log(
          `${pad(pathName === "rest" ? ENDPOINT_LABELS[endpoint] : "", 31)} ${pad(PATH_LABELS[pathName], 22)} ${pad(fmt(best.requestsPerSecond, 1), 9, true)} ${pad(fmt(best.latencyP99), 7, true)} ${pad(`${ratio.toFixed(2)}×`, 11, true)}` +
            `  ${pad(serverCpu === null ? "n/a" : serverCpu.toFixed(2), 19, true)} ${pad(databaseCpu_ === null ? "n/a" : databaseCpu_.toFixed(2), 9, true)}   ${all.map((r) => fmt(r.requestsPerSecond, 0)).join(" / ")}`,
        );
      }
    }
    console.log(
      `\n(CPU ms/req: the servers' process and the scratch database's Postgres backends, lowest round; the load generator is not counted.)`,
    );

    // What the GraphQL operation limits add to each /graphql request: Apollo caches parsed and validated
    // documents, so per request they measure the operation and compare it with the caller's limits. Timed
    // here in-process on the very documents sent, against Apollo's CPU per request of this run.
    const limitsShare: Record<string, { limits_us_per_op: number; share_of_apollo_cpu: number | null }> = {};
    console.log(
      `\nGraphQL operation limits (GRAPHQL_MAX_COST=${config.graphqlMaxCost}${config.graphqlMaxCost === 0 ? ", off during the load" : ""})`,
    );
    for (const [endpoint, operation, variables] of [
      ["get", "getTransaction", { id: measuredId }],
      ["list", "listTransactions", { perPage: 100 }],
    ] as const) {
      const prepared = operations.get(operation)!;
      const limits = limitsFor(true, config.graphqlMaxCost || 10000);
      const iterations = 20_000;
      for (let i = 0; i < 2000; i++)
        checkOperation(measureOperation(runtime.schema!, prepared.document, prepared.definition, variables), limits);
      const started = process.hrtime.bigint();
      for (let i = 0; i < iterations; i++)
        checkOperation(measureOperation(runtime.schema!, prepared.document, prepared.definition, variables), limits);
      const microseconds = Number(process.hrtime.bigint() - started) / 1000 / iterations;
      const apolloCpuMs = summary[endpoint].apollo.server_cpu_ms_per_req;
      const share = apolloCpuMs ? microseconds / (apolloCpuMs * 1000) : null;
      limitsShare[endpoint] = {
        limits_us_per_op: round2(microseconds)!,
        share_of_apollo_cpu: share === null ? null : Math.round(share * 10000) / 10000,
      };
      console.log(
        `  ${pad(ENDPOINT_LABELS[endpoint], 31)} ${microseconds.toFixed(1)} µs per operation = ${share === null ? "n/a" : `${(share * 100).toFixed(2)} %`} of Apollo's server CPU per request (${apolloCpuMs ?? "n/a"} ms) — target < 5 %: ${share !== null && share < 0.05 ? "MET" : "NOT MET"}`,
      );
    }

    // 6. Where the CPU goes: each case once more under load, profiled, summarised by layer.
    const layers: Record<string, LayerTable> = {};
    if (settings.profileSeconds > 0) {
      for (const c of cases) {
        const job = { ...c.request, connections: settings.connections };
        if (settings.warmup > 0) await loader.run({ ...job, duration: settings.warmup });
        const saveAs = settings.profileDir ? path.join(settings.profileDir, `rest-bench-${c.endpoint}-${c.path}.cpuprofile`) : undefined;
        const cpuBefore = process.cpuUsage();
        const { result, profile } = await profileWhile(() => loader.run({ ...job, duration: settings.profileSeconds }), {
          samplingIntervalUs: PROFILE_SAMPLING_US,
          saveAs,
        });
        const cpu = process.cpuUsage(cpuBefore);
        const measuredCpuMs = summary[c.endpoint][c.path].server_cpu_ms_per_req;
        const shares = summarise(profile, result.total, cpu.user + cpu.system);
        layers[`${c.endpoint}:${c.path}`] = measuredCpuMs === null ? shares : scaledTo(shares, measuredCpuMs * 1000);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      printLayerTable(layers, settings.profileSeconds);
    }

    console.log("\nTargets");
    const targets: Array<{ name: string; met: boolean }> = [];
    for (const endpoint of ["get", "list"] as EndpointName[]) {
      const { rest: r, apollo: a, baseline: b } = summary[endpoint];
      const ratioMet = r.ratio >= TARGET_RATIO;
      const cpuRatio =
        r.server_cpu_ms_per_req !== null && b.server_cpu_ms_per_req ? r.server_cpu_ms_per_req / b.server_cpu_ms_per_req : null;
      const cpuMet = cpuRatio !== null && cpuRatio <= TARGET_CPU_RATIO;
      const fasterMet = r.rps > a.rps;
      targets.push(
        { name: `${endpoint}: rest >= ${TARGET_RATIO}x baseline`, met: ratioMet },
        { name: `${endpoint}: rest server cpu <= ${TARGET_CPU_RATIO}x baseline`, met: cpuMet },
        { name: `${endpoint}: rest faster than apollo`, met: fasterMet },
      );
      console.log(
        `  ${pad(ENDPOINT_LABELS[endpoint], 31)} REST ≥ ${TARGET_RATIO}× baseline: ${r.ratio.toFixed(2)}× — ${ratioMet ? "MET" : "NOT MET"}`,
      );
      console.log(
        `  ${pad("", 31)} REST server CPU/req ≤ ${TARGET_CPU_RATIO}× baseline: ${cpuRatio === null ? "n/a" : `${cpuRatio.toFixed(2)}×`} (${r.server_cpu_ms_per_req} vs ${b.server_cpu_ms_per_req} ms) — ${cpuMet ? "MET" : "NOT MET"}`,
      );
      console.log(
        `  ${pad("", 31)} REST faster than Apollo: ${fmt(r.rps, 1)} vs ${fmt(a.rps, 1)} req/s (${(r.rps / a.rps).toFixed(2)}×) — ${fasterMet ? "MET" : "NOT MET"}`,
      );
    }
    const allMet = targets.every((t) => t.met);
    console.log(
      `  overall: ${allMet ? "all targets met" : `${targets.filter((t) => !t.met).length} of ${targets.length} targets not met`}\n`,
    );
    console.log(
      JSON.stringify({
        bench: "rest",
        node: process.version,
        cpus: os.cpus().length,
        connections: settings.connections,
        duration_s: settings.duration,
        warmup_s: settings.warmup,
        rounds: settings.rounds,
        redis: Boolean(redisUrl),
        target_ratio: TARGET_RATIO,
        target_cpu_ratio: TARGET_CPU_RATIO,
        results: summary,
        cpu_us_per_req_by_layer: Object.fromEntries(
          Object.entries(layers).map(([name, table]) => [
            name,
            Object.fromEntries(Object.entries(table.perRequestUs).map(([layer, us]) => [layer, Math.round(us)])),
          ]),
        ),
        graphql_operation_limits: limitsShare,
        targets_met: Object.fromEntries(targets.map((t) => [t.name, t.met])),
        all_met: allMet,
      }),
    );
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`\nbench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
