import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { startOfTomorrowUtc } from "../../src/finance/banking/provider";
import { BANK_TEST_ENV, waitForSync } from "../helpers/banking";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { FakeSimplefinBridge, generateHistory } from "../fakes/simplefin-bridge";
import { eventually } from "../helpers/eventually";

/**
 * Bank syncs across real worker processes (the built CLI, as deployed): several connections sync in
 * parallel, and a worker killed in the middle of a sync is taken over by another with no duplicates.
 */
const CLI = path.join(__dirname, "..", "..", "bin", "finance-gateway.js");
const DAY = 86_400;
jest.setTimeout(60_000);

let app: TestApp;
let bridge: FakeSimplefinBridge;
let user: TestUser;
const workers: ChildProcess[] = [];

function startWorker(): ChildProcess {
  const { config } = app.runtime;
  const child = spawn(process.execPath, [CLI, "worker"], {
    env: {
      ...process.env,
      ...BANK_TEST_ENV,
      DATABASE_URL: app.runtime.databaseUrl,
      REDIS_URL: config.redisUrl,
      REDIS_PREFIX: config.redisPrefix,
      LOG_LEVEL: "warn",
      DATABASE_POOL_MAX: "4",
      JOB_LOCK_MS: "1000",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  workers.push(child);
  return child;
}

async function connect(): Promise<string> {
  const response = await apiKeyClient(app.url, user.key).graphql(`mutation ($t: String!) { connectSimplefin(setupToken: $t) { id } }`, {
    t: bridge.newSetupToken(),
  });
  return response.body.data.connectSimplefin.id;
}

beforeAll(async () => {
  bridge = new FakeSimplefinBridge();
  await bridge.start();
  bridge.accounts = ["a", "b"].map((id, index) => ({
    id,
    name: `Account ${id}`,
    currency: "USD",
    balance: "100",
    "balance-date": startOfTomorrowUtc() - DAY,
    org: { name: `Bank ${index}`, "sfin-url": "https://bank.example" },
    transactions: generateHistory({ accountId: id, days: 730, perDay: 1, seed: index * 10_000 }),
  }));
  app = await startTestApp({ env: { ...BANK_TEST_ENV, SIMPLEFIN_DAILY_REQUEST_BUDGET: "500" }, roles: { api: true, workers: false } });
  user = await createUser(app.runtime.services);
});

afterAll(async () => {
  for (const child of workers) if (child.exitCode === null) child.kill("SIGKILL");
  await app?.stop();
  await bridge?.stop();
});

test("several connections sync in parallel", async () => {
  bridge.http.delayMs = 100;
  const worker = startWorker();
  const ids = await Promise.all([connect(), connect(), connect()]);
  const runs = await Promise.all(ids.map((id) => waitForSync(app.runtime.services, id, 40_000)));
  expect(runs.map((run) => run.status)).toEqual(["completed", "completed", "completed"]);
  // Requests of different connections (different Basic credentials) were in flight at the same time.
  const requests = bridge.http.requestsTo(/\/accounts$/);
  const overlapping = requests.some((a) =>
    requests.some(
      (b) =>
        a.headers.authorization !== b.headers.authorization &&
        a.startedAt < (b.finishedAt ?? Infinity) &&
        b.startedAt < (a.finishedAt ?? Infinity),
    ),
  );
  expect(overlapping).toBe(true);
  const [{ count }] = (
    await app.runtime.sequelize.query("SELECT count(*)::int AS count FROM transactions WHERE family_id = $1", { bind: [user.familyId] })
  )[0] as Array<{ count: number }>;
  expect(count).toBe(3 * 2 * 730);
  worker.kill("SIGTERM");
  await new Promise((resolve) => worker.once("exit", resolve));
});

test("a worker killed mid-sync is taken over by another, which resumes without duplicates", async () => {
  bridge.http.delayMs = 250;
  const first = startWorker();
  const seen = bridge.http.requestsTo(/\/accounts$/).length;
  const connectionId = await connect();
  await eventually(() => bridge.http.requestsTo(/\/accounts$/).length >= seen + 4, { timeout: 20_000 });
  first.kill("SIGKILL");
  await new Promise((resolve) => first.once("exit", resolve));
  const [interrupted] = await app.runtime.services.banking.runs(connectionId, 1);
  expect(interrupted.status).toBe("syncing");

  startWorker();
  const run = await waitForSync(app.runtime.services, connectionId, 40_000);
  expect(run).toMatchObject({ id: interrupted.id, status: "completed" });
  const [rows] = await app.runtime.sequelize.query(
    `SELECT count(*)::int AS total, count(DISTINCT (t.account_id, t.external_id))::int AS distinct_keys
       FROM transactions t JOIN bank_provider_accounts p ON p.account_id = t.account_id WHERE p.connection_id = $1`,
    { bind: [connectionId] },
  );
  expect(rows[0]).toEqual({ total: 2 * 730, distinct_keys: 2 * 730 });
  // The second worker continued from the saved cursor instead of walking the whole history again.
  const windows = bridge.accountWindows().slice(seen);
  expect(windows.length).toBeLessThan(2 * Math.ceil(730 / 60));
  expect(windows.at(-1)!.start).toBe(startOfTomorrowUtc() - 730 * DAY);
});
