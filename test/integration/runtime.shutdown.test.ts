import { Client } from "pg";
import { createUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

/** Stopping (what SIGTERM does) lets a request that is already running finish before the pool closes. */
test("stopping drains an in-flight request before closing the database", async () => {
  const app: TestApp = await startTestApp();
  const user = await createUser(app.runtime.services);
  const api = apiKeyClient(`${app.url}/api/v1`, user.key);
  const blocker = new Client({ connectionString: app.database.url });
  await blocker.connect();
  try {
    // Hold a lock the merchants list needs, so the request is provably in flight when stop begins.
    await blocker.query("BEGIN");
    await blocker.query("LOCK TABLE merchants IN ACCESS EXCLUSIVE MODE");
    const inFlight = api.get("/merchants");
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stopped = app.runtime.stop();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await blocker.query("COMMIT");
    const response = await inFlight;
    await stopped;
    expect(response.status).toBe(200);
    expect(response.body.merchants).toEqual([]);
  } finally {
    await blocker.end();
    await app.stop();
  }
});
