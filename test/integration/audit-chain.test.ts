/**
 * The audit log is the record administrators trust: an event commits or rolls back with its change,
 * rows cannot be changed by the application, and any row altered, deleted or inserted behind the
 * application's back is found, with its position, by `audit verify` (CLI and GraphQL).
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { QueueEvents } from "bullmq";
import IORedis from "ioredis";
import { Client } from "pg";
import { runInAuditContext } from "../../src/audit/audit-context";
import type { AuditEventInput } from "../../src/audit/audit.service";
import { JOBS, QueueName } from "../../workers/queues";
import { redisUrl } from "../helpers/database-urls";
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

async function rows(): Promise<Array<{ id: string; seq: string; action: string | null; prev_hash: Buffer | null; hash: Buffer }>> {
  return (await superuser.query("SELECT id, seq, action, prev_hash, hash FROM audit_events ORDER BY seq")).rows;
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

test("an event records the request's context and commits with the change it describes", async () => {
  const event = await record({ changes: { name: { old: "a", new: "b" }, apiKey: { old: "k1", new: "k2" } } });
  expect(event).toMatchObject({ ipAddress: "10.1.2.3", userAgent: "jest", requestId: "req-chain", severity: "info", seq: "1" });
  expect(event.prevHash).toBeNull();
  const [stored] = (await superuser.query("SELECT changes, host(ip_address) AS ip FROM audit_events WHERE id = $1", [event.id])).rows;
  expect(stored).toEqual({ changes: { name: { old: "a", new: "b" }, apiKey: { old: "[REDACTED]", new: "[REDACTED]" } }, ip: "10.1.2.3" });
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
  const next = await record();
  expect(next.seq).toBe(String(before.length + 1));
  expect((await services.audit.verify()).ok).toBe(true);
});

test("an unknown event type cannot be recorded", async () => {
  await expect(record({ type: "user.hacked" as never })).rejects.toThrow("unknown audit event type user.hacked");
});

test("the application cannot update or delete events", async () => {
  const { sequelize } = app.runtime;
  await expect(sequelize.query("UPDATE audit_events SET error = 'x'")).rejects.toThrow("append-only");
  await expect(sequelize.query("DELETE FROM audit_events")).rejects.toThrow("append-only");
});

test("concurrent writers keep the chain linear", async () => {
  const { sequelize, services } = app.runtime;
  const writers = Array.from({ length: 12 }, (_, writer) =>
    sequelize.transaction(async (transaction) => {
      for (let i = 0; i < 4; i += 1) {
        await services.audit.record(transaction, { type: "auth.token.issued", action: `writer-${writer}-${i}` });
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
      }
    }),
  );
  await Promise.all(writers);
  const chain = await rows();
  chain.forEach((row, index) => {
    expect(row.seq).toBe(String(index + 1));
    if (index > 0) expect(row.prev_hash).toEqual(chain[index - 1].hash);
  });
  expect(new Set(chain.map((row) => row.prev_hash?.toString("hex"))).size).toBe(chain.length);
  expect(await app.runtime.services.audit.verify()).toEqual({ ok: true, checked: chain.length, firstBroken: null });
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

  test("a deleted row", async () => {
    const target = (await rows())[6];
    await superuser.query("CREATE TEMP TABLE saved AS SELECT * FROM audit_events WHERE id = $1", [target.id]);
    await tamper("DELETE FROM audit_events WHERE id = $1", [target.id]);
    const report = await app.runtime.services.audit.verify();
    expect(report).toMatchObject({ ok: false, firstBroken: { kind: "deleted", seq: target.seq } });
    expect(report.firstBroken!.message).toContain(`events ${target.seq} to ${target.seq} are missing`);
    await tamper(`INSERT INTO audit_events (id, seq, occurred_at, event_type, severity, user_id, user_email, provider, action,
        resource_type, resource_id, resource_label, ip_address, user_agent, session_id, request_id, changes, error, prev_hash, hash)
      SELECT id, seq, occurred_at, event_type, severity, user_id, user_email, provider, action, resource_type, resource_id,
        resource_label, ip_address, user_agent, session_id, request_id, changes, error, prev_hash, hash FROM saved`);
    await superuser.query("DROP TABLE saved");
  });

  test("a row inserted out of band, in the middle or at the end", async () => {
    const chain = await rows();
    const forged = "00000000-0000-4000-8000-00000000f0f0";
    const insert = (seq: string) =>
      superuser.query(
        `INSERT INTO audit_events (id, seq, occurred_at, event_type, severity, action, prev_hash, hash)
         VALUES ($1, $2, now(), 'user.deleted', 'warning', 'forged', $3, $4)`,
        [forged, seq, chain[2].hash, Buffer.alloc(32)],
      );
    await insert(chain[3].seq);
    expect(await app.runtime.services.audit.verify()).toMatchObject({ ok: false, firstBroken: { kind: "inserted", seq: chain[3].seq } });
    await tamper("DELETE FROM audit_events WHERE id = $1", [forged]);

    await insert(String(chain.length + 1));
    expect(await app.runtime.services.audit.verify()).toMatchObject({
      ok: false,
      firstBroken: { kind: "inserted", seq: String(chain.length + 1) },
    });
    await tamper("DELETE FROM audit_events WHERE id = $1", [forged]);
  });

  test("a row rewritten with a recomputed hash breaks the link to its successor", async () => {
    const chain = await rows();
    const target = chain[2];
    await tamper(
      `UPDATE audit_events SET action = 'rewritten', hash = audit_event_hash(id, seq, occurred_at, event_type, severity, user_id,
         user_email, provider, 'rewritten', resource_type, resource_id, resource_label, ip_address, user_agent, session_id,
         request_id, changes, error, prev_hash) WHERE id = $1`,
      [target.id],
    );
    expect(await app.runtime.services.audit.verify()).toMatchObject({ ok: false, firstBroken: { kind: "relinked", seq: chain[3].seq } });
    await tamper("UPDATE audit_events SET action = $2, hash = $3 WHERE id = $1", [target.id, target.action, target.hash]);
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
