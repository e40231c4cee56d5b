import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { CLI, spawnUntilJson, stopChild } from "../helpers/cli";
import { checkSteps, readPage, runSteps, stepsOf, type Step } from "../helpers/readme-examples";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";
import { applyConfiguration } from "../helpers/configuration";

/**
 * The README's own commands work as printed: the first administrator, the demo key, and the five-minute
 * tour (REST, GraphQL, asking the assistant, connecting the Lunch Flow sandbox), in one bash, in the
 * project folder, against a service started as the tour's bank step says (ALLOW_INSECURE_UPSTREAMS and
 * OUTBOUND_ALLOW_PRIVATE) and the `npm run dev:banks` sandboxes. Then docs/assistant.md's copy-paste
 * example, in a bash of its own as a reader starting there would run it. The substitutions are the
 * addresses only. The Quick start's `npm ci && npm start` is what this test does before it runs anything
 * (test/e2e/runtime.zero-config.test.ts runs the service with nothing configured).
 */
jest.setTimeout(180_000);

const ROOT = path.join(__dirname, "..", "..");
const README_STEPS = ["The first administrator and a demo key", "A five-minute tour"].flatMap((section) =>
  stepsOf(readPage(ROOT, "README.md"), section),
);
const ASSISTANT_STEPS = stepsOf(readPage(ROOT, "docs/assistant.md"), "Ask a question");
const children: ChildProcess[] = [];
let database: TestDatabase;
let env: NodeJS.ProcessEnv;
let substitutions: Array<[string, string]>;

beforeAll(async () => {
  database = await createTestDatabase();
  env = {
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
  const banks = await spawnUntilJson<{ lunchflow: { baseUrl: string } }>(
    [path.join(ROOT, "dist", "test", "fakes", "dev-banks.js"), "--lunchflow-port", "0", "--simplefin-port", "0"],
    env,
    "lunchflow",
  );
  children.push(banks.child);
  const service = await spawnUntilJson([CLI, "start", "--json"], env, "rest");
  children.push(service.child);
  substitutions = [
    ["http://localhost:3000", service.json.rest.replace(/\/api\/v1$/, "")],
    ["http://127.0.0.1:8091", new URL(banks.json.lunchflow.baseUrl).origin],
  ];
});

afterAll(async () => {
  for (const child of children) await stopChild(child);
  await database?.close();
});

async function expectAsPrinted(steps: Step[], page: string): Promise<void> {
  const run = await runSteps(steps, { substitutions, cwd: ROOT, env, timeoutMs: 120_000 });
  const problems = checkSteps(steps, run);
  if (problems.length) throw new Error(`${page} examples that do not work as printed:\n\n${problems.join("\n\n")}`);
}

test("the assistant page's copy-paste question works as printed", async () => {
  expect(ASSISTANT_STEPS.length).toBeGreaterThanOrEqual(3);
  await expectAsPrinted(ASSISTANT_STEPS, "docs/assistant.md");
});

// After the assistant page: `demo` again keeps the data and issues new keys, then the README creates an
// administrator (in a family of its own, which is why the README runs `demo` first).
test("the README's administrator, demo key and five-minute tour work as printed", async () => {
  // Each part of the tour has its command: REST, a CSV import, GraphQL, the assistant, the bank sandbox.
  for (const part of ["/api/v1/transactions", "file=@docs/examples/sample-bank.csv", "/graphql", "/api/v1/chats", "connectLunchflow"])
    expect(README_STEPS.some((step) => step.command.includes(part))).toBe(true);
  await expectAsPrinted(README_STEPS, "README.md");
});
