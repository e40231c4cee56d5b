import { randomBytes } from "node:crypto";
import { createLogger } from "../../src/common/logger";
import { createEventBus, type EventBus } from "../../src/events/event-bus";
import { redisUrl } from "../helpers/database-urls";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";

/** Two buses on separate connections stand for two processes: what one publishes, the other receives. */
const logger = createLogger("silent");
const busPrefix = `fgtest_bus_${randomBytes(4).toString("hex")}`;
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

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
    const all = firstEvents(subscriber.subscribe("thing.changed"), 2);
    const onlyB = firstEvents(subscriber.subscribe("chat", "b"), 1);
    publisher.publish("chat", "a", { text: "for a" });
    publisher.publish("thing.changed", { n: 1 });
    publisher.publish("chat", "b", { text: "for b" });
    publisher.publish("thing.changed", { n: 2 });
    expect(await all).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await onlyB).toEqual([{ text: "for b" }]);
  });

  test("a subscriber that stopped listening gets nothing more", async () => {
    const iterator = subscriber.subscribe("topic")[Symbol.asyncIterator]();
    const first = iterator.next();
    publisher.publish("topic", 1);
    expect(await first).toEqual({ value: 1, done: false });
    await iterator.return!();
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
  });
});

test("a PostgreSQL bus closed while it is still connecting closes cleanly (a quick CLI command does that)", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    // Closing at staggered moments hits every stage of connecting: before the socket, during the handshake, during LISTEN.
    const closings = Array.from({ length: 30 }, async (_, delay) => {
      const bus = createEventBus({ redisPrefix: "unused", databaseUrl: database.url }, logger);
      await new Promise((resolve) => setTimeout(resolve, delay));
      await bus.close();
    });
    await Promise.all(closings);
    await new Promise((resolve) => setTimeout(resolve, 300));
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
  expect(unhandled).toEqual([]);
});
