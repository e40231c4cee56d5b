import type { Job, Worker } from "bullmq";
import { runInAuditContext } from "../src/platform/common/audit-context";
import type { ServiceMetrics } from "../src/platform/metrics/metrics";
import type { Services } from "../src/app/services";
import { assistantHandlers } from "./assistant.processor";
import { bankSyncHandlers } from "./bank-sync.processor";
import { exportHandlers } from "./exports.processor";
import { maintenanceHandlers } from "./maintenance.processor";
import type { JobDeps, JobHandlers } from "./job-handlers";
import { CHAIN_CONSUMERS, CONCURRENCY, JOBS, LOOPS, ON_START, QueueName, SCHEDULES, type QueueBackend } from "./queues";

export type Loop = { start(): void; stop(): Promise<void> };
export type LoopHandlers = Record<string, (services: Services) => Loop>;

export const HANDLERS: Record<QueueName, JobHandlers> = {
  [QueueName.Maintenance]: maintenanceHandlers,
  [QueueName.Assistant]: assistantHandlers,
  [QueueName.BankSync]: bankSyncHandlers,
  [QueueName.Exports]: exportHandlers,
};

/**
 * The loops this host runs, by their names in LOOPS; started in this order, stopped in it too (the pump
 * first: its alert evaluator wakes the dispatcher). Audit stream delivery is not a queue: consumers'
 * positions live in PostgreSQL, so it goes on while Redis is down.
 */
export const LOOP_HANDLERS: LoopHandlers = {
  [LOOPS.chainConsumerPump]: (services) => services.streamPump,
  [LOOPS.alertDispatcher]: (services) => services.alertDispatcher,
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

/** What a worker host would run: job handlers per queue, the chain consumers its pump serves (by prefix), its loops. */
export type Runners = { jobs: Partial<Record<QueueName, JobHandlers>>; chainConsumers: string[]; loops: LoopHandlers };

/**
 * checkHandlers for every runner of queues.ts: each declared chain consumer has a plug-in in the pump
 * and each plug-in a declaration; each declared loop a handler here and each handler a declaration.
 */
export function checkRunners(runners: Runners): void {
  checkHandlers(runners.jobs);
  const declared = new Set<string>(Object.values(CHAIN_CONSUMERS));
  const served = new Set(runners.chainConsumers);
  for (const prefix of declared) if (!served.has(prefix)) throw new Error(`no chain consumer handler for prefix ${prefix}`);
  for (const prefix of served) if (!declared.has(prefix)) throw new Error(`chain consumer handler for undeclared prefix ${prefix}`);
  const loops = new Set<string>(Object.values(LOOPS));
  for (const loop of loops) if (!runners.loops[loop]) throw new Error(`loop ${loop}: no handler`);
  for (const loop of Object.keys(runners.loops)) if (!loops.has(loop)) throw new Error(`handler for undeclared loop ${loop}`);
}

/** How often drain() looks at the queues when no job of this process finishes meanwhile. */
const JOB_POLL_MS = 50;

/** Runs a worker per queue, registers the recurring schedules, and runs the loops (LOOPS). */
export class WorkerHost {
  private readonly workers: Worker[] = [];

  constructor(
    private readonly backend: QueueBackend,
    private readonly deps: JobDeps,
    private readonly metrics?: ServiceMetrics,
  ) {}

  async start(): Promise<void> {
    checkRunners({ jobs: HANDLERS, chainConsumers: this.deps.services.streamPump.prefixes, loops: LOOP_HANDLERS });
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
    for (const loop of Object.values(LOOPS)) LOOP_HANDLERS[loop](this.deps.services).start();
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

  /**
   * Resolves once background work has caught up: no job waiting or active in any queue (delayed jobs,
   * schedules and retries in backoff, wait for their time), every event committed so far linked into
   * the audit chain, and the stream pump at rest (ChainConsumerPump.drain). Tests await it instead of
   * sleeping; work still arriving from outside (another process) can make it wait longer.
   */
  async drain(): Promise<void> {
    for (;;) {
      while (!(await this.jobsAtRest())) await this.nextJobSettled();
      await this.deps.services.audit.chainCommitted();
      await this.deps.services.streamPump.drain();
      // Delivery may have queued jobs (and jobs recorded events): done only when both are at rest at once.
      if (await this.jobsAtRest()) return;
    }
  }

  private async jobsAtRest(): Promise<boolean> {
    const counts = await Promise.all(
      Object.values(QueueName).map((queue) =>
        this.backend.queue(queue).getJobCounts("waiting", "active", "prioritized", "waiting-children"),
      ),
    );
    return counts.every((count) => Object.values(count).every((n) => n === 0));
  }

  /** A job finishing on this process's workers, or a short while (a job taken by another process). */
  private nextJobSettled(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        for (const worker of this.workers) {
          worker.off("completed", done);
          worker.off("failed", done);
        }
        resolve();
      };
      const timer = setTimeout(done, JOB_POLL_MS);
      for (const worker of this.workers) {
        worker.on("completed", done);
        worker.on("failed", done);
      }
    });
  }

  /** Stops taking jobs and waits for the running ones to finish. */
  async stop(): Promise<void> {
    // No new job from here on (BullMQ's close stops fetching at once); the running ones finish meanwhile.
    const closing = Promise.all(this.workers.map((worker) => worker.close()));
    this.deps.logger.info("taking no new jobs; finishing the running ones");
    for (const loop of Object.values(LOOPS)) await LOOP_HANDLERS[loop](this.deps.services).stop();
    await closing;
  }
}
