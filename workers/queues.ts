import IORedis from "ioredis";
import { createPostgresBackend, Queue, Worker, withBackend, type JobsOptions, type Processor } from "bullmq";
import type { Config } from "../src/platform/config/config";

/**
 * Every background runner of the service, in one place: queues, jobs and job options, schedules, and
 * the runners that are not jobs (CHAIN_CONSUMERS, LOOPS). This is also the only module that knows
 * whether BullMQ runs on Redis (REDIS_URL set) or on its PostgreSQL backend (zero-config start).
 */
export enum QueueName {
  Maintenance = "maintenance",
  Assistant = "assistant",
  BankSync = "bank-sync",
  Exports = "exports",
}

export const JOBS = {
  [QueueName.Maintenance]: {
    pruneApiKeys: "prune-api-keys",
    ensureAuditPartitions: "ensure-audit-partitions",
    chainAuditEvents: "chain-audit-events",
    sweepExpiredSessions: "sweep-expired-sessions",
    pruneStreamDeliveries: "prune-stream-deliveries",
    runAuditRetention: "run-audit-retention",
    pruneAlertWindows: "prune-alert-windows",
  },
  [QueueName.Assistant]: { reply: "reply", expireStaleReplies: "expire-stale-replies" },
  [QueueName.BankSync]: { syncConnection: "sync-connection", refreshConnections: "refresh-connections" },
  [QueueName.Exports]: {
    writeExport: "write-export",
    expireExports: "expire-exports",
    requeueStaleExports: "requeue-stale-exports",
    writeFamilyExport: "write-family-export",
  },
} as const satisfies Record<QueueName, Record<string, string>>;

/** Retry transient failures a few times with growing waits; keep a bounded history for inspection. */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: "exponential", delay: 1000 },
  removeOnComplete: { count: 1000 },
  removeOnFail: { count: 5000 },
};

/**
 * One sync job per connection at a time: the job id is the connection's, so enqueueing while one waits
 * or runs is a no-op, and finished jobs are removed so the id is free again (runs are kept in
 * bank_sync_runs). One attempt: the HTTP layer already retries transient failures 3 times, and job
 * retries on top would multiply requests against the provider's quota.
 */
export const BANK_SYNC_JOB_OPTIONS: JobsOptions = { attempts: 1, removeOnComplete: true, removeOnFail: true };

export function bankSyncJobId(connectionId: string): string {
  return `sync-${connectionId}`;
}

/**
 * One job per export or report request (the id is the request's, so a second enqueue is a no-op). One
 * attempt: the service records a failure itself; a worker that dies mid-file loses its lock and the
 * job is run again from the start, as a stalled job.
 */
export const EXPORT_JOB_OPTIONS: JobsOptions = { attempts: 1, removeOnComplete: { count: 1000 }, removeOnFail: { count: 1000 } };

export function exportJobId(exportId: string): string {
  return `export-${exportId}`;
}

/** A family export's job (src/finance/exports/): one per request, its options those of an audit export's. */
export function familyExportJobId(exportId: string): string {
  return `family-export-${exportId}`;
}

/** Recurring jobs. The scheduler id makes registration idempotent across processes and restarts. */
export const SCHEDULES = [
  { id: "prune-api-keys-daily", queue: QueueName.Maintenance, job: JOBS[QueueName.Maintenance].pruneApiKeys, everyMs: 24 * 60 * 60 * 1000 },
  {
    id: "expire-stale-replies-minutely",
    queue: QueueName.Assistant,
    job: JOBS[QueueName.Assistant].expireStaleReplies,
    everyMs: 60 * 1000,
  },
  // Only enqueues: the handler picks the connections whose BANK_SYNC_INTERVAL_HOURS has passed.
  { id: "bank-sync-refresh", queue: QueueName.BankSync, job: JOBS[QueueName.BankSync].refreshConnections, everyMs: 10 * 60 * 1000 },
  {
    id: "ensure-audit-partitions-daily",
    queue: QueueName.Maintenance,
    job: JOBS[QueueName.Maintenance].ensureAuditPartitions,
    everyMs: 24 * 60 * 60 * 1000,
  },
  // The safety net of the audit chain: events whose process died between commit and linking.
  {
    id: "chain-audit-events-minutely",
    queue: QueueName.Maintenance,
    job: JOBS[QueueName.Maintenance].chainAuditEvents,
    everyMs: 60 * 1000,
  },
  // Only removes files whose expiry has passed (how long they live is EXPORT_RETENTION_HOURS), and family
  // export zips whose export row is gone (a family reset).
  { id: "expire-exports", queue: QueueName.Exports, job: JOBS[QueueName.Exports].expireExports, everyMs: 15 * 60 * 1000 },
  // The safety net of export and report requests, and of family exports: one whose job never reached the
  // queue (the queue was down right after its commit) is enqueued again under its own job id, so none is
  // written twice.
  {
    id: "requeue-stale-exports-minutely",
    queue: QueueName.Exports,
    job: JOBS[QueueName.Exports].requeueStaleExports,
    everyMs: 60 * 1000,
  },
  // The audit stream's delivery log keeps STREAM_DELIVERY_LOG_DAYS of attempts.
  {
    id: "prune-stream-deliveries-daily",
    queue: QueueName.Maintenance,
    job: JOBS[QueueName.Maintenance].pruneStreamDeliveries,
    everyMs: 24 * 60 * 60 * 1000,
  },
  // Months past the database window leave into verified archives; archives past their tier are deleted.
  // Hourly, so a run interrupted by a restart is resumed soon; a run with nothing to do reads a few rows.
  {
    id: "run-audit-retention-hourly",
    queue: QueueName.Maintenance,
    job: JOBS[QueueName.Maintenance].runAuditRetention,
    everyMs: 60 * 60 * 1000,
  },
  // Alert windows long past their end (no window lasts more than 7 days) are only state nobody reads.
  {
    id: "prune-alert-windows-daily",
    queue: QueueName.Maintenance,
    job: JOBS[QueueName.Maintenance].pruneAlertWindows,
    everyMs: 24 * 60 * 60 * 1000,
  },
  {
    id: "sweep-expired-sessions",
    queue: QueueName.Maintenance,
    job: JOBS[QueueName.Maintenance].sweepExpiredSessions,
    everyMs: 5 * 60 * 1000,
  },
] as const;

/**
 * One-off jobs each worker process enqueues when it starts, before the first scheduled run: a request
 * left without a job while no worker ran is picked up at once, not a schedule period later.
 */
export const ON_START = [{ queue: QueueName.Exports, job: JOBS[QueueName.Exports].requeueStaleExports }] as const;

/**
 * Jobs run at once per worker process (default 2). Assistant replies and bank syncs mostly wait on a
 * model server or a bank provider, so more of them run side by side.
 */
export const CONCURRENCY: Partial<Record<QueueName, number>> = { [QueueName.Assistant]: 8, [QueueName.BankSync]: 4 };

/**
 * The worker role's runners that are not BullMQ jobs. Chain consumers read the committed audit stream,
 * each with its position and lease in audit_stream_consumers; the delivery engine's pump
 * (src/audit/delivery/) leases them and hands each to the plug-in whose prefix starts its id. Loops are
 * the in-process runners the worker host starts and stops. Declared here, like the jobs, and checked
 * at boot (worker-host.ts): a declared runner nothing serves, or a served one nothing declares, stops
 * the worker.
 */
export const CHAIN_CONSUMERS = {
  /** Webhooks and SIEMs, one consumer per destination (`destination:<id>`): src/audit/streaming/destination.handler.ts. */
  streamDestinations: "destination:",
  /** The alert evaluator, one consumer (`alerts:evaluator`, created by migration 0010): src/audit/alerts/alert.evaluator.ts. */
  alertEvaluator: "alerts:",
} as const;

export const LOOPS = {
  /** Leases due chain consumers and runs their turns (src/audit/delivery/chain-consumer.pump.ts). */
  chainConsumerPump: "chain-consumer-pump",
  /** Sends what alert firings committed; alert_deliveries is its outbox (src/audit/alerts/alert.dispatcher.ts). */
  alertDispatcher: "alert-dispatcher",
} as const;

export type ReplyJobData = { messageId: string; attempt: number };

/**
 * One job per user message and attempt: enqueueing the same reply twice is a no-op because the id is
 * taken, and a retry (a new attempt) gets a fresh id instead of colliding with the finished job.
 */
export function replyJobId(messageId: string, attempt: number): string {
  return `reply-${messageId}-${attempt}`;
}

/** Model errors worth retrying (429, 5xx, timeouts) back off exponentially from `delayMs`. */
export function replyJobOptions(messageId: string, attempt: number, attempts: number, delayMs: number): JobsOptions {
  return { jobId: replyJobId(messageId, attempt), attempts, backoff: { type: "exponential", delay: delayMs } };
}

export type QueueBackend = {
  kind: "redis" | "postgres";
  queue(name: QueueName): Queue;
  worker(name: QueueName, processor: Processor, concurrency: number): Worker;
  /** Resolves when the backend answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
};

export function createQueueBackend(config: Config, databaseUrl: string): QueueBackend {
  return config.redisUrl
    ? redisBackend(config.redisUrl, config.redisPrefix, config.jobLockMs)
    : postgresBackend(databaseUrl, config.jobLockMs);
}

/**
 * A crashed worker's job is found stalled and handed to another worker after about one lock period.
 * A job may stall a few times before it is failed: BullMQ's default (once) failed a reply job for
 * good when, after its first worker was killed, the worker that took it over was starved of CPU for
 * longer than the lock on a busy machine, and the reply was lost. Every handler already had to be safe
 * to run again after one stall (a message has one reply, by a unique index); more stalls ask nothing new.
 */
function lockOptions(lockMs: number) {
  return { lockDuration: lockMs, stalledInterval: lockMs, maxStalledCount: 5 };
}

function redisBackend(url: string, prefix: string, lockMs: number): QueueBackend {
  // BullMQ's blocking commands need maxRetriesPerRequest: null.
  const connection = new IORedis(url, { maxRetriesPerRequest: null, lazyConnect: false });
  // ioredis reconnects by itself (Redis restarting); workers report their own errors (worker-host.ts).
  connection.on("error", () => undefined);
  const queues = new Map<QueueName, Queue>();
  let closed = false;
  return {
    kind: "redis",
    queue(name) {
      let queue = queues.get(name);
      if (!queue) {
        queue = new Queue(name, { connection, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
        queues.set(name, queue);
      }
      return queue;
    },
    worker: (name, processor, concurrency) => new Worker(name, processor, { connection, prefix, concurrency, ...lockOptions(lockMs) }),
    async ping() {
      // A ping on a closed ioredis connection would quietly reconnect it.
      if (closed) throw new Error("queue backend is closed");
      await connection.ping();
    },
    async close() {
      closed = true;
      await Promise.all([...queues.values()].map((queue) => queue.close()));
      connection.disconnect();
    },
  };
}

function postgresBackend(databaseUrl: string, lockMs: number): QueueBackend {
  const pg = withBackend(createPostgresBackend);
  const connection = { connectionString: databaseUrl, migrate: true };
  const queues = new Map<QueueName, Queue>();
  return {
    kind: "postgres",
    queue(name) {
      let queue = queues.get(name);
      if (!queue) {
        queue = new pg.Queue(name, { connection, defaultJobOptions: DEFAULT_JOB_OPTIONS }) as unknown as Queue;
        queues.set(name, queue);
      }
      return queue;
    },
    worker: (name, processor, concurrency) =>
      new pg.Worker(name, processor, { connection, concurrency, ...lockOptions(lockMs) }) as unknown as Worker,
    async ping() {
      await this.queue(QueueName.Maintenance).getJobCounts("waiting");
    },
    async close() {
      await Promise.all([...queues.values()].map((queue) => queue.close()));
    },
  };
}
