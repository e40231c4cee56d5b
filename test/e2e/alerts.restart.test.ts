import { eventually } from "../helpers/eventually";
import { spawn, type ChildProcess } from "node:child_process";
import { alertAdmin, evaluatorCaughtUp, failedLogin } from "../helpers/alerts";
import { CLI } from "../helpers/cli";
import { createUser } from "../helpers/fixtures";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * The alert evaluator's window counts live in the transaction that moves its stream position: a
 * worker killed with SIGKILL mid-window loses no count, and one killed after a firing does not fire
 * it again. The API runs in this process; the evaluating worker is the built CLI, killed and restarted.
 */
jest.setTimeout(90_000);

const children: ChildProcess[] = [];
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ roles: { api: true, workers: false }, env: { RATE_LIMIT_REQUESTS: "0" } });
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await app?.stop();
});

function startWorker(): ChildProcess {
  const { config } = app.runtime;
  const child = spawn(process.execPath, [CLI, "worker"], {
    env: {
      ...process.env,
      DATABASE_URL: app.runtime.databaseUrl,
      REDIS_URL: config.redisUrl,
      REDIS_PREFIX: config.redisPrefix,
      LOG_LEVEL: "silent",
      DATABASE_POOL_MAX: "3",
      STREAM_POLL_MS: "100",
      STREAM_LEASE_MS: "2000",
      ALERT_POLL_MS: "100",
    },
    stdio: "ignore",
  });
  children.push(child);
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  child.kill("SIGKILL");
  await new Promise<void>((resolve) => child.once("exit", () => resolve()));
}

test("kill -9 mid-window keeps the count; kill -9 after the firing does not fire again", async () => {
  const admin = await createUser(app.runtime.services, { role: "admin" });
  const alerts = alertAdmin(app.url, admin.key);
  const rule = await alerts.enablePreset("brute_force");
  const windowOf = async () =>
    (await app.runtime.services.repositories.alerts.windows([{ ruleId: rule.id, groupKey: "81.2.69.142" }])).values().next().value;

  let worker = startWorker();
  for (let i = 0; i < 3; i++) await failedLogin(app.url, "81.2.69.142");
  await evaluatorCaughtUp(app.runtime, 60_000);
  expect(await windowOf()).toMatchObject({ count: 3, fired: false });
  await kill(worker);

  await failedLogin(app.url, "81.2.69.142"); // recorded while no worker runs
  worker = startWorker();
  await failedLogin(app.url, "81.2.69.142"); // the fifth: the window fires with the count carried over
  await evaluatorCaughtUp(app.runtime, 60_000);
  const fired = await eventually(async () => (await alerts.firings(rule.id)).length === 1, { what: "the firing" });
  expect(fired).toBe(true);
  expect((await alerts.firings(rule.id))[0]).toMatchObject({ groupKey: "81.2.69.142", count: 5 });
  await kill(worker);

  worker = startWorker();
  await failedLogin(app.url, "81.2.69.142");
  await evaluatorCaughtUp(app.runtime, 60_000);
  expect(await windowOf()).toMatchObject({ count: 6, fired: true });
  expect(await alerts.firings(rule.id)).toHaveLength(1);
  await kill(worker);
});
