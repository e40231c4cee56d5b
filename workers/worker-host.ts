import type { Job, Worker } from "bullmq";
import { runInAuditContext } from "../src/platform/common/audit-context";
import type { ServiceMetrics } from "../src/platform/metrics/metrics";
import { assistantHandlers } from "./assistant.processor";
import { bankSyncHandlers } from "./bank-sync.processor";
import { exportHandlers } from "./exports.processor";
import { maintenanceHandlers } from "./maintenance.processor";
import type { JobDeps, JobHandlers } from "./job-handlers";
import { CONCURRENCY, JOBS, ON_START, QueueName, SCHEDULES, type QueueBackend } from "./queues";

const HANDLERS: Record<QueueName, JobHandlers> = {
  [QueueName.Maintenance]: maintenanceHandlers,
  [QueueName.Assistant]: assistantHandlers,
  [QueueName.BankSync]: bankSyncHandlers,
  [QueueName.Exports]: exportHandlers,
};

/**
 * Fails fast when a declared job has no handler or a handler serves no declared job: a typo must stop
 * the worker at boot, not strand jobs in a queue.
 */
export function checkHandlers(handlers: Partial<Record<QueueName, JobHandlers>> = HANDLERS): void {
  for (const queue of Object.values(QueueName)) {
    const declared = new Set<string>(Object.values(JOBS[queue]));
    const handled = new Set(Object.keys(handlers[queue] ?? {}));
    for (const job of declared) if (!handled.has(job)) throw new Error(`queue ${queue}: no handler for job ${job}`);
    for (const job of handled) if (!declared.has(job)) throw new Error(`queue ${queue}: handler for undeclared job ${job}`);
  }
}

/** Runs a worker per queue and registers the recurring schedules. */
export class WorkerHost {
  private readonly workers: Worker[] = [];

  constructor(
    private readonly backend: QueueBackend,
    private readonly deps: JobDeps,
    private readonly metrics?: ServiceMetrics,
  ) {}

  async start(): Promise<void> {
    checkHandlers();
    for (const queue of Object.values(QueueName)) {
      const handlers = HANDLERS[queue];
      const worker = this.backend.worker(
        queue,
        async (job) => {
          const handler = handlers[job.name];
          if (!handler) throw new Error(`no handler for ${queue}/${job.name}`);
          // Audit events a job records correlate by the job, as a request's do by its request id.
          const audit = { ipAddress: null, userAgent: null, requestId: `job:${queue}:${job.id}`, sessionId: null };
          return runInAuditContext(audit, () => handler(job, this.deps));
        },
        CONCURRENCY[queue] ?? 2,
      );
      worker.on("failed", (job, error) => this.deps.logger.warn({ queue, job: job?.name, jobId: job?.id, err: error }, "job failed"));
      if (this.metrics) this.countOutcomes(queue, worker, this.metrics);
      // A queue backend that is down (Redis restarting) is reported through the log; BullMQ reconnects by itself.
      worker.on("error", (error) => this.deps.logger.warn({ queue, err: error }, "queue worker error"));
      this.workers.push(worker);
    }
    for (const schedule of SCHEDULES) {
      await this.backend.queue(schedule.queue).upsertJobScheduler(schedule.id, { every: schedule.everyMs }, { name: schedule.job });
    }
    for (const { queue, job } of ON_START) await this.backend.queue(queue).add(job, {});
    // Audit stream delivery is not a queue: consumers' positions live in PostgreSQL, so it goes on while Redis is down.
    this.deps.services.streamPump.start();
    this.deps.services.alertDispatcher.start();
  }

  /** Job outcomes for /metrics: a failure is "retrying" while attempts remain. */
  private countOutcomes(queue: QueueName, worker: Worker, metrics: ServiceMetrics): void {
    const seconds = (job: Job) => (job.processedOn && job.finishedOn ? (job.finishedOn - job.processedOn) / 1000 : null);
    worker.on("completed", (job) => metrics.jobFinished(queue, job.name, "completed", seconds(job)));
    worker.on("failed", (job) => {
      if (!job) return;
      const final = job.attemptsMade >= (job.opts.attempts ?? 1);
      metrics.jobFinished(queue, job.name, final ? "failed" : "retrying", seconds(job));
    });
  }

  /** Stops taking jobs and waits for the running ones to finish. */
  async stop(): Promise<void> {
    await this.deps.services.streamPump.stop();
    await this.deps.services.alertDispatcher.stop();
    await Promise.all(this.workers.map((worker) => worker.close()));
  }
}
