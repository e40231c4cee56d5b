import { Writable } from "node:stream";
import { createLogger } from "../../src/platform/common/logger";
import { createUser } from "../helpers/fixtures";
import { eventually } from "../helpers/eventually";
import { apiKeyClient, client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

/** What an operator relies on: structured logs that carry request ids and never credentials, and readiness. */
let app: TestApp;
const lines: string[] = [];
beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      done();
    },
  });
  app = await startTestApp({ logger: createLogger("info", sink) });
});
afterAll(() => app.stop());

test("every request is one JSON line (method, path, status, time, request id) without headers, and credentials never reach the log", async () => {
  const user = await createUser(app.runtime.services);
  const api = apiKeyClient(`${app.url}/api/v1`, user.key);
  await api.get("/merchants?page=1&per_page=5", { "x-request-id": "trace-me-123", authorization: "Bearer some-secret-token" });
  await client(`${app.url}/api/v1`, { "x-api-key": "fgk_wrong_key_value" }).get("/merchants");
  // A request's line is written as its response finishes, which can be just after the client has read it.
  const entries = await eventually(
    () => {
      const parsed = lines.map((line) => JSON.parse(line));
      return parsed.filter((entry) => entry.path === "/api/v1/merchants" && entry.status).length >= 2 && parsed;
    },
    { what: "both requests' log lines" },
  );
  const traced = entries.filter((entry) => entry.requestId === "trace-me-123");
  expect(traced).toHaveLength(1);
  expect(traced[0]).toMatchObject({
    level: 30,
    method: "GET",
    path: "/api/v1/merchants",
    status: 200,
    msg: expect.stringMatching(/^GET \/api\/v1\/merchants 200 [\d.]+ms \[trace-me-123\]$/),
  });
  expect(traced[0].ms).toEqual(expect.any(Number));
  expect(Object.keys(traced[0]).sort()).toEqual(
    ["level", "method", "ms", "msg", "path", "requestId", "status", "time", "pid", "hostname"].sort(),
  );
  expect(JSON.stringify(entries)).not.toMatch(/headers|user-agent/i);
  const everything = lines.join("\n");
  expect(everything).not.toContain(user.key);
  expect(everything).not.toContain("fgk_wrong_key_value");
  expect(everything).not.toContain("some-secret-token");
});

test("/readyz answers 503 naming what is down, and /healthz stays 200", async () => {
  expect((await client(app.url).get("/readyz")).body).toEqual({ status: "ready" });
  await app.runtime.queues.close();
  const ready = await client(app.url).get("/readyz");
  expect(ready.status).toBe(503);
  expect(ready.body).toEqual({ status: "unavailable", down: ["queue"] });
  expect((await client(app.url).get("/healthz")).status).toBe(200);
});
