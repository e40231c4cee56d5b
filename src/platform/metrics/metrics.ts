import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Sequelize } from "sequelize";
import { poolStats } from "../db/database";
import type { EventBus } from "../events/event-bus";

const PREFIX = "finance_gateway_";

/**
 * What the gauges read, by shape: the queues (workers/queues.ts) and the audit log's sequencer are
 * above the platform, so they are handed in, not imported.
 */
export type WatchedQueues = {
  names: readonly string[];
  jobCounts(name: string, ...states: string[]): Promise<Record<string, number>>;
};
export type WatchedAuditSequencer = { unchainedBacklog(): Promise<{ events: number; oldestSeconds: number }> };
/** Queue states reported as depth: jobs not finished yet, and failures kept for inspection. */
const QUEUE_STATES = ["waiting", "active", "delayed", "prioritized", "waiting-children", "failed"] as const;
/** Requests: most answer in milliseconds; exports, reports and slow queries take seconds. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300];
/** The bus carries small notices between processes on one network: milliseconds, or trouble. */
const BUS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

export type JobOutcome = "completed" | "failed" | "retrying";

/**
 * The Prometheus metrics of one process (api, worker or both), in a registry of its own: several
 * runtimes in one process (the tests) never share counters. Counters and histograms are updated as
 * things happen; gauges read their backend at scrape time, so an idle process does no work for them.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<"method" | "route" | "status">;
  private readonly httpDuration: Histogram<"method" | "route">;
  private readonly httpInFlight: Gauge;
  private readonly jobs: Counter<"queue" | "job" | "outcome">;
  private readonly jobDuration: Histogram<"queue" | "job">;
  private readonly busLag: Histogram;

  constructor(role: string) {
    this.registry.setDefaultLabels({ role });
    collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    this.httpRequests = new Counter({
      name: `${PREFIX}http_requests_total`,
      help: "HTTP requests answered, by method, route template (never the raw path) and status.",
      labelNames: ["method", "route", "status"],
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: "Time from a request's arrival to the end of its answer, by method and route template.",
      labelNames: ["method", "route"],
      buckets: HTTP_BUCKETS,
      registers: [this.registry],
    });
    this.httpInFlight = new Gauge({
      name: `${PREFIX}http_requests_in_flight`,
      help: "Requests being answered now.",
      registers: [this.registry],
    });
    this.jobs = new Counter({
      name: `${PREFIX}jobs_total`,
      help: "Jobs this process finished, by queue, job and outcome (retrying: failed, another attempt follows).",
      labelNames: ["queue", "job", "outcome"],
      registers: [this.registry],
    });
    this.jobDuration = new Histogram({
      name: `${PREFIX}job_duration_seconds`,
      help: "Time this process spent running a job attempt, by queue and job.",
      labelNames: ["queue", "job"],
      buckets: JOB_BUCKETS,
      registers: [this.registry],
    });
    this.busLag = new Histogram({
      name: `${PREFIX}event_bus_lag_seconds`,
      help: "Age of each event-bus event when it reached this process (publisher's clock to this one's).",
      buckets: BUS_BUCKETS,
      registers: [this.registry],
    });
  }

  requestStarted(): () => void {
    this.httpInFlight.inc();
    return () => this.httpInFlight.dec();
  }

  requestFinished(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }

  jobFinished(queue: string, job: string, outcome: JobOutcome, seconds: number | null): void {
    this.jobs.inc({ queue, job, outcome });
    if (seconds !== null) this.jobDuration.observe({ queue, job }, seconds);
  }

  /** Queue depth by queue and state, read from the queue backend at each scrape. */
  watchQueues(queues: WatchedQueues): void {
    new Gauge({
      name: `${PREFIX}queue_jobs`,
      help: "Jobs in each queue by state (waiting, active, delayed, prioritized, waiting-children, failed).",
      labelNames: ["queue", "state"],
      registers: [this.registry],
      async collect() {
        this.reset();
        await Promise.all(
          queues.names.map(async (name) => {
            const counts = await queues.jobCounts(name, ...QUEUE_STATES);
            for (const state of QUEUE_STATES) this.set({ queue: name, state }, counts[state] ?? 0);
          }),
        );
      },
    });
  }

  watchDatabasePool(sequelize: Sequelize): void {
    new Gauge({
      name: `${PREFIX}db_pool_connections`,
      help: "Database pool connections: max (the limit), open, in_use, idle.",
      labelNames: ["state"],
      registers: [this.registry],
      collect() {
        const stats = poolStats(sequelize);
        this.set({ state: "max" }, stats.max);
        this.set({ state: "open" }, stats.open);
        this.set({ state: "in_use" }, stats.inUse);
        this.set({ state: "idle" }, stats.idle);
      },
    });
    new Gauge({
      name: `${PREFIX}db_pool_waiting`,
      help: "Requests and jobs waiting for a database connection.",
      registers: [this.registry],
      collect() {
        this.set(poolStats(sequelize).waiting);
      },
    });
  }

  watchEventBus(events: EventBus): void {
    const bus = events.observe((age) => this.busLag.observe(age));
    new Gauge({
      name: `${PREFIX}event_bus_pending_publishes`,
      help: "Events this process published that have not left for the bus yet.",
      registers: [this.registry],
      collect() {
        this.set(bus.pendingPublishes());
      },
    });
  }

  /** The audit sequencer's lag: committed events not chain-linked yet (normally 0 between scrapes). */
  watchAuditSequencer(audit: WatchedAuditSequencer): void {
    let backlog: Promise<{ events: number; oldestSeconds: number }> | null = null;
    // Both gauges of one scrape share one query.
    const read = () => (backlog ??= audit.unchainedBacklog().finally(() => setImmediate(() => (backlog = null))));
    new Gauge({
      name: `${PREFIX}audit_unchained_events`,
      help: "Audit events committed but not yet linked into the hash chain.",
      registers: [this.registry],
      async collect() {
        this.set((await read()).events);
      },
    });
    new Gauge({
      name: `${PREFIX}audit_unchained_oldest_seconds`,
      help: "Age of the oldest audit event not yet linked into the hash chain (0 when none waits).",
      registers: [this.registry],
      async collect() {
        this.set((await read()).oldestSeconds);
      },
    });
  }
}

/** The metrics of a runtime: everything it runs is watched; requests and jobs report themselves. */
export function createServiceMetrics(
  role: string,
  parts: { sequelize: Sequelize; queues: WatchedQueues; events: EventBus; audit: WatchedAuditSequencer },
): ServiceMetrics {
  const metrics = new ServiceMetrics(role);
  metrics.watchQueues(parts.queues);
  metrics.watchDatabasePool(parts.sequelize);
  metrics.watchEventBus(parts.events);
  metrics.watchAuditSequencer(parts.audit);
  return metrics;
}
