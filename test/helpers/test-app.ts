import type { ClassType } from "type-graphql";
import { randomBytes } from "node:crypto";
import IORedis from "ioredis";
import type { Logger } from "../../src/platform/common/logger";
import { loadConfig } from "../../src/platform/config/config";
import type { Resolver } from "../../src/platform/outbound/outbound.guard";
import { startRuntime, type Roles, type Runtime } from "../../src/app/runtime";
import { redisUrl } from "./database-urls";
import { createTestDatabase, type TestDatabase } from "./test-database";

export type TestApp = {
  url: string;
  runtime: Runtime;
  database: TestDatabase;
  /** SQL statements seen since the last reset (see countStatements). */
  statements: string[];
  stop(): Promise<void>;
};

/**
 * The real service on a random loopback port, with its own database and Redis key prefix, so test
 * files running in parallel never see each other's data. `env` overrides settings (as strings, as the
 * environment would give them).
 */
export async function startTestApp(
  options: { env?: Record<string, string>; roles?: Partial<Roles>; logger?: Logger; resolve?: Resolver; extraResolvers?: ClassType[] } = {},
): Promise<TestApp> {
  const database = await createTestDatabase();
  const prefix = `fgtest_${process.env.JEST_WORKER_ID ?? "0"}_${randomBytes(4).toString("hex")}`;
  const config = loadConfig({
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl(),
    REDIS_PREFIX: prefix,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    DATABASE_POOL_MAX: "5",
    // Tests assert exact audit totals: the product's 20 ms for counting one can pass on a busy CI machine.
    AUDIT_COUNT_BUDGET_MS: "2000",
    ...options.env,
  });
  const statements: string[] = [];
  const runtime = await startRuntime(
    config,
    { api: true, workers: false, ...options.roles },
    {
      onStatement: (sql) => statements.push(sql),
      logger: options.logger,
      resolve: options.resolve,
      extraResolvers: options.extraResolvers,
    },
  );
  return {
    url: runtime.url!,
    runtime,
    database,
    statements,
    async stop() {
      await runtime.stop();
      await deleteRedisKeys(prefix);
      await database.close();
    },
  };
}

async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new IORedis(redisUrl());
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
