import type { JobHandlers } from "./job-handlers";

/** Bank-data sync: one job per connection, and the periodic refresh that only enqueues them. */
export const bankSyncHandlers: JobHandlers = {
  "sync-connection": async (job, { services, logger }) => {
    const { connectionId, trigger } = job.data as { connectionId: string; trigger?: "manual" | "scheduled" };
    const run = await services.bankSync.run(connectionId, { trigger, logger });
    return run && { runId: run.id, status: run.status, created: run.createdCount, updated: run.updatedCount, skipped: run.skippedCount };
  },
  "refresh-connections": async (_job, { services }) => ({ enqueued: await services.banking.refreshDue() }),
};
