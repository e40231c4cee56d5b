import { spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CLI, spawnUntilJson } from "../helpers/cli";
import { apiKeyClient } from "../helpers/http";

/**
 * The promise of the README: with nothing configured, `finance-gateway start` runs on embedded
 * PostgreSQL with queues on PostgreSQL, `finance-gateway demo` (in another process, while the
 * service runs) prints working keys, SIGTERM exits 0, and the data survives a restart.
 * Runs the built CLI (`npm test` builds first), exactly as a user would.
 */
jest.setTimeout(120_000);

let dataDir: string;
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-zero-config-"));
  env = { ...process.env, DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn" };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
});

afterAll(() => {
  fs.rmSync(dataDir, { recursive: true, force: true });
});

type Started = {
  child: ChildProcess;
  urls: { rest: string; graphql: string; websocket: string; openapi: string; database: string; queues: string };
};

async function start(): Promise<Started> {
  const { child, json } = await spawnUntilJson<Started["urls"]>([CLI, "start", "--json"], env, "rest");
  return { child, urls: json };
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners("exit");
    child.on("exit", (code) => resolve(code));
    child.kill("SIGTERM");
  });
}

test("starts with zero configuration, serves the demo, stops cleanly and keeps its data", async () => {
  const first = await start();
  expect(first.urls).toMatchObject({ database: "embedded", queues: "postgres" });
  expect(first.urls.websocket).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/graphql$/);
  const base = first.urls.rest.replace(/\/api\/v1$/, "");
  expect((await fetch(`${base}/readyz`)).status).toBe(200);

  const demo = spawnSync(process.execPath, [CLI, "demo", "--json"], { env, encoding: "utf8" });
  expect(demo.status).toBe(0);
  const lines = demo.stdout.trim().split("\n");
  expect(lines).toHaveLength(1);
  const keys = JSON.parse(lines[0]);
  expect(keys).toEqual({
    email: expect.any(String),
    api_key: expect.stringMatching(/^fgk_/),
    read_api_key: expect.stringMatching(/^fgk_/),
    family_id: expect.any(String),
    transactions: expect.any(Number),
  });
  expect(keys.transactions).toBeGreaterThan(1500);

  const api = apiKeyClient(first.urls.rest, keys.api_key);
  const page = await api.get("/transactions?per_page=5");
  expect(page.status).toBe(200);
  expect(page.body.pagination.total_count).toBe(keys.transactions);

  expect(await stop(first.child)).toBe(0);

  const second = await start();
  const again = await apiKeyClient(second.urls.rest, keys.api_key).get("/transactions?per_page=5");
  expect(again.body.pagination.total_count).toBe(keys.transactions);
  expect(await stop(second.child)).toBe(0);
});
