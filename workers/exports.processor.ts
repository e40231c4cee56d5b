import type { JobHandlers } from "./job-handlers";

/**
 * Audit exports and reports: one job writes one requested file; the schedules remove expired ones and
 * enqueue again the requests whose job never reached the queue. Family exports: one job writes one zip;
 * the expiry schedule also removes the zips whose export a family reset removed.
 */
export const exportHandlers: JobHandlers = {
  "write-export": async (job, { services }) => {
    const { exportId } = job.data as { exportId: string };
    const record = await services.auditExports.run(exportId);
    return record && { status: record.status, rows: record.rowsWritten };
  },
  "expire-exports": async (_job, { services }) => ({
    expired: await services.auditExports.expire(),
    familyExportFilesRemoved: await services.familyExports.removeOrphanFiles(),
  }),
  "requeue-stale-exports": async (_job, { services }) => ({
    requeued: await services.auditExports.requeueStale(),
    familyExports: await services.familyExports.requeueStale(),
  }),
  "write-family-export": async (job, { services }) => {
    const { exportId } = job.data as { exportId: string };
    const record = await services.familyExports.run(exportId);
    return record && { status: record.status, fileBytes: record.fileBytes };
  },
};
