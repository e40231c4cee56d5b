import net from "node:net";
import { Client } from "pg";
import { createUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually } from "../helpers/eventually";

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

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
    await eventually(async () => {
      const { rows } = await blocker.query(
        "SELECT count(*)::int AS waiting FROM pg_locks WHERE NOT granted AND relation = 'merchants'::regclass AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      );
      expect(rows[0].waiting).toBe(1);
    });
    const stopped = app.runtime.stop();
    // Stopping has begun once the server takes no new connection; the request is still waiting on the lock.
    const { port } = new URL(app.url);
    await eventually(async () => expect(await accepts(Number(port))).toBe(false));
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
