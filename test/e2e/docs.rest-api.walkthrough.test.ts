import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { CLI, spawnUntilJson, stopChild } from "../helpers/cli";
import { checkSteps, compareOutput, readFences, readPage, runSteps, stepsOf, type Comparison, type Step } from "../helpers/readme-examples";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";
import { applyConfiguration } from "../helpers/configuration";

/**
 * Issue 2's promise: "every curl works as printed". The shell examples of docs/rest-api.md's "API tour"
 * and "REST conventions" run in order, in ONE bash process (so KEY, API, TX, BODY… flow from block to
 * block), in the project folder, exactly as printed: `npx finance-gateway demo` is the real CLI. The one
 * substitution is the address: `http://localhost:3000` becomes the address of the service this test
 * starts (port 0, its own database). Each step's output is compared with what the page prints after it
 * (see test/helpers/readme-examples.ts for how), and a step that exits non-zero fails too (`set -o
 * pipefail` and an ERR trap, so a failing command inside `$(…)` or a pipe counts). A failure names the
 * page line of the step. test/unit/docs.walkthroughs.test.ts checks that every curl example of the
 * project's pages is run by this test or another.
 */
const ROOT = path.join(__dirname, "..", "..");
const PAGE = readPage(ROOT, "docs/rest-api.md");
const SECTIONS = ["API tour", "REST conventions"];
const ADDRESS = "http://localhost:3000";
jest.setTimeout(150_000);

/**
 * Outputs that show one sample of the generated demo data rather than something every run
 * prints: compared by shape only. The demo data is generated relative to today, so which transaction
 * is the newest changes from day to day.
 */
const ILLUSTRATIVE: Array<{ command: string; paths: string[] }> = [
  { command: `"$API/transactions?per_page=1"`, paths: ["transactions.*"] },
  // Today's balances follow from the generated transactions (a brokerage deposit lands on the 20th).
  { command: "transactions(filter: {type:", paths: ["data.transactions.items.*.name", "data.accounts.*.balance"] },
];

let database: TestDatabase;
let env: NodeJS.ProcessEnv;
let service: ChildProcess | undefined;
const steps: Step[] = SECTIONS.flatMap((section) => stepsOf(PAGE, section));
const outputs = new Map<Step, string>();

async function start(): Promise<{ child: ChildProcess; base: string }> {
  const { child, json } = await spawnUntilJson([CLI, "start", "--json"], env, "rest");
  return { child, base: json.rest.replace(/\/api\/v1$/, "") };
}

beforeAll(async () => {
  database = await createTestDatabase();
  env = { ...process.env, DATABASE_URL: database.url, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn", DATABASE_POOL_MAX: "4" };
  // The default configuration (no REDIS_URL) as a newcomer starts it; .ci/run also runs it with Redis.
  applyConfiguration(env, "default");
  delete env.PUBLIC_URL;
});

afterAll(async () => {
  await stopChild(service);
  await database?.close();
});

test("every shell example of the REST API page works as printed, in order", async () => {
  const started = await start();
  service = started.child;

  const run = await runSteps(steps, { substitutions: [[ADDRESS, started.base]], cwd: ROOT, env });
  const problems = checkSteps(steps, run, (step) =>
    ILLUSTRATIVE.filter((entry) => step.command.includes(entry.command)).flatMap((entry) => entry.paths),
  );
  steps.forEach((step, index) => outputs.set(step, run.outputs[index]));
  if (problems.length > 0) throw new Error(`docs/rest-api.md examples that do not work as printed:\n\n${problems.join("\n\n")}`);
});

test("an example whose output changes fails the comparison, naming what differs", () => {
  const find = (text: string) => {
    const step = steps.find((candidate) => candidate.command.includes(text) && outputs.has(candidate));
    if (!step?.expected) throw new Error(`no step with output runs ${text}`);
    return { expected: step.expected, printed: outputs.get(step)! };
  };
  const fresh = (): Comparison => ({ illustrative: [], shortIds: new Map() });

  const created = find(`-X POST "$API/transactions" -H "X-Api-Key: $KEY" -H 'Content-Type: application/json' -d "$BODY"`);
  expect(compareOutput(created.expected, created.printed, fresh())).toEqual([]);
  expect(compareOutput(created.expected, created.printed.replace(/\n201$/, "\n500"), fresh())).toEqual([
    'expected the line "201", got "500"',
  ]);
  expect(compareOutput(created.expected, created.printed.replace(`"classification":"income",`, ""), fresh())).toEqual([
    "(top level): missing key(s) classification",
  ]);
  expect(compareOutput(created.expected, created.printed.replace(`"amount":"-$250.00"`, `"amount":"$250.00"`), fresh())).toEqual([
    'amount: expected an amount with the sign of "-$250.00", got "$250.00"',
  ]);

  const invalid = find(`"nature": "gift"`);
  expect(compareOutput(invalid.expected, invalid.printed, fresh())).toEqual([]);
  expect(compareOutput(invalid.expected, invalid.printed.replace(/Account not found/g, "No such account"), fresh())).toHaveLength(2);
  expect(compareOutput(invalid.expected, invalid.printed.replace(/"validation_failed"/, '"bad_request"'), fresh())).toEqual([
    'error: expected "validation_failed", got "bad_request"',
  ]);

  const pagination = find("whole%20foods");
  expect(compareOutput(pagination.expected, pagination.printed.replace("per_page: 5", "per_page: 25"), fresh())).toEqual([
    "per_page: expected 5, got 25",
  ]);
});

test("every curl line of the page is part of a step this test runs, and only the address is substituted", () => {
  const run = steps.map((step) => step.command).join("\n");
  const skipped = readFences(PAGE.text)
    .filter((fence) => fence.lang === "sh" && SECTIONS.includes(fence.section))
    .flatMap((fence) => fence.lines.map((line, offset) => ({ line, at: fence.line + 1 + offset })))
    .filter(({ line }) => /\bcurl\b/.test(line) && !run.includes(line));
  expect(skipped.map(({ at, line }) => `docs/rest-api.md:${at}: ${line.trim()}`)).toEqual([]);
  for (const section of SECTIONS) expect(steps.filter((step) => step.section === section).length).toBeGreaterThan(0);
  // The only substitution is the address; any other spelling of it would reach no service.
  const otherAddresses = steps.filter((step) => /localhost:\d+/.test(step.command.split(ADDRESS).join("")));
  expect(otherAddresses.map((step) => `docs/rest-api.md:${step.line}`)).toEqual([]);
  // Every entry of ILLUSTRATIVE still names exactly one command, so none outlives its example.
  for (const entry of ILLUSTRATIVE) expect(steps.filter((step) => step.command.includes(entry.command))).toHaveLength(1);
});
