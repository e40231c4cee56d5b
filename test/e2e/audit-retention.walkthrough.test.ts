/**
 * The walk-through of docs/audit-retention.md, run as printed on a fresh instance in the default
 * configuration (no REDIS_URL): the page's commands run in one bash in the project folder against the
 * built CLI and a service started as `npm start` would (`finance-gateway start`; the test PostgreSQL
 * rather than the embedded one, for speed); `demo --audit-history` gives the instance its past year,
 * `audit retention run` archives it; the console steps (search an event of the demo history in an
 * archive, restore the month) are driven in Chromium; `audit verify --checkpoint` and the published
 * checkpoint end it. Each step's output is compared with what the page shows.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { CLI, spawnUntilJson, stopChild } from "../helpers/cli";
import { launchChromium, openContext, type HeadlessChromium } from "../helpers/chromium";
import { signIn } from "../helpers/console";
import { eventually } from "../helpers/eventually";
import { checkSteps, readPage, runSteps, stepsOf } from "../helpers/readme-examples";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";

const ROOT = path.join(__dirname, "..", "..");
const PAGE = readPage(ROOT, "docs/audit-retention.md");
const SECTION = "Walk-through: archive a month, find an event, restore it, verify";
jest.setTimeout(300_000);

let database: TestDatabase;
let home: string;
let service: ChildProcess | undefined;
let chromium: HeadlessChromium | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
  home = fs.mkdtempSync(path.join(os.tmpdir(), "fg-retention-walk-"));
});

afterAll(async () => {
  await chromium?.close();
  await stopChild(service);
  await database?.close();
  fs.rmSync(home, { recursive: true, force: true });
});

test("archive a month, find an event, restore it, verify: the page's commands as printed, on a fresh instance without Redis", async () => {
  const steps = stepsOf(PAGE, SECTION);
  const exportStep = steps.find((step) => step.command.startsWith("export "));
  expect(exportStep).toBeDefined();
  // The settings the page exports, as the service's terminal has them too.
  const settings = Object.fromEntries(
    [...exportStep!.command.matchAll(/(\w+)=('[^']*'|"[^"]*"|\S+)/g)].map(([, name, value]) => [
      name,
      value.replace(/^['"]|['"]$/g, "").replace("$HOME", home),
    ]),
  );
  expect(Object.keys(settings).sort()).toEqual(["AUDIT_CHECKPOINT_FILE", "AUDIT_RETENTION_DATABASE_DAYS", "AUDIT_RETENTION_TIERS"]);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_cache: process.env.npm_config_cache ?? path.join(os.homedir(), ".npm"),
    HOME: home,
    DATABASE_URL: database.url,
    DATA_DIR: path.join(home, "data"),
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    DATABASE_POOL_MAX: "4",
  };
  delete env.REDIS_URL;
  delete env.PUBLIC_URL;
  for (const name of Object.keys(env)) if (name.startsWith("AUDIT_")) delete env[name];
  const started = await spawnUntilJson<{ rest: string }>([CLI, "start", "--json"], { ...env, ...settings }, "rest");
  service = started.child;
  const baseUrl = started.json.rest.replace(/\/api\/v1$/, "");

  // Up to the console steps: the settings, the demo with its history, the administrator, retention.
  const verifyAt = steps.findIndex((step) => step.command.includes("audit verify"));
  expect(verifyAt).toBeGreaterThan(2);
  const before = steps.slice(0, verifyAt);
  const first = await runSteps(before, { substitutions: [], cwd: ROOT, env });
  const problems = checkSteps(before, first);
  if (problems.length > 0) throw new Error(`docs/audit-retention.md steps that do not work as printed:\n\n${problems.join("\n\n")}`);

  const demoOutput = first.outputs[before.findIndex((step) => step.command.includes("demo --audit-history"))];
  const months = [...demoOutput.matchAll(/^ {2}(\d{4}-\d{2}) {2}(\d+) events$/gm)].map(([, month, events]) => ({
    month,
    events: Number(events),
  }));
  expect(months).toHaveLength(12);
  const oldest = months[0];
  const password = /password \(shown once\): (\S+)/.exec(
    first.outputs[before.findIndex((step) => step.command.includes("admin create"))],
  )![1];
  const retention = first.outputs[before.findIndex((step) => step.command.includes("audit retention run"))];
  expect(retention.split("\n")[0]).toMatch(new RegExp(`^archived ${oldest.month}: ${oldest.events} events`));

  const superuser = new pg.Client({ connectionString: database.url });
  await superuser.connect();
  const monthEvents = async () => {
    const { rows } = await superuser.query<{ n: string }>(
      "SELECT count(*) AS n FROM audit_events WHERE occurred_at >= $1::date AND occurred_at < ($1::date + interval '1 month')",
      [`${oldest.month}-01`],
    );
    return Number(rows[0].n);
  };
  try {
    // Archived: the month has left the database.
    expect(await monthEvents()).toBe(0);

    chromium = await launchChromium();
    const { context, page } = await openContext(chromium.browser, baseUrl);
    try {
      await page.goto("/admin/archives");
      await signIn(page, "admin@example.com", password);
      await page.getByRole("heading", { name: "Retention & archives" }).waitFor();
      await page.getByLabel(`Search archive ${oldest.month} compliance`).check();
      await page.getByLabel("Archive search").fill("demo@finance-gateway.local");
      await page.getByRole("button", { name: "Search archives" }).click();
      const found = page.getByRole("table", { name: "Archived events" });
      await eventually(async () => expect(await found.textContent()).toContain("demo@finance-gateway.local"));
      expect(await found.locator("tbody tr").count()).toBeGreaterThan(0);

      await page.getByRole("button", { name: `Restore ${oldest.month}` }).click();
      await page.getByText(`${oldest.month} restored into the database.`).waitFor();
    } finally {
      await context.close();
    }
    // Restored: every event of the month is back, with the demo history's marking.
    expect(await monthEvents()).toBe(oldest.events);
    const { rows } = await superuser.query<{ agents: string[] }>(
      "SELECT array_agg(DISTINCT user_agent) AS agents FROM audit_events WHERE occurred_at >= $1::date AND occurred_at < ($1::date + interval '1 month')",
      [`${oldest.month}-01`],
    );
    expect(rows[0].agents).toEqual(["finance-gateway demo history"]);
  } finally {
    await superuser.end();
  }

  const after = steps.slice(verifyAt);
  const second = await runSteps(after, { substitutions: [], cwd: ROOT, env: { ...env, ...settings } });
  const late = checkSteps(after, second);
  if (late.length > 0) throw new Error(`docs/audit-retention.md steps that do not work as printed:\n\n${late.join("\n\n")}`);
  expect(second.outputs[0]).toMatch(/^audit chain intact \(\d+ events checked\)$/);
});
