/**
 * Assistant benchmark: `npm run bench:assistant`.
 *
 * On a fresh database holding the demo family, with the built-in assistant (no model server) and the
 * workers in the same process, N chats each post one message at once ("How much did I spend on
 * groceries last month?"). For each message it measures the time from the POST to the `complete`
 * status event, and the throughput of the whole burst. The floor is the same tool query run directly,
 * N at once, in the same process: what answering would cost with no HTTP, queue, event bus or writes.
 * Figures are printed next to the floor as ratios; nothing is judged in absolute terms.
 *
 * Settings (environment, all optional):
 *   BENCH_DATABASE_URL  admin connection URL of the Postgres server for the scratch database
 *                       (default postgres://postgres@127.0.0.1:5432/postgres); dropped at the end.
 *   BENCH_REDIS_URL     Redis for queues and events (default redis://127.0.0.1:6379; "off" for PostgreSQL).
 *   BENCH_CHATS         chats, one message each (default 200)
 *   BENCH_POOL_MAX      database pool size (default 20)
 */
import "reflect-metadata";
import { randomBytes } from "node:crypto";
import IORedis from "ioredis";
import pg from "pg";
import { ToolRunner } from "../src/finance/assistant/tools";
import { Topic } from "../src/platform/events/catalogue";
import { FamilyVocabulary } from "../src/finance/assistant/vocabulary";
import { seedDemo } from "../src/app/cli/demo";
import { loadConfig } from "../src/platform/config/config";
import { startRuntime } from "../src/app/runtime";

const adminUrl = process.env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const redisSetting = process.env.BENCH_REDIS_URL || "redis://127.0.0.1:6379";
const chats = Number(process.env.BENCH_CHATS || 200);
const poolMax = Number(process.env.BENCH_POOL_MAX || 20);
const QUESTION = "How much did I spend on groceries last month?";

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function redisIfReachable(): Promise<string | undefined> {
  if (redisSetting === "off") return undefined;
  const redis = new IORedis(redisSetting, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on("error", () => undefined);
  try {
    await redis.connect();
    await redis.ping();
    return redisSetting;
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function summary(latencies: number[], wallMs: number) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), throughput: (latencies.length / wallMs) * 1000 };
}

async function main(): Promise<void> {
  const name = `fg_bench_assistant_${process.pid}_${randomBytes(3).toString("hex")}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const redisUrl = await redisIfReachable();
  const prefix = `fgbench_${randomBytes(4).toString("hex")}`;
  const config = loadConfig({
    DATABASE_URL: url.toString(),
    ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_PREFIX: prefix } : {}),
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    DATABASE_POOL_MAX: String(poolMax),
    RATE_LIMIT_REQUESTS: "0",
  });
  const runtime = await startRuntime(config, { api: true, workers: true });
  try {
    const demo = await seedDemo(runtime.sequelize, runtime.services);
    const base = `${runtime.url}/api/v1`;
    const headers = { "x-api-key": demo.api_key, "content-type": "application/json" };
    const chatIds: string[] = [];
    for (let i = 0; i < chats; i++) {
      const response = await fetch(`${base}/chats`, { method: "POST", headers, body: JSON.stringify({ title: `Bench ${i}` }) });
      chatIds.push(((await response.json()) as { id: string }).id);
    }

    // Completion is observed as a subscriber would: the `complete` status event on the event bus.
    const done = new Map<string, number>();
    const listeners = chatIds.map(async (chatId) => {
      for await (const event of runtime.services.events.subscribe(Topic.ChatEvent, chatId)) {
        if (event.kind === "status" && event.status !== "pending") {
          if (event.status !== "complete") throw new Error(`reply failed: ${event.statusMessage}`);
          done.set(chatId, performance.now());
          return;
        }
      }
    });
    const posted = new Map<string, number>();
    const start = performance.now();
    await Promise.all(
      chatIds.map(async (chatId) => {
        posted.set(chatId, performance.now());
        const response = await fetch(`${base}/chats/${chatId}/messages`, {
          method: "POST",
          headers,
          body: JSON.stringify({ content: QUESTION }),
        });
        if (response.status !== 201) throw new Error(`POST answered ${response.status}: ${await response.text()}`);
      }),
    );
    await Promise.all(listeners);
    const assistant = summary(
      chatIds.map((id) => done.get(id)! - posted.get(id)!),
      Math.max(...done.values()) - start,
    );

    // The floor: the very tool call the built-in assistant made, run directly, as many at once.
    const [stored] = await runtime.sequelize.query<{ args: Record<string, unknown> }>(
      "SELECT function_arguments AS args FROM chat_tool_calls LIMIT 1",
      { type: "SELECT" as never },
    );
    const { repositories } = runtime.services;
    const vocabulary = new FamilyVocabulary(await repositories.finance.vocabulary(demo.family_id));
    const scope = { familyId: demo.family_id, currency: "USD", today: new Date().toISOString().slice(0, 10), vocabulary };
    const floorStart = performance.now();
    const floorLatencies = await Promise.all(
      chatIds.map(async () => {
        const began = performance.now();
        await new ToolRunner(scope, { finance: repositories.finance, accounts: repositories.accounts }).call(
          "get_transactions",
          stored.args,
        );
        return performance.now() - began;
      }),
    );
    const floor = summary(floorLatencies, performance.now() - floorStart);

    const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
    console.log(
      `\nassistant benchmark: ${chats} chats, one message each, built-in provider, queues on ${redisUrl ? "Redis" : "PostgreSQL"}\n`,
    );
    console.log(`                      p50          p95          throughput`);
    console.log(
      `POST → complete      ${fmt(assistant.p50).padEnd(12)} ${fmt(assistant.p95).padEnd(12)} ${assistant.throughput.toFixed(1)} replies/s`,
    );
    console.log(`tool query (floor)   ${fmt(floor.p50).padEnd(12)} ${fmt(floor.p95).padEnd(12)} ${floor.throughput.toFixed(1)} queries/s`);
    console.log(
      `ratio                ${(assistant.p50 / floor.p50).toFixed(1)}×${" ".repeat(9)} ${(assistant.p95 / floor.p95).toFixed(1)}×${" ".repeat(9)} ${(floor.throughput / assistant.throughput).toFixed(1)}× fewer per second\n`,
    );
  } finally {
    await runtime.stop();
    await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    if (redisUrl) {
      const redis = new IORedis(redisUrl);
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== "0");
      redis.disconnect();
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
