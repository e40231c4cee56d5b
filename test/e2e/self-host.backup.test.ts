import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { Client } from "pg";
import { loadConfig } from "../../src/platform/config/config";
import { startRuntime, type Runtime } from "../../src/app/runtime";
import { FakeLunchflowServer } from "../fakes/lunchflow-server";
import { waitForSync } from "../helpers/banking";
import { CLI } from "../helpers/cli";
import { adminUrl, redisUrl } from "../helpers/database-urls";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * Issue 16: back up, wipe, restore. Every row comes back identical, the secrets stored encrypted (a
 * bank connection's API key) work again with the key restored from the passphrase-sealed copy in the
 * backup, and the audit chain verifies. Runs the built CLI as a self-hoster would.
 */
jest.setTimeout(120_000);

const BANK_ENV = {
  ALLOW_INSECURE_UPSTREAMS: "true",
  OUTBOUND_ALLOWLIST: "127.0.0.1,::1,localhost",
  BANK_RETRY_BASE_MS: "20",
  BANK_UPSTREAM_TIMEOUT_MS: "1000",
};
const API_KEY = "lf_backup_key_0001";

let lunchflow: FakeLunchflowServer;
let lunchflowUrl: string;
let app: TestApp;
let user: TestUser;
let work: string;
let restored: Runtime | undefined;

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "fg-backup-"));
  lunchflow = new FakeLunchflowServer();
  lunchflowUrl = await lunchflow.start();
  lunchflow.keys.set(API_KEY, "active");
  const today = new Date().toISOString().slice(0, 10);
  lunchflow.accounts = [
    {
      id: 7,
      name: "Joint account",
      institution_name: "Sparkasse",
      provider: "gocardless",
      status: "ACTIVE",
      balance: { amount: 1520.4, currency: "EUR" },
      transactions: [
        { id: "b-1", amount: -42.5, currency: "EUR", date: today, merchant: "Bakery", description: "Bread", isPending: false },
        { id: "b-2", amount: 1800, currency: "EUR", date: today, merchant: "Employer", description: "Salary", isPending: false },
      ],
      holdings: null,
    },
  ];
  app = await startTestApp({ env: { ...BANK_ENV, DATA_DIR: path.join(work, "data") }, roles: { api: true, workers: true } });
  user = await createUser(app.runtime.services);
});

afterAll(async () => {
  await restored?.stop();
  await app?.stop();
  await lunchflow?.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

async function withClient<T>(url: string, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Row count and a digest of every row of every table: equal digests mean equal contents. */
function snapshot(url: string): Promise<Record<string, string>> {
  return withClient(url, async (client) => {
    const { rows: tables } = await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`,
    );
    const result: Record<string, string> = {};
    for (const { name } of tables) {
      const { rows } = await client.query(
        `SELECT count(*) AS n, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS digest FROM "${name}" t`,
      );
      result[name] = `${rows[0].n}:${rows[0].digest}`;
    }
    return result;
  });
}

function cli(args: string[], env: Record<string, string>) {
  const result = spawnSync(process.execPath, [CLI, ...args, "--json"], {
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    encoding: "utf8",
  });
  return { status: result.status, json: JSON.parse(result.stdout.trim().split("\n").pop() ?? "null"), stderr: result.stderr };
}

test("backup, wipe, restore: every row, every secret and the audit chain come back", async () => {
  const api = apiKeyClient(app.url, user.key);
  const connected = await api.graphql(`mutation ($k: String!, $u: String) { connectLunchflow(apiKey: $k, baseUrl: $u) { id } }`, {
    k: API_KEY,
    u: lunchflowUrl,
  });
  const connectionId = connected.body.data.connectLunchflow.id;
  expect(await waitForSync(app.runtime.services, connectionId)).toMatchObject({ status: "completed", createdCount: 2 });
  await api.post("/api/v1/merchants", { merchant: { name: "Corner Bakery" } });
  await app.runtime.services.audit.settle();
  await app.runtime.stop();
  const before = await snapshot(app.database.url);
  expect(Number(before.transactions.split(":")[0])).toBe(2);
  expect(Number(before.audit_events.split(":")[0])).toBeGreaterThan(0);

  const passphrase = path.join(work, "passphrase");
  fs.writeFileSync(passphrase, "correct horse battery staple\n");
  const file = path.join(work, "finance.backup");
  const backup = cli(["backup", "--out", file, "--passphrase-file", passphrase], {
    DATABASE_URL: app.database.url,
    DATA_DIR: path.join(work, "data"),
  });
  expect(backup).toMatchObject({ status: 0, json: { file, includesKey: true, tables: Object.keys(before).length - 1 } });
  // Secrets stay encrypted in the file; the file is readable by its owner only.
  const content = zlib.gunzipSync(fs.readFileSync(file)).toString("utf8");
  expect(content).not.toContain(API_KEY);
  expect(fs.statSync(file).mode & 0o077).toBe(0);

  // Wipe: the database is dropped and created again, empty; the old DATA_DIR (and its key) is gone.
  await withClient(adminUrl(), async (client) => {
    await client.query(`DROP DATABASE ${app.database.name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${app.database.name} TEMPLATE template0`);
  });
  fs.rmSync(path.join(work, "data"), { recursive: true });
  const dataDir = path.join(work, "restored");
  const env = { DATABASE_URL: app.database.url, DATA_DIR: dataDir };

  // A wrong passphrase is refused before anything is written.
  fs.writeFileSync(path.join(work, "wrong"), "not the passphrase");
  const refused = cli(["restore", file, "--passphrase-file", path.join(work, "wrong")], env);
  expect(refused).toMatchObject({ status: 1, json: { error: expect.stringMatching(/^wrong passphrase/) } });
  expect(Object.keys(await snapshot(app.database.url))).toEqual([]);

  const restore = cli(["restore", file, "--passphrase-file", passphrase], env);
  expect(restore).toMatchObject({ status: 0, json: { keyRestored: path.join(dataDir, "encryption-key") } });
  expect(await snapshot(app.database.url)).toEqual(before);

  // Restoring again into the now full database is refused.
  expect(cli(["restore", file], env)).toMatchObject({ status: 1, json: { error: expect.stringMatching(/database is not empty/) } });

  const verify = cli(["audit", "verify"], env);
  expect(verify).toMatchObject({ status: 0, json: { ok: true, firstBroken: null } });
  expect(verify.json.checked).toBe(Number(before.audit_events.split(":")[0]));

  // The restored service decrypts the stored API key and syncs with it; the user's API key still works.
  const config = loadConfig({
    ...BANK_ENV,
    ...env,
    REDIS_URL: redisUrl(),
    REDIS_PREFIX: `fgbackup_${process.pid}`,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    DATABASE_POOL_MAX: "5",
  });
  restored = await startRuntime(config, { api: true, workers: true });
  const again = apiKeyClient(restored.url!, user.key);
  const requestsBefore = lunchflow.http.requestsTo(/\/transactions$/).length;
  const sync = await again.graphql(`mutation ($id: ID!) { syncBankConnection(id: $id) { id } }`, { id: connectionId });
  expect(sync.body.errors).toBeUndefined();
  expect(await waitForSync(restored.services, connectionId)).toMatchObject({ status: "completed" });
  const requests = lunchflow.http.requestsTo(/\/transactions$/);
  expect(requests.length).toBeGreaterThan(requestsBefore);
  expect(requests[requests.length - 1].headers["x-api-key"]).toBe(API_KEY);
});
