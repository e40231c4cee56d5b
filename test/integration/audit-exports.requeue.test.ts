/**
 * An export or report request whose job never reached the queue (the queue failed between the commit of
 * the request and the enqueue), or whose job was failed for good after its worker died mid-file, is not
 * left QUEUED or RUNNING forever: the worker's sweep, run when a worker starts and every minute, enqueues
 * it again (or retries its job) under the request's own job id, so it is written, and written once.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "../../src/platform/common/logger";
import { AuditExportService, STALE_REQUEST_MS } from "../../src/audit/exports/export.service";
import { DownloadSigner } from "../../src/audit/exports/signed-url";
import { exportJobId, JOBS, QueueName } from "../../workers/queues";
import { WorkerHost } from "../../workers/worker-host";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually } from "../helpers/eventually";

let app: TestApp;
let exportDir: string;
let host: WorkerHost | undefined;
let auditor: { id: string; email: string };
jest.setTimeout(60_000);

beforeAll(async () => {
  exportDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-exports-requeue-"));
  // No worker yet: the test starts one when the stranded requests are in place.
  app = await startTestApp({ env: { EXPORT_DIR: exportDir }, roles: { workers: false } });
  const user = await app.runtime.services.users.create({ email: `auditor-${randomUUID()}@example.test`, role: "auditor" });
  auditor = { id: user.id, email: user.email };
});

afterAll(async () => {
  await host?.stop();
  await app?.stop();
  fs.rmSync(exportDir, { recursive: true, force: true });
});

/** The service as the API runs it, but with a queue that is down when the request has just committed. */
function serviceWithQueueDown(): AuditExportService {
  const { sequelize, services, config } = app.runtime;
  return new AuditExportService(
    sequelize,
    services.repositories.exports,
    services.repositories.audit,
    services.repositories.reports,
    services.audit,
    {
      enqueue: async () => {
        throw new Error("queue unreachable");
      },
      requeue: async () => {
        throw new Error("queue unreachable");
      },
    },
    new DownloadSigner(Buffer.alloc(32), 60),
    config.exports,
  );
}

/** Moves a request's creation (and its start, if it started) `ms` into the past. */
async function backdate(id: string, ms: number): Promise<void> {
  await app.runtime.sequelize.query(
    `UPDATE audit_exports SET created_at = created_at - $2 * interval '1 millisecond',
            started_at = started_at - $2 * interval '1 millisecond' WHERE id = $1`,
    { bind: [id, ms] },
  );
}

async function statusOf(id: string): Promise<string | undefined> {
  return (await app.runtime.services.repositories.exports.find(id))?.status;
}

/** Every job of the exports queue that writes this request, in any state. */
async function writeJobsOf(id: string): Promise<number> {
  const jobs = await app.runtime.queues
    .queue(QueueName.Exports)
    .getJobs(["waiting", "active", "delayed", "prioritized", "completed", "failed"]);
  return jobs.filter((job) => job?.name === JOBS[QueueName.Exports].writeExport && job.data?.exportId === id).length;
}

test("requests stranded by a failed enqueue, a job that failed first or a worker that died twice mid-file are written once a worker starts; recent ones wait", async () => {
  // The caller as the service sees one: the credential it asked through is kept with each request, for the worker's events.
  const actor = {
    userId: auditor.id,
    email: auditor.email,
    role: "auditor",
    credential: { kind: "api_key", id: randomUUID() },
  } as never;
  const broken = serviceWithQueueDown();
  await expect(broken.requestExport(actor, { filter: { from: "2024-01-01", to: "2024-01-31" }, format: "csv" })).rejects.toThrow(
    "queue unreachable",
  );
  await expect(
    broken.requestReport(actor, { template: "authentication", format: "json", from: "2024-01-01", to: "2024-01-31" }),
  ).rejects.toThrow("queue unreachable");
  const stranded = await app.runtime.services.repositories.exports.listFor(auditor.id, { kind: null, limit: 10 });
  expect(stranded.map((record) => record.status)).toEqual(["queued", "queued"]);
  // Both committed (and audited) before the queue failed; a worker that was down for a while comes back.
  for (const record of stranded) await backdate(record.id, STALE_REQUEST_MS + 5_000);
  // A third one, just asked for, also without a job: younger than a sweep period, so not yet stale.
  await expect(broken.requestExport(actor, { filter: { from: "2024-02-01", to: "2024-02-02" }, format: "jsonl" })).rejects.toThrow();
  const [recent] = await app.runtime.services.repositories.exports.listFor(auditor.id, { kind: null, limit: 1 });

  // A fourth one reached the queue, but its job failed before it claimed the request (a worker whose
  // database was unreachable): the job exists, failed, and the request is still queued.
  const created = await app.runtime.services.auditExports.requestExport(actor, {
    filter: { from: "2024-03-01", to: "2024-03-02" },
    format: "json",
  });
  const failing = app.runtime.queues.worker(
    QueueName.Exports,
    async () => {
      throw new Error("database unreachable");
    },
    1,
  );
  await eventually(
    async () => Boolean(await (await app.runtime.queues.queue(QueueName.Exports).getJob(exportJobId(created.id)))?.isFailed()),
    { what: "its job to fail", timeout: 30_000, interval: 100 },
  );
  await failing.close();
  await backdate(created.id, STALE_REQUEST_MS + 5_000);
  stranded.push(await app.runtime.services.repositories.exports.find(created.id).then((record) => record!));
  expect(await statusOf(created.id)).toBe("queued");

  // A fifth one was claimed by a worker that died mid-file, and again on the retry: BullMQ failed the
  // stalled job for good, and the request still says running.
  const claimed = await app.runtime.services.auditExports.requestExport(actor, {
    filter: { from: "2024-04-01", to: "2024-04-02" },
    format: "csv",
  });
  const dying = app.runtime.queues.worker(
    QueueName.Exports,
    async (job) => {
      await app.runtime.services.repositories.exports.start((job.data as { exportId: string }).exportId);
      throw new Error("job stalled more than allowable limit");
    },
    1,
  );
  await eventually(
    async () => Boolean(await (await app.runtime.queues.queue(QueueName.Exports).getJob(exportJobId(claimed.id)))?.isFailed()),
    { what: "its job to fail", timeout: 30_000, interval: 100 },
  );
  await dying.close();
  await backdate(claimed.id, STALE_REQUEST_MS + 5_000);
  expect(await statusOf(claimed.id)).toBe("running");
  stranded.push(await app.runtime.services.repositories.exports.find(claimed.id).then((record) => record!));

  host = new WorkerHost(app.runtime.queues, { services: app.runtime.services, logger: createLogger("silent") });
  await host.start();
  for (const record of stranded)
    await eventually(async () => (await statusOf(record.id)) === "completed", {
      what: `${record.id} to complete`,
      timeout: 30_000,
      interval: 100,
    });
  expect(await statusOf(recent.id)).toBe("queued");
  const schedulers = await app.runtime.queues.queue(QueueName.Exports).getJobSchedulers();
  expect(schedulers.find((scheduler) => scheduler.key === "requeue-stale-exports-minutely")).toMatchObject({
    name: JOBS[QueueName.Exports].requeueStaleExports,
    every: 60_000,
  });
  for (const record of stranded) expect(await writeJobsOf(record.id)).toBe(1);
});

test("sweeps at once, and again after the request was written, never give it a second job", async () => {
  const [recent] = await app.runtime.services.repositories.exports.listFor(auditor.id, { kind: null, limit: 1 });
  expect(recent.status).toBe("queued");
  const later = new Date(Date.now() + STALE_REQUEST_MS + 5_000);
  const sweeps = await Promise.all([1, 2, 3].map(() => app.runtime.services.auditExports.requeueStale(later)));
  for (const found of sweeps) expect(found).toBeGreaterThanOrEqual(0);
  expect(sweeps.some((found) => found >= 1)).toBe(true);
  await eventually(async () => (await statusOf(recent.id)) === "completed", {
    what: "the recent request to complete",
    timeout: 30_000,
    interval: 100,
  });
  expect(await app.runtime.services.auditExports.requeueStale(later)).toBe(0);
  expect(await writeJobsOf(recent.id)).toBe(1);
  expect(await app.runtime.queues.queue(QueueName.Exports).getJob(exportJobId(recent.id))).toBeTruthy();
  const completed = await app.runtime.services.audit.list({ eventTypes: ["audit.export.completed"], search: recent.id }, { first: 10 });
  expect(completed.events).toHaveLength(1);
});
