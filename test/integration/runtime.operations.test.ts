import { Writable } from "node:stream";
import { createLogger } from "../../src/common/logger";
import { createUser } from "../helpers/fixtures";
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

test("every request is logged as JSON with its request id, and credentials never reach the log", async () => {
  const user = await createUser(app.runtime.services);
  const api = apiKeyClient(`${app.url}/api/v1`, user.key);
  await api.get("/merchants", { "x-request-id": "trace-me-123", authorization: "Bearer some-secret-token" });
  await client(`${app.url}/api/v1`, { "x-api-key": "fgk_wrong_key_value" }).get("/merchants");
  await new Promise((resolve) => setTimeout(resolve, 100));
  const entries = lines.map((line) => JSON.parse(line));
  const traced = entries.find((entry) => entry.req?.id === "trace-me-123");
  expect(traced).toMatchObject({ req: { method: "GET", url: "/api/v1/merchants" }, res: { statusCode: 200 } });
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
