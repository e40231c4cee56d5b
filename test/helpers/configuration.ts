import { randomBytes } from "node:crypto";
import { redisUrl } from "./database-urls";

/**
 * Which configuration a walk-through (or the backup and stop tests) runs the service in:
 * - `default`: what `npm start` gives a newcomer: no REDIS_URL (rate limits and queues in PostgreSQL);
 * - `redis`: the deployed shape, with REDIS_URL (and a prefix of this run's own).
 *
 * Each file runs in its `main` configuration in `npm test`; `FG_TEST_CONFIGURATION=default|redis`
 * overrides it, which is how `.ci/run` runs the same files a second time in the other configuration
 * (docs/testing.md). `applyConfiguration` sets or removes REDIS_URL in the env it is given.
 */
export type TestConfiguration = "default" | "redis";

export function testConfiguration(main: TestConfiguration): TestConfiguration {
  const chosen = process.env.FG_TEST_CONFIGURATION;
  if (chosen === undefined || chosen === "") return main;
  if (chosen !== "default" && chosen !== "redis") throw new Error(`FG_TEST_CONFIGURATION must be default or redis, not ${chosen}`);
  return chosen;
}

export function applyConfiguration(env: Record<string, string | undefined>, main: TestConfiguration): TestConfiguration {
  const configuration = testConfiguration(main);
  if (configuration === "redis") {
    env.REDIS_URL = redisUrl();
    env.REDIS_PREFIX = `fgconf_${process.env.JEST_WORKER_ID ?? "0"}_${randomBytes(4).toString("hex")}`;
  } else {
    delete env.REDIS_URL;
    delete env.REDIS_PREFIX;
  }
  return configuration;
}
