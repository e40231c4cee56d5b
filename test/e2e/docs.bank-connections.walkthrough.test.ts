import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { CLI, spawnUntilJson, stopChild } from "../helpers/cli";
import { checkSteps, readPage, runSteps, stepsOf } from "../helpers/readme-examples";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";
import { applyConfiguration } from "../helpers/configuration";

/**
 * Issue 16: docs/bank-connections.md works as printed. Its shell examples run in order in one bash, in
 * the project folder, against the service and the sandboxes `npm run dev:banks` starts (the built
 * script, on free ports). The substitutions are the addresses only: the service's
 * `http://localhost:3000` and the sandboxes' `http://127.0.0.1:8091` / `:8092`. Each step's output is
 * compared with what the page prints after it, as test/e2e/docs.rest-api.walkthrough.test.ts does.
 */
jest.setTimeout(180_000);

const ROOT = path.join(__dirname, "..", "..");
const steps = stepsOf(readPage(ROOT, "docs/bank-connections.md"), null);
const children: ChildProcess[] = [];
let database: TestDatabase;

afterAll(async () => {
  for (const child of children) await stopChild(child);
  await database?.close();
});

test("every shell example of the bank connections page works as printed, against the dev:banks sandboxes", async () => {
  expect(steps.length).toBeGreaterThan(5);
  database = await createTestDatabase();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    DATABASE_POOL_MAX: "4",
    ALLOW_INSECURE_UPSTREAMS: "true",
    OUTBOUND_ALLOW_PRIVATE: "true",
  };
  // The default configuration (no REDIS_URL) as a newcomer starts it; .ci/run also runs it with Redis.
  applyConfiguration(env, "default");
  delete env.PUBLIC_URL;
  const banks = await spawnUntilJson<{ lunchflow: { baseUrl: string }; simplefin: { setupTokenUrl: string } }>(
    [path.join(ROOT, "dist", "test", "fakes", "dev-banks.js"), "--lunchflow-port", "0", "--simplefin-port", "0"],
    env,
    "lunchflow",
  );
  children.push(banks.child);
  const service = await spawnUntilJson([CLI, "start", "--json"], env, "rest");
  children.push(service.child);
  const run = await runSteps(steps, {
    substitutions: [
      ["http://localhost:3000", service.json.rest.replace(/\/api\/v1$/, "")],
      ["http://127.0.0.1:8091", new URL(banks.json.lunchflow.baseUrl).origin],
      ["http://127.0.0.1:8092", new URL(banks.json.simplefin.setupTokenUrl).origin],
    ],
    cwd: ROOT,
    env,
    timeoutMs: 150_000,
  });
  const problems = checkSteps(steps, run);
  if (problems.length) throw new Error(`docs/bank-connections.md examples that do not work as printed:\n\n${problems.join("\n\n")}`);
});
