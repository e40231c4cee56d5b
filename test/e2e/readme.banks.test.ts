import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { CLI, spawnUntilJson } from "../helpers/cli";
import { compareOutput, runBash, stepsOf, type Comparison } from "../helpers/readme-examples";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";

/**
 * Issue 16: the README's "Bank connections" section works as printed. Its shell examples run in order
 * in one bash, in the project folder, against the service and the sandboxes `npm run dev:banks` starts
 * (the built script, on free ports). The substitutions are the addresses only: the service's
 * `http://localhost:3000` and the sandboxes' `http://127.0.0.1:8091` / `:8092`. Each step's output is
 * compared with what the README prints after it, as test/e2e/readme.tour.test.ts does for the API tour.
 */
jest.setTimeout(180_000);

const ROOT = path.join(__dirname, "..", "..");
const README = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
const steps = stepsOf(README, "Bank connections");
const children: ChildProcess[] = [];
let database: TestDatabase;

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    child.removeAllListeners("exit");
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  await database?.drop();
});

test("every shell example of the bank connections section works as printed, against the dev:banks sandboxes", async () => {
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
  delete env.REDIS_URL;
  delete env.PUBLIC_URL;
  const banks = await spawnUntilJson<{ lunchflow: { baseUrl: string }; simplefin: { setupTokenUrl: string } }>(
    [path.join(ROOT, "dist", "test", "fakes", "dev-banks.js"), "--lunchflow-port", "0", "--simplefin-port", "0"],
    env,
    "lunchflow",
  );
  children.push(banks.child);
  const service = await spawnUntilJson([CLI, "start", "--json"], env, "rest");
  children.push(service.child);
  const substitutions: Array<[string, string]> = [
    ["http://localhost:3000", service.json.rest.replace(/\/api\/v1$/, "")],
    ["http://127.0.0.1:8091", new URL(banks.json.lunchflow.baseUrl).origin],
    ["http://127.0.0.1:8092", new URL(banks.json.simplefin.setupTokenUrl).origin],
  ];
  const substitute = (command: string) => substitutions.reduce((text, [from, to]) => text.split(from).join(to), command);

  const parts = ["set -o pipefail", `trap 'printf "\\n@@FAILED %s\\n" "$?"' ERR`];
  steps.forEach((step, index) => parts.push(`printf '\\n@@STEP ${index}\\n'`, substitute(step.command)));
  parts.push("printf '\\n@@STEP end\\n'", "exit 0");
  const { stdout, stderr } = await runBash(parts.join("\n"), { cwd: ROOT, env, timeoutMs: 150_000 });
  const outputs = stdout.split(/\n@@STEP (?:\d+|end)\n/).slice(1, steps.length + 1);
  expect(outputs).toHaveLength(steps.length);

  const comparison: Comparison = { illustrative: [], shortIds: new Map() };
  const problems: string[] = [];
  steps.forEach((step, index) => {
    const failed = [...outputs[index].matchAll(/\n@@FAILED (\d+)\n/g)].map((match) => `a command exited with status ${match[1]}`);
    const output = outputs[index].replace(/\n@@FAILED \d+\n/g, "\n").trim();
    const found = [...failed, ...(step.expected === null ? [] : compareOutput(step.expected, output, comparison))];
    if (found.length)
      problems.push([`README.md:${step.line}: ${step.command.split("\n")[0]}`, ...found, `  printed: ${output}`].join("\n"));
  });
  if (problems.length)
    throw new Error(`README bank examples that do not work as printed:\n\n${problems.join("\n\n")}\n\nstderr: ${stderr}`);
});
