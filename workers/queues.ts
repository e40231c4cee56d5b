import IORedis from "ioredis";
import { createPostgresBackend, Queue, Worker, withBackend, type JobsOptions, type Processor } from "bullmq";
import type { Config } from "../src/config/config";

/**
 * Every queue, job and job option of the service, in one place. This is also the only module that
 * knows whether BullMQ runs on Redis (REDIS_URL set) or on its PostgreSQL backend (zero-config start).
 */
export enum QueueName {
  Maintenance = "maintenance",
}

export const JOBS = {
  [QueueName.Maintenance]: {
    pruneApiKeys: "prune-api-keys",
    ensureAuditPartitions: "ensure-audit-partitions",
    sweepExpiredSessions: "sweep-expired-sessions",
  },
} as const satisfies Record<QueueName, Record<string, string>>;

/** Retry transient failures a few times with growing waits; keep a bounded history for inspection. */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: "exponential", delay: 1000 },
  removeOnComplete: { count: 1000 },
  removeOnFail: { count: 5000 },
};

/** Recurring jobs. The scheduler id makes registration idempotent across processes and restarts. */
export const SCHEDULES = [
  { id: "prune-api-keys-daily", queue: QueueName.Maintenance, job: JOBS[QueueName.Maintenance].pruneApiKeys, everyMs: 24 * 60 * 60 * 1000 },
  {
    id: "ensure-audit-partitions-daily",
    queue: QueueName.Maintenance,
    job: JOBS[QueueName.Maintenance].ensureAuditPartitions,
    everyMs: 24 * 60 * 60 * 1000,
  },
  {
    id: "sweep-expired-sessions",
    queue: QueueName.Maintenance,
    job: JOBS[QueueName.Maintenance].sweepExpiredSessions,
    everyMs: 5 * 60 * 1000,
  },
] as const;

export type QueueBackend = {
  kind: "redis" | "postgres";
  queue(name: QueueName): Queue;
  worker(name: QueueName, processor: Processor, concurrency: number): Worker;
  /** Resolves when the backend answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
};

export function createQueueBackend(config: Config, databaseUrl: string): QueueBackend {
  return config.redisUrl ? redisBackend(config.redisUrl, config.redisPrefix) : postgresBackend(databaseUrl);
}

function redisBackend(url: string, prefix: string): QueueBackend {
  // BullMQ's blocking commands need maxRetriesPerRequest: null.
  const connection = new IORedis(url, { maxRetriesPerRequest: null, lazyConnect: false });
  const queues = new Map<QueueName, Queue>();
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
    worker: (name, processor, concurrency) => new Worker(name, processor, { connection, prefix, concurrency }),
    async ping() {
      await connection.ping();
    },
    async close() {
      await Promise.all([...queues.values()].map((queue) => queue.close()));
      connection.disconnect();
    },
  };
}

function postgresBackend(databaseUrl: string): QueueBackend {
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
    worker: (name, processor, concurrency) => new pg.Worker(name, processor, { connection, concurrency }) as unknown as Worker,
    async ping() {
      await this.queue(QueueName.Maintenance).getJobCounts("waiting");
    },
    async close() {
      await Promise.all([...queues.values()].map((queue) => queue.close()));
    },
  };
}
