/**
 * The audit log is the record administrators trust: an event commits or rolls back with its change,
 * events and chain links cannot be changed by the application, and any row altered, deleted or
 * inserted behind the application's back is found, with its position, by `audit verify` (CLI and
 * GraphQL). Recording takes no lock shared between writers: the sequencer links committed events into
 * the chain after commit, one sequencer at a time across processes, and a scheduled run links what a
 * dead process left.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { QueueEvents } from "bullmq";
import IORedis from "ioredis";
import { Client } from "pg";
import { runInAuditContext } from "../../src/platform/common/audit-context";
import { AuditRepository } from "../../src/audit/log/audit.repository";
import { AuditService, type AuditEventInput } from "../../src/audit/log/audit.service";
import { Topic, type AuditEventJson } from "../../src/platform/events/catalogue";
import { createSequelize } from "../../src/platform/db/database";
import { JOBS, QueueName } from "../../workers/queues";
import { redisUrl } from "../helpers/database-urls";
import { eventually, within } from "../helpers/eventually";
import { startTestApp, type TestApp } from "../helpers/test-app";

const CLI = path.join(__dirname, "..", "..", "bin", "finance-gateway.js");

let app: TestApp;
let superuser: Client;
beforeAll(async () => {
  app = await startTestApp({ roles: { api: true, workers: true } });
  superuser = new Client({ connectionString: app.database.url });
  await superuser.connect();
});
afterAll(async () => {
  await superuser.end();
  await app.stop();
});

const context = { ipAddress: "10.1.2.3", userAgent: "jest", requestId: "req-chain", sessionId: null };

function record(input: Partial<AuditEventInput> = {}) {
  const { sequelize, services } = app.runtime;
  return runInAuditContext(context, () =>
    sequelize.transaction((transaction) =>
      services.audit.record(transaction, { type: "user.updated", action: "update", user: null, ...input } as AuditEventInput),
    ),
  );
}

type Link = { id: string; seq: string; action: string | null; prev_hash: Buffer | null; hash: Buffer };

/** The chain, with each link's event action, once everything committed so far is linked. */
async function rows(): Promise<Link[]> {
  await app.runtime.services.audit.chainCommitted();
  return (
    await superuser.query(`SELECT c.event_id AS id, c.seq, e.action, c.prev_hash, c.hash
      FROM audit_chain c LEFT JOIN audit_events e ON e.occurred_at = c.occurred_at AND e.id = c.event_id ORDER BY c.seq`)
  ).rows;
}

async function countOf(table: string): Promise<number> {
  return (await superuser.query(`SELECT count(*)::int AS count FROM ${table}`)).rows[0].count;
}

/** Tampering as someone with database access would: past the application's trigger. */
async function tamper(sql: string, params: unknown[] = []): Promise<void> {
  await superuser.query("SET session_replication_role = replica");
  try {
    await superuser.query(sql, params);
  } finally {
    await superuser.query("SET session_replication_role = DEFAULT");
  }
}

test("an event records the request's context, commits with the change it describes, and is linked after commit", async () => {
  const event = await record({ changes: { name: { old: "a", new: "b" }, apiKey: { old: "k1", new: "k2" } } });
  expect(event).toMatchObject({ ipAddress: "10.1.2.3", userAgent: "jest", requestId: "req-chain", severity: "info" });
  const [stored] = (await superuser.query("SELECT changes, host(ip_address) AS ip FROM audit_events WHERE id = $1", [event.id])).rows;
  expect(stored).toEqual({ changes: { name: { old: "a", new: "b" }, apiKey: { old: "[REDACTED]", new: "[REDACTED]" } }, ip: "10.1.2.3" });

  const [link] = await rows();
  expect(link).toMatchObject({ id: event.id, seq: "1", prev_hash: null });
  const [listed] = (await app.runtime.services.audit.list({}, { first: 1 })).events;
  expect(listed).toMatchObject({ id: event.id, seq: "1", prevHash: null, hash: link.hash.toString("hex") });
  expect(await countOf("audit_unchained")).toBe(0);
});

test("a rolled-back change leaves no event and does not move the chain", async () => {
  const before = await rows();
  const { sequelize, services } = app.runtime;
  await expect(
    sequelize.transaction(async (transaction) => {
      await services.audit.record(transaction, { type: "user.suspended", resource: { type: "user", id: "u1" } });
      throw new Error("the change failed");
    }),
  ).rejects.toThrow("the change failed");
  expect(await rows()).toEqual(before);
  expect(await countOf("audit_events")).toBe(before.length);
  expect(await countOf("audit_unchained")).toBe(0);
  const next = await record();
  expect((await rows()).map((link) => link.id)).toEqual([...before.map((link) => link.id), next.id]);
  expect((await rows())[before.length].seq).toBe(String(before.length + 1));
  expect((await services.audit.verify()).ok).toBe(true);
});

test("an unknown event type cannot be recorded", async () => {
  await expect(record({ type: "user.hacked" as never })).rejects.toThrow("unknown audit event type user.hacked");
});

test("the application cannot update or delete events or chain links", async () => {
  const { sequelize } = app.runtime;
  await expect(sequelize.query("UPDATE audit_events SET error = 'x'")).rejects.toThrow("append-only");
  await expect(sequelize.query("DELETE FROM audit_events")).rejects.toThrow("append-only");
  await expect(sequelize.query("UPDATE audit_chain SET hash = NULL")).rejects.toThrow("append-only");
  await expect(sequelize.query("DELETE FROM audit_chain")).rejects.toThrow("append-only");
});

test("a writer does not wait for another writer's transaction to commit", async () => {
  const { sequelize, services } = app.runtime;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let recordedInSlow!: () => void;
  const slowRecorded = new Promise<void>((resolve) => (recordedInSlow = resolve));
  const slow = sequelize.transaction(async (transaction) => {
    const event = await services.audit.record(transaction, { type: "auth.token.issued", action: "slow" });
    recordedInSlow();
    await held;
    return event;
  });
  await slowRecorded;
  // With the slow transaction still open, another records and commits; its event is linked at once.
  const fast = await within(record({ action: "fast" }), 5000, "another writer to commit while the slow transaction is open");
  expect((await rows()).map((link) => link.id)).toContain(fast.id);
  release();
  const slowEvent = await slow;
  expect((await rows()).slice(-2).map((link) => link.id)).toEqual([fast.id, slowEvent.id]);
  expect((await services.audit.verify()).ok).toBe(true);
});

test("concurrent writers keep the chain linear", async () => {
  const { sequelize, services } = app.runtime;
  // Interleaved in open transactions: a writer records its i-th event once the writer before it has
  // recorded its own i-th (a relay, not a ring, so a pool smaller than 12 connections cannot deadlock).
  const recorded = Array.from({ length: 12 }, () =>
    Array.from({ length: 4 }, () => {
      let resolve!: () => void;
      return { promise: new Promise<void>((done) => (resolve = done)), resolve: () => resolve() };
    }),
  );
  const writers = Array.from({ length: 12 }, (_, writer) =>
    sequelize.transaction(async (transaction) => {
      for (let i = 0; i < 4; i += 1) {
        if (writer > 0) await recorded[writer - 1][i].promise;
        await services.audit.record(transaction, { type: "auth.token.issued", action: `writer-${writer}-${i}` });
        recorded[writer][i].resolve();
      }
    }),
  );
  await Promise.all(writers);
  const chain = await rows();
  expect(await countOf("audit_events")).toBe(chain.length);
  expect(new Set(chain.map((row) => row.id)).size).toBe(chain.length);
  chain.forEach((row, index) => {
    expect(row.seq).toBe(String(index + 1));
    if (index > 0) expect(row.prev_hash).toEqual(chain[index - 1].hash);
  });
  expect(new Set(chain.map((row) => row.prev_hash?.toString("hex"))).size).toBe(chain.length);
  expect(await app.runtime.services.audit.verify()).toEqual({ ok: true, checked: chain.length, firstBroken: null });
});

test("sequencers of different processes take turns: the chain stays one line", async () => {
  const { sequelize, services, config } = app.runtime;
  // A second process's view: its own connection pool and its own sequencer.
  const other = createSequelize({ url: app.database.url, poolMax: 4 });
  const otherAudit = new AuditService(new AuditRepository(other), services.events, {
    partitionsAhead: config.auditPartitionsAhead,
    countBudgetMs: config.auditCountBudgetMs,
    histogramBudgetMs: config.auditHistogramBudgetMs,
  });
  try {
    const writes = Array.from({ length: 40 }, (_, i) => {
      const [database, audit] = i % 2 === 0 ? [sequelize, services.audit] : [other, otherAudit];
      return runInAuditContext(context, () =>
        database.transaction((transaction) => audit.record(transaction, { type: "auth.token.refreshed", action: `process-${i % 2}-${i}` })),
      );
    });
    await Promise.all(writes);
    await Promise.all([otherAudit.settle(), services.audit.settle()]);
    const chain = await rows();
    chain.forEach((row, index) => {
      expect(row.seq).toBe(String(index + 1));
      if (index > 0) expect(row.prev_hash).toEqual(chain[index - 1].hash);
    });
    expect(chain.filter((row) => row.action?.startsWith("process-"))).toHaveLength(40);
    expect((await services.audit.verify()).ok).toBe(true);
  } finally {
    await otherAudit.settle();
    await other.close();
  }
});

test("an event whose process died before linking it is linked and published by the scheduled run", async () => {
  const { sequelize, services } = app.runtime;
  const published: AuditEventJson[] = [];
  const iterator = services.events.subscribe(Topic.AuditEventRecorded)[Symbol.asyncIterator]();
  const collecting = (async () => {
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      if (next.value.event) published.push(next.value.event);
    }
  })();
  // Committed the way record() commits it, but no sequencer runs afterwards: as if the process died.
  const id = "00000000-0000-4000-8000-00000000dead";
  await sequelize.transaction((transaction) =>
    services.repositories.audit.append(
      {
        ...{ timestamp: new Date(), eventType: "user.suspended", severity: "warning", userId: null, userEmail: null },
        id,
        provider: null,
        action: "orphaned",
        resourceType: null,
        resourceId: null,
        resourceLabel: null,
        ipAddress: null,
        userAgent: null,
        sessionId: null,
        requestId: "req-dead",
        changes: null,
        error: null,
      },
      transaction,
    ),
  );
  expect(await countOf("audit_unchained")).toBe(1);

  const queue = app.runtime.queues.queue(QueueName.Maintenance);
  const schedulers = await queue.getJobSchedulers();
  expect(schedulers.map((scheduler) => scheduler.key)).toContain("chain-audit-events-minutely");
  const connection = new IORedis(redisUrl(), { maxRetriesPerRequest: null });
  const events = new QueueEvents(QueueName.Maintenance, { connection, prefix: app.runtime.config.redisPrefix });
  try {
    await events.waitUntilReady();
    const job = await queue.add(JOBS[QueueName.Maintenance].chainAuditEvents, {});
    expect(await job.waitUntilFinished(events, 15_000)).toEqual({ linked: 1 });
  } finally {
    await events.close();
    connection.disconnect();
  }
  const chain = await rows();
  expect(chain[chain.length - 1]).toMatchObject({ id, action: "orphaned" });
  await eventually(() => published.some((event) => event.id === id), { what: "the orphan's publication" });
  expect(published.find((event) => event.id === id)).toMatchObject({ seq: chain[chain.length - 1].seq, action: "orphaned" });
  await iterator.return!();
  await collecting;
  expect((await services.audit.verify()).ok).toBe(true);
});

describe("tampering is detected and located", () => {
  beforeAll(async () => {
    for (let i = 0; i < 5; i += 1) await record({ action: `extra-${i}` });
  });
  afterEach(async () => {
    expect((await app.runtime.services.audit.verify()).ok).toBe(true);
  });

  test("an altered row", async () => {
    const target = (await rows())[4];
    await tamper("UPDATE audit_events SET error = 'nothing to see' WHERE id = $1", [target.id]);
    const report = await app.runtime.services.audit.verify();
    expect(report).toMatchObject({ ok: false, checked: 4, firstBroken: { kind: "altered", seq: target.seq, eventId: target.id } });
    await tamper("UPDATE audit_events SET error = NULL WHERE id = $1", [target.id]);
  });

  test("a deleted event, or a deleted chain link", async () => {
    const target = (await rows())[6];
    await superuser.query("CREATE TEMP TABLE saved AS SELECT * FROM audit_events WHERE id = $1", [target.id]);
    await tamper("DELETE FROM audit_events WHERE id = $1", [target.id]);
    const report = await app.runtime.services.audit.verify();
    expect(report).toMatchObject({ ok: false, firstBroken: { kind: "deleted", seq: target.seq, eventId: target.id } });
    expect(report.firstBroken!.message).toContain(`events ${target.seq} to ${target.seq} are missing`);
    await tamper(`INSERT INTO audit_events (id, occurred_at, event_type, severity, user_id, user_email, provider, action,
        resource_type, resource_id, resource_label, ip_address, user_agent, session_id, request_id, changes, error)
      SELECT id, occurred_at, event_type, severity, user_id, user_email, provider, action, resource_type, resource_id,
        resource_label, ip_address, user_agent, session_id, request_id, changes, error FROM saved`);
    await superuser.query("DROP TABLE saved");
    expect((await app.runtime.services.audit.verify()).ok).toBe(true);

    await superuser.query("CREATE TEMP TABLE saved AS SELECT * FROM audit_chain WHERE seq = $1", [target.seq]);
    await tamper("DELETE FROM audit_chain WHERE seq = $1", [target.seq]);
    const gap = await app.runtime.services.audit.verify();
    expect(gap).toMatchObject({ ok: false, firstBroken: { kind: "deleted", seq: target.seq } });
    expect(gap.firstBroken!.message).toContain(`events ${target.seq} to ${target.seq} are missing`);
    await tamper("INSERT INTO audit_chain SELECT * FROM saved");
    await superuser.query("DROP TABLE saved");
  });

  test("an event inserted out of band, with or without a forged link", async () => {
    const chain = await rows();
    const forged = "00000000-0000-4000-8000-00000000f0f0";
    const [between] = (await superuser.query("SELECT occurred_at FROM audit_events WHERE id = $1", [chain[3].id])).rows;
    await superuser.query(
      `INSERT INTO audit_events (id, occurred_at, event_type, severity, action) VALUES ($1, $2, 'user.deleted', 'warning', 'forged')`,
      [forged, between.occurred_at],
    );
    expect(await app.runtime.services.audit.verify()).toMatchObject({
      ok: false,
      firstBroken: { kind: "inserted", seq: null, eventId: forged, timestamp: between.occurred_at },
    });

    await superuser.query(`INSERT INTO audit_chain (seq, event_id, occurred_at, prev_hash, hash) VALUES ($1, $2, $3, $4, $5)`, [
      String(chain.length + 1),
      forged,
      between.occurred_at,
      chain[chain.length - 1].hash,
      Buffer.alloc(32),
    ]);
    expect(await app.runtime.services.audit.verify()).toMatchObject({
      ok: false,
      firstBroken: { kind: "inserted", seq: String(chain.length + 1), eventId: forged },
    });
    await tamper("DELETE FROM audit_chain WHERE event_id = $1", [forged]);
    await tamper("DELETE FROM audit_events WHERE id = $1", [forged]);
  });

  test("an event rewritten with its link's hash recomputed breaks the link to its successor", async () => {
    const chain = await rows();
    const target = chain[2];
    await tamper("UPDATE audit_events SET action = 'rewritten' WHERE id = $1", [target.id]);
    await tamper(
      `UPDATE audit_chain c SET hash = audit_event_hash(e.id, c.seq, e.occurred_at, e.event_type, e.severity, e.user_id,
         e.user_email, e.provider, e.action, e.resource_type, e.resource_id, e.resource_label, e.ip_address, e.user_agent,
         e.session_id, e.request_id, e.changes, e.error, c.prev_hash)
         FROM audit_events e WHERE e.id = c.event_id AND c.event_id = $1`,
      [target.id],
    );
    expect(await app.runtime.services.audit.verify()).toMatchObject({ ok: false, firstBroken: { kind: "relinked", seq: chain[3].seq } });
    await tamper("UPDATE audit_events SET action = $2 WHERE id = $1", [target.id, target.action]);
    await tamper("UPDATE audit_chain SET hash = $2 WHERE event_id = $1", [target.id, target.hash]);
  });

  test("the CLI and GraphQL report the first broken link", async () => {
    const target = (await rows())[1];
    await tamper("UPDATE audit_events SET severity = 'info', error = 'edited' WHERE id = $1", [target.id]);
    const env = {
      ...process.env,
      DATABASE_URL: app.database.url,
      REDIS_URL: redisUrl(),
      REDIS_PREFIX: app.runtime.config.redisPrefix,
      LOG_LEVEL: "silent",
    };
    const cli = spawnSync(process.execPath, [CLI, "audit", "verify", "--json"], { env, encoding: "utf8" });
    expect(cli.status).toBe(1);
    expect(JSON.parse(cli.stdout.trim())).toMatchObject({
      ok: false,
      firstBroken: { kind: "altered", seq: target.seq, eventId: target.id },
    });

    const admin = await app.runtime.services.users.create({ email: `chain-admin-${Date.now()}@example.test`, role: "admin" });
    const key = (await app.runtime.services.apiKeys.create(admin.id, { scope: "read" })).plaintext;
    const response = await fetch(`${app.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ query: "{ auditChainVerification { ok firstBroken { kind seq eventId message } } }" }),
    });
    const body = (await response.json()) as { data: { auditChainVerification: unknown } };
    expect(body.data.auditChainVerification).toMatchObject({
      ok: false,
      firstBroken: { kind: "altered", seq: target.seq, eventId: target.id },
    });
    await tamper("UPDATE audit_events SET error = NULL WHERE id = $1", [target.id]);
  });
});

test("the scheduled job creates the partitions of the coming months", async () => {
  const queue = app.runtime.queues.queue(QueueName.Maintenance);
  const schedulers = await queue.getJobSchedulers();
  expect(schedulers.map((scheduler) => scheduler.key)).toContain("ensure-audit-partitions-daily");

  const monthOf = (ahead: number) => {
    const now = new Date();
    const date = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + ahead, 1));
    return { year: date.getUTCFullYear(), month: String(date.getUTCMonth() + 1).padStart(2, "0") };
  };
  const month = (ahead: number) => `audit_events_y${monthOf(ahead).year}m${monthOf(ahead).month}`;
  const label = (ahead: number) => `${monthOf(ahead).year}-${monthOf(ahead).month}`;
  await superuser.query(`DROP TABLE IF EXISTS ${month(2)}, ${month(3)}`);
  expect(await app.runtime.services.audit.partitionNames()).not.toContain(month(3));

  const connection = new IORedis(redisUrl(), { maxRetriesPerRequest: null });
  const events = new QueueEvents(QueueName.Maintenance, { connection, prefix: app.runtime.config.redisPrefix });
  try {
    await events.waitUntilReady();
    const job = await queue.add(JOBS[QueueName.Maintenance].ensureAuditPartitions, {});
    const result = await job.waitUntilFinished(events, 15_000);
    expect(result.created).toEqual([label(2), label(3)]);
  } finally {
    await events.close();
    connection.disconnect();
  }
  const partitions = await app.runtime.services.audit.partitionNames();
  for (const ahead of [0, 1, 2, 3]) expect(partitions).toContain(month(ahead));
  expect(partitions).toContain("audit_events_default");
});
