import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { CLI, spawnUntilJson } from "../helpers/cli";
import { compareOutput, runBash, stepsOf, type Comparison } from "../helpers/readme-examples";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";

/**
 * Issue 14: the README's "Alerts" walk-through works as printed, from a fresh start: the three presets
 * fire and their e-mail arrives at the local SMTP server `npm run dev:smtp` starts (the built script, on
 * free ports). Its shell examples run in order in one bash, in the project folder; the substitutions
 * are the addresses only (the service's `http://localhost:3000`, the catcher's SMTP port `2525` and
 * inbox `http://127.0.0.1:8025`). Each step's output is compared with what the README prints after it.
 */
jest.setTimeout(180_000);

const ROOT = path.join(__dirname, "..", "..");
const README = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
const steps = stepsOf(README, "Alerts");
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

test("every shell example of the alerts section works as printed, with mail arriving at the dev:smtp server", async () => {
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
  delete env.REDIS_URL;
  delete env.PUBLIC_URL;
  const smtp = await spawnUntilJson<{ smtp: { port: number }; inbox: string }>(
    [path.join(ROOT, "dist", "test", "fakes", "dev-smtp.js"), "--smtp-port", "0", "--http-port", "0"],
    env,
    "inbox",
  );
  children.push(smtp.child);
  const service = await spawnUntilJson([CLI, "start", "--json"], env, "rest");
  children.push(service.child);
  const substitutions: Array<[string, string]> = [
    ["http://localhost:3000", service.json.rest.replace(/\/api\/v1$/, "")],
    ['"value": "2525"', `"value": "${smtp.json.smtp.port}"`],
    ["http://127.0.0.1:8025", new URL(smtp.json.inbox).origin],
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
    throw new Error(`README alert examples that do not work as printed:\n\n${problems.join("\n\n")}\n\nstderr: ${stderr}`);
});
