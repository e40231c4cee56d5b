import { eventually } from "../helpers/eventually";
import { spawn, type ChildProcess } from "node:child_process";
import { CLI } from "../helpers/cli";
import { createUser, type TestUser } from "../helpers/fixtures";
import { recordAuditEvents, streamAdmin } from "../helpers/streaming";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { WebhookReceiver } from "../fakes/webhook-receiver";
import { startOwnRedis, type OwnRedis } from "../helpers/own-servers";

/**
 * The delivery machine under failure: a worker process killed with SIGKILL in the middle of a batch,
 * a Redis server that dies and comes back, retries that run out. Nothing committed is lost.
 */
jest.setTimeout(90_000);

const STREAM_ENV = {
  OUTBOUND_ALLOWLIST: "127.0.0.1/32",
  STREAM_POLL_MS: "100",
  STREAM_LEASE_MS: "2000",
  STREAM_RETRY_SCHEDULE: "50ms,100ms,200ms,300ms,500ms,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s,1s",
};

const children: ChildProcess[] = [];
const receivers: WebhookReceiver[] = [];

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const receiver of receivers) await receiver.stop();
});

async function webhookTo(app: TestApp, admin: TestUser, eventTypes: string[]) {
  const receiver = new WebhookReceiver([]);
  receivers.push(receiver);
  await receiver.start();
  const created = await streamAdmin(app.url, admin.key).create({ kind: "webhook", name: "Failure drill", url: receiver.url, eventTypes });
  receiver.trust([created.secret!]);
  return { receiver, id: created.id };
}

/** A worker process (the built CLI, as deployed) on the app's database, with the streaming settings. */
function startWorker(app: TestApp, redisUrl = app.runtime.config.redisUrl): ChildProcess {
  const { config } = app.runtime;
  const child = spawn(process.execPath, [CLI, "worker"], {
    env: {
      ...process.env,
      ...STREAM_ENV,
      DATABASE_URL: app.runtime.databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: config.redisPrefix,
      LOG_LEVEL: "silent",
      DATABASE_POOL_MAX: "3",
    },
    // Its reconnection errors while Redis is down would only be noise; a crash shows as missing events.
    stdio: "ignore",
  });
  children.push(child);
  return child;
}

describe("a worker killed with SIGKILL mid-batch", () => {
  let app: TestApp;
  let admin: TestUser;

  beforeAll(async () => {
    app = await startTestApp({ roles: { api: true, workers: false }, env: STREAM_ENV });
    admin = await createUser(app.runtime.services, { role: "admin" });
  });
  afterAll(() => app?.stop());

  test("another worker takes the batch over after the lease: every event arrives, in order, some twice", async () => {
    const { receiver, id } = await webhookTo(app, admin, ["auth.login.failed"]);
    receiver.delayMs = 15; // a turn of 100 events takes about 1.5 s: long enough to kill it in the middle
    const ids = await recordAuditEvents(app.runtime, 300, "auth.login.failed");
    const first = startWorker(app);
    await eventually(() => receiver.received.length >= 30, { what: "the first worker to be mid-batch", timeout: 30_000, interval: 10 });
    first.kill("SIGKILL");
    await new Promise<void>((resolve) => first.once("exit", () => resolve()));
    const atKill = receiver.received.length;
    // The dead worker's turn never settled: its position is still before what it had sent.
    const position = BigInt((await streamAdmin(app.url, admin.key).destination(id)).health.position);
    const delivered = receiver.received.filter((message) => BigInt(message.data.seq!) <= position).length;
    expect(delivered).toBeLessThan(atKill);

    startWorker(app);
    await eventually(() => receiver.firstArrivals().length === 300, {
      what: "all 300 events after the takeover",
      timeout: 60_000,
      interval: 50,
    });
    expect(receiver.firstArrivals()).toEqual(ids);
    expect(receiver.received.length).toBeGreaterThan(300); // at-least-once: the interrupted batch came again, same webhook-ids
    expect(receiver.rejected).toEqual([]);
  });
});

describe("Redis stopped and started again", () => {
  let app: TestApp;
  let admin: TestUser;
  let redis: OwnRedis;

  beforeAll(async () => {
    redis = await startOwnRedis();
    // The API here and a worker process both use this Redis (queues, event bus, rate limits).
    app = await startTestApp({ roles: { api: true, workers: false }, env: { ...STREAM_ENV, REDIS_URL: redis.url } });
    admin = await createUser(app.runtime.services, { role: "admin" });
    startWorker(app);
  });
  afterAll(async () => {
    await app?.stop();
    await redis?.remove();
  });

  test("events recorded while Redis is down are delivered, and so are those after it is back", async () => {
    const { receiver } = await webhookTo(app, admin, ["auth.logout"]);
    const before = await recordAuditEvents(app.runtime, 20, "auth.logout");
    await eventually(() => receiver.received.length === 20, { what: "events before the outage" });
    await redis.stop();
    const during = await recordAuditEvents(app.runtime, 50, "auth.logout");
    await eventually(() => receiver.received.length === 70, { what: "events recorded while Redis is down", timeout: 30_000 });
    await redis.start();
    const after = await recordAuditEvents(app.runtime, 20, "auth.logout");
    await eventually(() => receiver.received.length === 90, { what: "events after Redis came back", timeout: 30_000 });
    expect(receiver.firstArrivals()).toEqual([...before, ...during, ...after]);
  });
});

describe("retries that run out", () => {
  let app: TestApp;
  let admin: TestUser;

  beforeAll(async () => {
    app = await startTestApp({ roles: { workers: true }, env: { ...STREAM_ENV, STREAM_RETRY_SCHEDULE: "50ms,50ms,50ms" } });
    admin = await createUser(app.runtime.services, { role: "admin" });
  });
  afterAll(() => app?.stop());

  test("the destination is marked failing, administrators are told through the audit log, and resume delivers what waited", async () => {
    const admin$ = streamAdmin(app.url, admin.key);
    const { receiver, id } = await webhookTo(app, admin, ["auth.token.revoked"]);
    receiver.failNext({ status: 503, times: 1000 });
    const [waiting] = await recordAuditEvents(app.runtime, 1, "auth.token.revoked");
    await eventually(async () => (await admin$.destination(id)).health.failing, { what: "the failing state", timeout: 20_000 });
    expect(receiver.attempts.length).toBe(4); // the first attempt and three retries
    const failing = await app.runtime.services.audit.list({ eventTypes: ["stream.destination.failing"] }, {});
    expect(failing.events[0]).toMatchObject({ severity: "error", resource: { id }, error: expect.stringMatching(/503/) });
    // A failing destination is not retried: delivery, given every event so far, sends it nothing more.
    await app.runtime.workers!.drain();
    expect(receiver.attempts.length).toBe(4);
    // The delivery log holds each attempt with its time, status, latency and error.
    const log = await admin$.gql(
      `query ($id: ID!) { streamDeliveries(destinationId: $id, first: 10) { attemptedAt status outcome error latencyMs } }`,
      { id },
    );
    expect(log.data.streamDeliveries).toHaveLength(4);
    expect(log.data.streamDeliveries[0]).toMatchObject({ status: 503, outcome: "failed", error: "the receiver answered 503" });
    receiver.clearFaults();
    const resumed = await admin$.gql(`mutation ($id: ID!) { resumeStreamDestination(id: $id) { health { failing paused } } }`, { id });
    expect(resumed.data.resumeStreamDestination.health).toEqual({ failing: false, paused: false });
    await eventually(() => receiver.received.some((message) => message.id === waiting), { what: "the waiting event after resume" });
  });
});
