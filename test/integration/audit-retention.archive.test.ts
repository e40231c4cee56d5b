/**
 * Retention end to end on a real database and archive folder: a month past the window is archived (one
 * file per tier), verified and dropped; the archive is searchable with live search's filters; a
 * restored month is identical to the archived one, event by event, and searchable; `verify` checks
 * archives and live data as one chain and detects an altered archive, a missing archive and an altered
 * checkpoint; an archive past its tier is deleted and the chain still verifies; and a run interrupted
 * after any step loses nothing.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { Client } from "pg";
import { DirectoryStore } from "../../src/audit/retention/archive-store";
import { checkpointSigner } from "../../src/audit/retention/checkpoint-key";
import { RetentionRepository } from "../../src/audit/retention/retention.repository";
import { RetentionService, type RetentionStep } from "../../src/audit/retention/retention.service";
import { monthRows, seedMonth } from "../helpers/retention";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually, within } from "../helpers/eventually";

let app: TestApp;
let superuser: Client;
let dataDir: string;
beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-retention-"));
  app = await startTestApp({ roles: { api: false, workers: false }, env: { DATA_DIR: dataDir } });
  superuser = new Client({ connectionString: app.database.url });
  await superuser.connect();
});
afterAll(async () => {
  await superuser.end();
  await app.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const services = () => app.runtime.services;
const archiveDir = () => app.runtime.config.retention.archiveDir;
const exists = async (table: string) => (await superuser.query("SELECT to_regclass($1) IS NOT NULL AS e", [table])).rows[0].e as boolean;

test("a month past the window is archived per tier, searchable, restorable identically, and verified as one chain", async () => {
  await services().retention.updateSettings({
    databaseDays: 30,
    defaultTier: "extended",
    categoryTiers: [{ pattern: "auth.*", tier: "compliance" }],
  });
  await seedMonth(superuser, "2024-01", 24);
  await seedMonth(superuser, "2024-02", 6);
  await services().audit.chainCommitted();
  const before = await monthRows(superuser, "2024-01");

  // The run as of April 2024: the months are past the 30-day window, no archive past its tier yet.
  const outcome = (await services().retention.run(new Date("2024-04-15T00:00:00Z")))!;
  expect(outcome.error).toBeNull();
  const january = outcome.moved.find((month) => month.month === "2024-01")!;
  expect(january.rows).toBe(24);
  expect(january.archives.map((archive) => [archive.tier, archive.rows]).sort()).toEqual([
    ["compliance", 12],
    ["extended", 12],
  ]);
  expect(await exists("audit_events_y2024m01")).toBe(false);
  expect((await superuser.query("SELECT count(*)::int AS n FROM audit_chain WHERE occurred_at < '2024-03-01'")).rows[0].n).toBe(0);
  expect(fs.existsSync(path.join(archiveDir(), "2024/01/audit-2024-01-compliance.jsonl.gz.manifest.json"))).toBe(true);
  const settingsEvent = await superuser.query(
    "SELECT count(*)::int AS n FROM audit_events WHERE event_type IN ('audit.retention.updated', 'audit.archive.created', 'audit.checkpoint.signed')",
  );
  expect(settingsEvent.rows[0].n).toBe(1 + 2 + 2);

  const report = await services().retention.verify();
  expect(report).toMatchObject({ ok: true, firstBroken: null });
  expect(report.checked).toBeGreaterThanOrEqual(30);
  expect(report.removedByRetention).toBe(0);

  // Search inside the archives with live search's filters, paged.
  const archives = (await services().retention.archives()).filter((archive) => archive.manifest.month === "2024-01");
  const ids = archives.map((archive) => archive.id);
  const filter = { eventTypes: ["auth.login.failed"], ipAddress: "10.9.2.*" };
  const first = await services().retention.search(ids, filter, { first: 2 });
  expect(first.events).toHaveLength(2);
  expect(first.hasMore).toBe(true);
  const rest = await services().retention.search(ids, filter, { first: 50, after: first.nextCursor });
  const found = [...first.events, ...rest.events];
  expect(found).toHaveLength(6);
  expect(found.every((event) => event.eventType === "auth.login.failed" && event.ipAddress!.startsWith("10.9.2."))).toBe(true);
  const byEmail = await services().retention.search(ids, { search: "person3@example.com" }, {});
  expect(byEmail.events.map((event) => event.user?.email)).toEqual(["person3@example.com"]);

  // Restore: identical event by event (every stored column, the generated search text included), and searchable.
  expect(await services().retention.restore("2024-01")).toEqual({ month: "2024-01", rows: 24 });
  expect(await monthRows(superuser, "2024-01")).toEqual(before);
  const live = await services().audit.list({ search: "person3@example.com", from: "2024-01-01", to: "2024-01-31" }, {});
  expect(live.events.map((event) => event.user?.email)).toEqual(["person3@example.com"]);
  expect((await services().retention.verify()).ok).toBe(true);
  await services().retention.release("2024-01");
  expect(await exists("audit_events_y2024m01")).toBe(false);
  expect((await services().retention.verify()).ok).toBe(true);

  // An altered archive: one character of one event.
  const file = path.join(archiveDir(), "2024/01/audit-2024-01-extended.jsonl.gz");
  const original = fs.readFileSync(file);
  fs.writeFileSync(file, gzipSync(Buffer.from(gunzipSync(original).toString("utf8").replace("Old", "0ld"))));
  expect((await services().retention.verify()).firstBroken).toMatchObject({ kind: "altered" });
  // A missing archive.
  fs.rmSync(file);
  expect((await services().retention.verify()).firstBroken).toMatchObject({ kind: "deleted", message: expect.stringMatching(/missing/) });
  fs.writeFileSync(file, original);
  expect((await services().retention.verify()).ok).toBe(true);
  // An altered checkpoint: its hash changed in the database (the signature no longer holds).
  const [checkpoint] = (await superuser.query("SELECT month, note FROM audit_checkpoints ORDER BY month LIMIT 1")).rows;
  const lines = checkpoint.note.split("\n");
  const forged = [lines[0], lines[1], Buffer.alloc(32, 1).toString("base64"), ...lines.slice(3)].join("\n");
  await superuser.query("UPDATE audit_checkpoints SET note = $1, root_hash = $2 WHERE month = $3", [
    forged,
    Buffer.alloc(32, 1),
    checkpoint.month,
  ]);
  expect((await services().retention.verify()).firstBroken).toMatchObject({
    kind: "altered",
    message: expect.stringMatching(/checkpoint/),
  });
  // A checkpoint kept elsewhere still holds against the log; the forged one does not.
  expect((await services().retention.verify(checkpoint.note)).firstBroken).toMatchObject({ kind: "altered" });
  await superuser.query("UPDATE audit_checkpoints SET note = $1, root_hash = decode($2, 'base64') WHERE month = $3", [
    checkpoint.note,
    lines[2],
    checkpoint.month,
  ]);
  expect((await services().retention.verify(checkpoint.note)).ok).toBe(true);

  // Time passes: the extended tier's archives go (recorded), compliance stays, the chain still verifies.
  const later = (await services().retention.run(new Date("2025-03-15T00:00:00Z")))!;
  expect(later.deleted.map((archive) => `${archive.month} ${archive.tier}`).sort()).toEqual(["2024-01 extended", "2024-02 extended"]);
  expect(fs.existsSync(file)).toBe(false);
  const deletedEvents = await superuser.query("SELECT count(*)::int AS n FROM audit_events WHERE event_type = 'audit.archive.deleted'");
  expect(deletedEvents.rows[0].n).toBe(2);
  const after = await services().retention.verify();
  expect(after).toMatchObject({ ok: true, removedByRetention: 15 });
});

test("a run interrupted after any step leaves the partition or a verified archive, and the next run finishes it", async () => {
  await services().retention.updateSettings({ databaseDays: 30, defaultTier: "compliance", categoryTiers: [] });
  const steps: RetentionStep[] = ["detached", "written", "archived", "dropped"];
  const { sequelize, config } = app.runtime;
  for (const [index, step] of steps.entries()) {
    const month = `2023-0${index + 1}`;
    await seedMonth(superuser, month, 5);
    await services().audit.chainCommitted();
    const before = await monthRows(superuser, month);
    const crashing = new RetentionService(
      sequelize,
      new RetentionRepository(sequelize),
      services().audit,
      services().repositories.audit,
      new DirectoryStore(config.retention.archiveDir),
      checkpointSigner(config.retention),
      config.retention,
      undefined,
      {
        afterStep: (at, label) => {
          if (at === step && label === month) throw new Error(`crash after ${step}`);
        },
      },
    );
    await expect(crashing.run()).rejects.toThrow(`crash after ${step}`);
    const table = `audit_events_y${month.replace("-", "m")}`;
    const stored = (await services().retention.archives()).filter(
      (archive) => archive.manifest.month === month && archive.state === "stored",
    );
    expect((await exists(table)) || stored.reduce((sum, archive) => sum + archive.manifest.rows, 0) === 5).toBe(true);
    expect((await services().retention.verify()).ok).toBe(true);

    await services().retention.run();
    expect(await exists(table)).toBe(false);
    await services().retention.restore(month);
    expect(await monthRows(superuser, month)).toEqual(before);
    await services().retention.release(month);
  }
  expect((await services().retention.verify()).ok).toBe(true);
});

test("a long read of the audit log never holds audit writes up behind retention: detaching gives up, a later run finishes", async () => {
  await services().retention.updateSettings({ databaseDays: 30, defaultTier: "compliance", categoryTiers: [] });
  await seedMonth(superuser, "2023-07", 4);
  await services().audit.chainCommitted();
  // A long read (an export batch, a report): its transaction holds the audit log's shared lock.
  const reader = new Client({ connectionString: app.database.url });
  await reader.connect();
  try {
    await reader.query("BEGIN");
    await reader.query("SELECT count(*) FROM audit_events WHERE occurred_at >= '2023-07-01' AND occurred_at < '2023-08-01'");
    let ran = false;
    const run = services()
      .retention.run(new Date("2023-10-15T00:00:00Z"))
      .finally(() => (ran = true));
    // Once retention waits behind the read for the log's lock, the service records an event: it must not wait for the read to end.
    await eventually(
      async () => {
        const { rows } = await reader.query(
          "SELECT count(*)::int AS waiting FROM pg_locks WHERE NOT granted AND locktype = 'relation' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        );
        return rows[0].waiting > 0 || ran;
      },
      { what: "retention to wait for the audit log's lock" },
    );
    const recorded = app.runtime.sequelize.transaction((transaction) =>
      services().audit.record(transaction, { type: "auth.login.failed", action: "login", error: "recorded during a long read" }),
    );
    await within(recorded, 15_000, "the event recorded during the long read");
    const outcome = (await run)!;
    expect(outcome.error).toBeNull();
    expect(outcome.kept).toContainEqual({
      month: "2023-07",
      reason: "long reads kept the audit log busy; the next run tries again",
      until: null,
    });
    expect(await exists("audit_events_y2023m07")).toBe(true);
  } finally {
    await reader.query("ROLLBACK").catch(() => undefined);
    await reader.end();
  }
  const later = (await services().retention.run(new Date("2023-10-15T01:00:00Z")))!;
  expect(later.moved.map((month) => month.month)).toContain("2023-07");
  expect(await exists("audit_events_y2023m07")).toBe(false);
  expect((await services().retention.verify()).ok).toBe(true);
}, 60_000);

test("an empty month past the window is not archived (no empty archive at boot); the months after it still are", async () => {
  await services().retention.updateSettings({ databaseDays: 30, defaultTier: "compliance", categoryTiers: [] });
  await superuser.query("SELECT audit_create_month_partition('2022-11-01'::date)");
  await seedMonth(superuser, "2022-12", 3);
  await services().audit.chainCommitted();
  const outcome = (await services().retention.run(new Date("2023-03-15T00:00:00Z")))!;
  expect(outcome.error).toBeNull();
  expect(outcome.kept).toContainEqual({ month: "2022-11", reason: "holds no events: nothing to archive", until: null });
  expect(outcome.moved.map((month) => month.month)).toContain("2022-12");
  expect(outcome.moved.map((month) => month.month)).not.toContain("2022-11");
  const months = (await services().retention.archives()).map((archive) => archive.manifest.month);
  expect(months).toContain("2022-12");
  expect(months).not.toContain("2022-11");
  expect((await services().retention.verify()).ok).toBe(true);
}, 60_000);
