/**
 * The load generator of bench/rest.bench.ts, forked as its own process so autocannon never competes
 * with the servers under test for their event loop. It takes one job at a time over IPC, runs
 * autocannon for a bounded duration against 127.0.0.1 only, and answers with the figures the bench
 * needs. It exits when its parent goes away.
 */
import autocannon from "autocannon";

export type LoadJob = {
  id: number;
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  connections: number;
  /** Seconds. */
  duration: number;
};

export type LoadResult = {
  requestsPerSecond: number;
  /** autocannon's mean of per-second samples, for reference. */
  requestsAverage: number;
  total: number;
  durationSeconds: number;
  latencyP50: number;
  latencyP99: number;
  latencyMax: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  bytesPerRequest: number;
};

export type LoadReply = { id: number; ok: true; result: LoadResult } | { id: number; ok: false; error: string };

async function run(job: LoadJob): Promise<LoadResult> {
  const target = new URL(job.url);
  if (target.hostname !== "127.0.0.1") throw new Error(`refusing to load ${target.host}: the bench only targets 127.0.0.1`);
  if (!(job.duration > 0 && job.duration <= 120)) throw new Error(`duration must be in (0, 120] seconds, got ${job.duration}`);
  if (!(job.connections >= 1 && job.connections <= 256)) throw new Error(`connections must be in [1, 256], got ${job.connections}`);
  const result = await autocannon({
    url: job.url,
    method: job.method,
    headers: job.headers,
    body: job.body,
    connections: job.connections,
    duration: job.duration,
    timeout: 10,
  });
  const total = result.requests.total;
  return {
    requestsPerSecond: result.duration > 0 ? total / result.duration : 0,
    requestsAverage: result.requests.average,
    total,
    durationSeconds: result.duration,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
    latencyMax: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    bytesPerRequest: total > 0 ? result.throughput.total / total : 0,
  };
}

if (require.main === module) {
  if (!process.send) {
    console.error("load-generator.js is forked by rest.bench.js; it does not run alone");
    process.exit(2);
  }
  process.on("message", (job: LoadJob) => {
    run(job).then(
      (result) => process.send!({ id: job.id, ok: true, result } satisfies LoadReply),
      (error: unknown) =>
        process.send!({ id: job.id, ok: false, error: error instanceof Error ? error.message : String(error) } satisfies LoadReply),
    );
  });
  process.on("disconnect", () => process.exit(0));
}
