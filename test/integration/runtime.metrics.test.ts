import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { Client } from "pg";
import { QueueName } from "../../workers/queues";
import { waitForReply } from "../helpers/chats";
import { CLI, spawnUntilJson, stopChild } from "../helpers/cli";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, client } from "../helpers/http";
import { histogramCount, parseMetrics, type Scrape } from "../helpers/metrics";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually } from "../helpers/eventually";

/**
 * /metrics as Prometheus reads it (parsed by a parser that is not ours): requests by route template,
 * queue depth and job outcomes, the database pool, the event bus's lag and the audit sequencer's, on
 * the api role (loopback only without a token) and on a worker-only process (its own port, a token).
 */
const TOKEN = "metrics-token-for-tests-0123456789";
let app: TestApp;
let worker: { child: ChildProcess; metrics: string };
let user: TestUser;

beforeAll(async () => {
  app = await startTestApp({ roles: { api: true, workers: true } });
  user = await createUser(app.runtime.services, { aiEnabled: true });
  // A real `finance-gateway worker` process on the same database and queues.
  const { config } = app.runtime;
  const env = {
    ...process.env,
    DATABASE_URL: app.database.url,
    REDIS_URL: config.redisUrl,
    REDIS_PREFIX: config.redisPrefix,
    HOST: "127.0.0.1",
    METRICS_PORT: "0",
    METRICS_TOKEN: TOKEN,
    DATABASE_POOL_MAX: "3",
    LOG_LEVEL: "warn",
  };
  const started = await spawnUntilJson<{ metrics: string }>([CLI, "worker", "--json"], env, "roles");
  worker = { child: started.child, metrics: started.json.metrics };
});
afterAll(async () => {
  await stopChild(worker?.child);
  await app?.stop();
});

async function scrape(url = `${app.url}/metrics`, headers: Record<string, string> = {}): Promise<Scrape> {
  const response = await fetch(url, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseMetrics(await response.text());
}

test("requests are counted and timed by route template, never by raw path", async () => {
  const api = apiKeyClient(`${app.url}/api/v1`, user.key);
  const [first, second] = [randomUUID(), randomUUID()];
  expect((await api.get(`/transactions/${first}`)).status).toBe(404);
  expect((await api.get(`/transactions/${second}`)).status).toBe(404);
  expect((await api.get("/accounts")).status).toBe(200);
  expect((await client(`${app.url}/api/v1`).get("/accounts")).status).toBe(401);
  expect((await client(app.url).get(`/no-such-page/${first}`)).status).toBe(404);
  const graphql = await fetch(`${app.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": user.key },
    body: JSON.stringify({ query: "{ accounts { id } }" }),
  });
  expect(graphql.status).toBe(200);

  const metrics = await scrape();
  const requests = "finance_gateway_http_requests_total";
  expect(metrics.value(requests, { method: "GET", route: "/api/v1/transactions/{id}", status: "404" })).toBe(2);
  expect(metrics.value(requests, { method: "GET", route: "/api/v1/accounts", status: "200" })).toBe(1);
  // Refused before authentication, still under its route.
  expect(metrics.value(requests, { method: "GET", route: "/api/v1/accounts", status: "401" })).toBe(1);
  expect(metrics.value(requests, { method: "POST", route: "/graphql", status: "200" })).toBeGreaterThanOrEqual(1);
  expect(metrics.samples(requests, { route: "unmatched", status: "404" }).length).toBeGreaterThanOrEqual(1);
  const registry = app.runtime.metrics.registry;
  expect(
    await histogramCount(registry, "finance_gateway_http_request_duration_seconds", { method: "GET", route: "/api/v1/transactions/{id}" }),
  ).toBe(2);
  expect(metrics.samples(requests).every((sample) => sample.labels?.role === "all")).toBe(true);
  const routes = new Set(metrics.samples(requests).map((sample) => sample.labels!.route));
  for (const route of routes)
    expect(route === "unmatched" || route === "/graphql" || route === "/metrics" || route.startsWith("/api/v1/")).toBe(true);
  expect(JSON.stringify(metrics.families)).not.toContain(first);
  expect(metrics.value("finance_gateway_http_requests_in_flight")).toBe(1); // this scrape
});

test("queue depth by queue and state, and job outcomes by queue", async () => {
  const delayed = { queue: "exports", state: "delayed" };
  // The recurring jobs wait as delayed jobs too: what counts is the one added here.
  const before = (await scrape()).value("finance_gateway_queue_jobs", delayed);
  await app.runtime.queues.queue(QueueName.Exports).add("expire-exports", {}, { delay: 600_000, jobId: "metrics-delayed" });
  const api = apiKeyClient(`${app.url}/api/v1`, user.key);
  const chat = (await api.post("/chats", { title: "Metrics" })).body;
  const message = (await api.post(`/chats/${chat.id}/messages`, { content: "What are my account balances?" })).body;
  await waitForReply(api, chat.id, message.id);

  const metrics = await scrape();
  expect(metrics.value("finance_gateway_queue_jobs", delayed)).toBe(before + 1);
  for (const queue of Object.values(QueueName)) {
    expect(
      metrics
        .samples("finance_gateway_queue_jobs", { queue })
        .map((sample) => sample.labels!.state)
        .sort(),
    ).toEqual(["active", "delayed", "failed", "prioritized", "waiting", "waiting-children"].sort());
  }
  // The reply ran once, in this process or in the worker process: each counts what it ran.
  const workerMetrics = await scrape(worker.metrics, { authorization: `Bearer ${TOKEN}` });
  const replies = { queue: "assistant", job: "reply", outcome: "completed" };
  const ran = [metrics, workerMetrics].map((scraped) => scraped.samples("finance_gateway_jobs_total", replies).length);
  expect(ran.sort()).toEqual([0, 1]);
  const runner = metrics.samples("finance_gateway_jobs_total", replies).length ? metrics : workerMetrics;
  expect(runner.value("finance_gateway_jobs_total", replies)).toBe(1);
  expect(runner.families.find((family) => family.name === "finance_gateway_job_duration_seconds")?.type).toBe("HISTOGRAM");
});

test("the database pool, the event bus's lag and the audit sequencer's backlog", async () => {
  const blocker = new Client({ connectionString: app.database.url });
  await blocker.connect();
  try {
    // The sequencer takes this lock before linking: held here, a new event stays committed but unlinked.
    await blocker.query("BEGIN");
    await blocker.query("SELECT pg_advisory_xact_lock(hashtextextended('finance-gateway:audit-chain', 0))");
    await createUser(app.runtime.services);
    // The oldest unlinked event's age is reported in whole seconds: wait until it has one.
    const held = await eventually(async () => {
      const scraped = await scrape();
      expect(scraped.value("finance_gateway_audit_unchained_oldest_seconds")).toBeGreaterThanOrEqual(1);
      return scraped;
    });
    expect(held.value("finance_gateway_audit_unchained_events")).toBeGreaterThanOrEqual(1);
    expect(held.value("finance_gateway_db_pool_connections", { state: "max" })).toBe(5);
    expect(held.value("finance_gateway_db_pool_connections", { state: "in_use" })).toBeGreaterThanOrEqual(1);
    expect(held.value("finance_gateway_db_pool_waiting")).toBe(0);
    await blocker.query("COMMIT");
  } finally {
    await blocker.end();
  }
  // Linked, then published: the sequencer publishes each event it links, so a scrape right after the
  // queue empties can still count those publishes in flight (3 of them once, on a loaded CI machine).
  const after = await eventually(async () => {
    const scraped = await scrape();
    expect(scraped.value("finance_gateway_audit_unchained_events")).toBe(0);
    expect(scraped.value("finance_gateway_event_bus_pending_publishes")).toBe(0);
    return scraped;
  });
  expect(after.value("finance_gateway_audit_unchained_oldest_seconds")).toBe(0);
  // Each linked event is published on the bus and comes back to this process: its age is observed.
  await eventually(async () =>
    expect(await histogramCount(app.runtime.metrics.registry, "finance_gateway_event_bus_lag_seconds")).toBeGreaterThanOrEqual(1),
  );
  expect(after.families.find((family) => family.name === "finance_gateway_event_bus_lag_seconds")?.type).toBe("HISTOGRAM");
  expect(after.value("finance_gateway_process_resident_memory_bytes")).toBeGreaterThan(0);
});

test("without METRICS_TOKEN only direct loopback clients read /metrics; a forwarded request is refused", async () => {
  for (const header of ["x-forwarded-for", "forwarded", "x-real-ip"]) {
    const refused = await fetch(`${app.url}/metrics`, { headers: { [header]: "203.0.113.9" } });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: "forbidden", message: expect.stringContaining("loopback") });
  }
});

test("a worker-only process serves /metrics on METRICS_PORT, to the bearer of METRICS_TOKEN only", async () => {
  const url = worker.metrics;
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  const wrong: Array<Record<string, string>> = [{}, { authorization: "Bearer wrong-token-wrong-token" }, { authorization: TOKEN }];
  for (const headers of wrong) {
    const refused = await fetch(url, { headers });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    expect(await refused.json()).toEqual({ error: "unauthorized", message: expect.stringContaining("METRICS_TOKEN") });
  }
  const metrics = await scrape(url, { authorization: `Bearer ${TOKEN}` });
  expect(metrics.samples("finance_gateway_queue_jobs").every((sample) => sample.labels?.role === "worker")).toBe(true);
  expect(metrics.value("finance_gateway_db_pool_connections", { state: "max" })).toBe(3);
  expect((await fetch(url.replace(/metrics$/, "elsewhere"))).status).toBe(404);
});
