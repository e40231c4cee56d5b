import { randomBytes } from "node:crypto";
import IORedis from "ioredis";
import { Client } from "pg";
import { createLogger } from "../../src/platform/common/logger";
import { Topic } from "../../src/platform/events/catalogue";
import { createEventBus, type EventBus } from "../../src/platform/events/event-bus";
import { redisUrl } from "../helpers/database-urls";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";

/** Two buses on separate connections stand for two processes: what one publishes, the other receives. */
const logger = createLogger("silent");
const busPrefix = `fgtest_bus_${randomBytes(4).toString("hex")}`;
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());

async function firstEvents(iterable: AsyncIterable<unknown>, count: number): Promise<unknown[]> {
  const received: unknown[] = [];
  for await (const event of iterable) {
    received.push(event);
    if (received.length === count) break;
  }
  return received;
}

describe.each([
  ["Redis pub/sub", () => ({ redisUrl: redisUrl(), redisPrefix: busPrefix, databaseUrl: database.url })],
  ["PostgreSQL LISTEN/NOTIFY", () => ({ redisPrefix: "unused", databaseUrl: database.url })],
])("event bus over %s", (_name, options) => {
  let publisher: EventBus;
  let subscriber: EventBus;
  beforeEach(async () => {
    publisher = createEventBus(options(), logger);
    subscriber = createEventBus(options(), logger);
    await Promise.all([publisher.ready(), subscriber.ready()]);
  });
  afterEach(async () => {
    await Promise.all([publisher.close(), subscriber.close()]);
  });

  test("delivers events published on another connection, in order, by topic and id", async () => {
    const all = firstEvents(subscriber.subscribe(Topic.AccessEnded), 2);
    const onlyB = firstEvents(subscriber.subscribe(Topic.ChatEvent, "b"), 1);
    publisher.publish(Topic.ChatEvent, "a", { kind: "partial", chatId: "a", messageId: "m", delta: "for a" });
    publisher.publish(Topic.AccessEnded, { kind: "session", sessionId: "1", reason: "logout" });
    publisher.publish(Topic.ChatEvent, "b", { kind: "partial", chatId: "b", messageId: "m", delta: "for b" });
    publisher.publish(Topic.AccessEnded, { kind: "session", sessionId: "2", reason: "logout" });
    expect(await all).toEqual([
      { kind: "session", sessionId: "1", reason: "logout" },
      { kind: "session", sessionId: "2", reason: "logout" },
    ]);
    expect(await onlyB).toEqual([{ kind: "partial", chatId: "b", messageId: "m", delta: "for b" }]);
  });

  test("type-graphql's view of the bus is the same bus: what one publishes, the other hears", async () => {
    const typed = firstEvents(subscriber.subscribe(Topic.BankSyncEvent, "family-1"), 1);
    const untyped = firstEvents(subscriber.pubSub.subscribe(Topic.BankSyncEvent, "family-1"), 1);
    const event = { connectionId: "c", runId: "r", runStatus: "succeeded", connectionStatus: "good" as const, message: null };
    publisher.pubSub.publish(Topic.BankSyncEvent, "family-1", event);
    expect(await typed).toEqual([event]);
    expect(await untyped).toEqual([event]);
  });

  test("a subscriber that stopped listening gets nothing more", async () => {
    const iterator = subscriber.subscribe(Topic.AccessEnded)[Symbol.asyncIterator]();
    const first = iterator.next();
    publisher.publish(Topic.AccessEnded, { kind: "api_key", apiKeyId: "k", reason: "revoked" });
    expect(await first).toEqual({ value: { kind: "api_key", apiKeyId: "k", reason: "revoked" }, done: false });
    await iterator.return!();
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
  });
});

test("a PostgreSQL bus closed while it is still connecting closes cleanly (a quick CLI command does that)", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    // Closing at staggered moments hits every stage of connecting: before the socket, during the handshake,
    // during LISTEN. The stagger is counted in round trips to the same server, the steps a handshake takes.
    const pacer = new Client({ connectionString: database.url });
    await pacer.connect();
    try {
      const closings = Array.from({ length: 30 }, async (_, roundTrips) => {
        const bus = createEventBus({ redisPrefix: "unused", databaseUrl: database.url }, logger);
        for (let i = 0; i < roundTrips; i++) await pacer.query("SELECT 1");
        await bus.close();
      });
      await Promise.all(closings);
    } finally {
      await pacer.end();
    }
    // close() resolves once both clients have ended; a rejection nobody handled is reported by the next turn.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
  expect(unhandled).toEqual([]);
});

test("a Redis bus closed while it is still subscribing closes cleanly (the load benchmark's `migrate` died of it)", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    // As above, closing at staggered moments, counted in round trips to the same Redis: before the socket
    // connects, before SUBSCRIBE is answered, after.
    const pacer = new IORedis(redisUrl());
    try {
      const closings = Array.from({ length: 30 }, async (_, roundTrips) => {
        const bus = createEventBus({ redisUrl: redisUrl(), redisPrefix: busPrefix, databaseUrl: database.url }, logger);
        for (let i = 0; i < roundTrips; i++) await pacer.ping();
        await bus.close();
      });
      await Promise.all(closings);
    } finally {
      pacer.disconnect();
    }
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
  expect(unhandled).toEqual([]);
});
