/**
 * The live audit stream over the zero-configuration event bus (PostgreSQL LISTEN/NOTIFY, which refuses
 * payloads of 8000 bytes or more): an event with a large `changes` still reaches subscribers, whole.
 */
import { AuditService } from "../../src/audit/log/audit.service";
import { createLogger } from "../../src/platform/common/logger";
import { Topic, type AuditEventRecorded } from "../../src/platform/events/catalogue";
import { createEventBus, type EventBus } from "../../src/platform/events/event-bus";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { within } from "../helpers/eventually";

const logger = createLogger("silent");
let app: TestApp;
let publisherBus: EventBus;
let subscriberBus: EventBus;
let audit: AuditService;

beforeAll(async () => {
  app = await startTestApp({ roles: { api: false } });
  const options = { redisPrefix: "unused", databaseUrl: app.runtime.databaseUrl };
  // Two PostgreSQL buses on their own connections: the recording process and a subscribing one.
  publisherBus = createEventBus(options, logger);
  subscriberBus = createEventBus(options, logger);
  await Promise.all([publisherBus.ready(), subscriberBus.ready()]);
  audit = new AuditService(app.runtime.services.repositories.audit, publisherBus, { partitionsAhead: 1, countBudgetMs: 1000 }, logger);
});

afterAll(async () => {
  await audit?.settle();
  await Promise.all([publisherBus?.close(), subscriberBus?.close()]);
  await app?.stop();
});

/** The next notice for `id`, or a failure after a deadline (the old bus dropped oversized events silently). */
async function noticeOf(source: AsyncIterator<AuditEventRecorded>, id: () => string | null, timeoutMs = 5000): Promise<AuditEventRecorded> {
  const notice = async () => {
    for (;;) {
      const next = await source.next();
      if (next.done) throw new Error("the subscription ended");
      if (next.value.id === id()) return next.value;
    }
  };
  return within(notice(), timeoutMs, "the event to reach the subscriber");
}

async function recordWithChanges(text: string) {
  const event = await app.runtime.sequelize.transaction((transaction) =>
    audit.record(transaction, {
      type: "user.updated",
      user: { id: null, email: "admin@example.test" },
      resource: { type: "user", id: "u-1" },
      changes: { notes: { old: null, new: text } },
    }),
  );
  await audit.chainCommitted();
  return event;
}

test("a 20 KB `changes` reaches a subscriber on the PostgreSQL bus, whole, with its chain link", async () => {
  const large = "x".repeat(20 * 1024);
  const source = subscriberBus.subscribe(Topic.AuditEventRecorded)[Symbol.asyncIterator]();
  let id: string | null = null;
  const arriving = noticeOf(source, () => id);
  id = (await recordWithChanges(large)).id;
  const notice = await arriving;
  expect(notice.event).toBeNull();
  const received = await audit.received(notice);
  expect(received).toMatchObject({ id, changes: { notes: { old: null, new: large } } });
  expect(received!.seq).not.toBeNull();
  expect(received!.hash).toMatch(/^[0-9a-f]{64}$/);
  await source.return!();
});

test("a small event travels whole and is not read back", async () => {
  const source = subscriberBus.subscribe(Topic.AuditEventRecorded)[Symbol.asyncIterator]();
  let id: string | null = null;
  const arriving = noticeOf(source, () => id);
  id = (await recordWithChanges("short")).id;
  const notice = await arriving;
  expect(notice.event).toMatchObject({ id, changes: { notes: { old: null, new: "short" } } });
  const statementsBefore = app.statements.length;
  const received = await audit.received(notice);
  expect(app.statements.length).toBe(statementsBefore);
  expect(received!.timestamp).toBeInstanceOf(Date);
  await source.return!();
});
