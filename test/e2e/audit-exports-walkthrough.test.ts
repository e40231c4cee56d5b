/**
 * The walk-through of docs/audit-exports.md, run as printed (in one bash, in the project
 * folder, against the real CLI and a service started as a user would) on a fresh instance holding some
 * events of last month: an auditor exports last month as CSV, checks it against its manifest, and
 * downloads the authentication report as a PDF. Each step's output is compared with what the page shows.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { CLI, spawnUntilJson, stopChild } from "../helpers/cli";
import { checkSteps, readPage, runSteps, stepsOf } from "../helpers/readme-examples";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";

const ROOT = path.join(__dirname, "..", "..");
const PAGE = readPage(ROOT, "docs/audit-exports.md");
const SECTION = "Walk-through: last month as CSV, a report as PDF";
const SEEDED = 40;
jest.setTimeout(180_000);

let database: TestDatabase;
let dataDir: string;
let service: ChildProcess | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-walkthrough-"));
  // Last month's sign-ins, standing in for a month of use (the walk-through exports "last month").
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(
      `WITH month AS (SELECT date_trunc('month', now() AT TIME ZONE 'UTC') - interval '1 month' AS first_day),
       inserted AS (
         INSERT INTO audit_events (id, occurred_at, event_type, severity, user_email, provider, ip_address, user_agent, request_id, error)
         SELECT gen_random_uuid(), (month.first_day + (g * interval '17 hours')) AT TIME ZONE 'UTC',
                CASE WHEN g % 4 = 0 THEN 'auth.login.failed' ELSE 'auth.login.success' END,
                CASE WHEN g % 4 = 0 THEN 'warning' ELSE 'info' END,
                'person' || (g % 3) || '@example.com', CASE WHEN g % 2 = 0 THEN 'okta' END, ('203.0.113.' || (g % 5))::inet,
                'Mozilla/5.0 (X11; Linux x86_64), "quoted"', 'seed-' || g, CASE WHEN g % 4 = 0 THEN 'invalid_password' END
           FROM month, generate_series(0, $1 - 1) AS g
         RETURNING id, occurred_at)
       INSERT INTO audit_unchained (event_id, occurred_at) SELECT id, occurred_at FROM inserted`,
      [SEEDED],
    );
  } finally {
    await client.end();
  }
});

afterAll(async () => {
  await stopChild(service);
  await database?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test("an auditor following the page exports last month as CSV and downloads a report as PDF", async () => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    DATABASE_POOL_MAX: "4",
  };
  delete env.REDIS_URL;
  delete env.PUBLIC_URL;
  const { child, json } = await spawnUntilJson<{ rest: string }>([CLI, "start", "--json"], env, "rest");
  service = child;
  const steps = stepsOf(PAGE, SECTION);
  expect(steps.length).toBeGreaterThan(5);
  const run = await runSteps(steps, { substitutions: [["http://localhost:3000", json.rest.replace(/\/api\/v1$/, "")]], cwd: ROOT, env });
  const problems = checkSteps(steps, run);
  if (problems.length > 0) throw new Error(`docs/audit-exports.md examples that do not work as printed:\n\n${problems.join("\n\n")}`);
  // The export holds every event of last month: the seeded ones (this month's own events are not in it).
  const summary = run.outputs[steps.findIndex((step) => step.command.includes("rowsWritten"))];
  expect(summary).toContain(`rowsWritten: ${SEEDED}`);
  // The walk-through's files went to a folder of its own, not into the project.
  expect(fs.existsSync(path.join(ROOT, "last-month.csv.gz"))).toBe(false);
});
