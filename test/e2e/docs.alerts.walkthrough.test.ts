import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { CLI, spawnUntilJson, stopChild } from "../helpers/cli";
import { checkSteps, readPage, runSteps, stepsOf } from "../helpers/readme-examples";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";
import { applyConfiguration } from "../helpers/configuration";

/**
 * Issue 14: the walk-through of docs/alerts.md works as printed, from a fresh start: the three presets
 * fire and their e-mail arrives at the local SMTP server `npm run dev:smtp` starts (the built script, on
 * free ports). Its shell examples run in order in one bash, in the project folder; the substitutions
 * are the addresses only (the service's `http://localhost:3000`, the catcher's SMTP port `2525` and
 * inbox `http://127.0.0.1:8025`). Each step's output is compared with what the page prints after it.
 */
jest.setTimeout(180_000);

const ROOT = path.join(__dirname, "..", "..");
const steps = stepsOf(readPage(ROOT, "docs/alerts.md"), "Walk-through: the three presets, by e-mail to a local SMTP server");
const children: ChildProcess[] = [];
let database: TestDatabase;

afterAll(async () => {
  for (const child of children) await stopChild(child);
  await database?.close();
});

test("every shell example of the alerts walk-through works as printed, with mail arriving at the dev:smtp server", async () => {
  expect(steps.length).toBeGreaterThan(6);
  database = await createTestDatabase();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    DATABASE_POOL_MAX: "4",
    OUTBOUND_ALLOW_PRIVATE: "true",
  };
  // The default configuration (no REDIS_URL) as a newcomer starts it; .ci/run also runs it with Redis.
  applyConfiguration(env, "default");
  delete env.PUBLIC_URL;
  const smtp = await spawnUntilJson<{ smtp: { port: number }; inbox: string }>(
    [path.join(ROOT, "dist", "test", "fakes", "dev-smtp.js"), "--smtp-port", "0", "--http-port", "0"],
    env,
    "inbox",
  );
  children.push(smtp.child);
  const service = await spawnUntilJson([CLI, "start", "--json"], env, "rest");
  children.push(service.child);
  const run = await runSteps(steps, {
    substitutions: [
      ["http://localhost:3000", service.json.rest.replace(/\/api\/v1$/, "")],
      ['"value": "2525"', `"value": "${smtp.json.smtp.port}"`],
      ["http://127.0.0.1:8025", new URL(smtp.json.inbox).origin],
    ],
    cwd: ROOT,
    env,
    timeoutMs: 150_000,
  });
  const problems = checkSteps(steps, run);
  if (problems.length) throw new Error(`docs/alerts.md examples that do not work as printed:\n\n${problems.join("\n\n")}`);
});
