import { spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CLI, spawnUntilJson } from "../helpers/cli";
import { apiKeyClient } from "../helpers/http";

/**
 * Issue 27: the zero-configuration default (embedded PostgreSQL, no REDIS_URL), stopped the ways a user
 * stops it. A terminal's Ctrl-C signals the whole foreground process group, the embedded PostgreSQL
 * included; SIGTERM reaches the node process alone; a second `start` on the same DATA_DIR is refused.
 * Each stop prints its stop line and exits 0. And the round trip a newcomer makes: start, demo, backup,
 * delete a transaction, Ctrl-C, restore into a new data directory (over the original one is refused),
 * start again: the transaction is back and the audit chain verifies.
 */
jest.setTimeout(240_000);

type Urls = { rest: string; database_url: string };

let work: string;

beforeEach(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "fg-terminal-"));
  // As root, PostgreSQL runs as the postgres user, which must be able to reach the data directories inside.
  fs.chmodSync(work, 0o755);
});

afterEach(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

function envFor(dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    EMBEDDED_POSTGRES_PORT: "0",
  };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  return env;
}

/** `npm start` as from a terminal: npm and everything it starts in one process group (the terminal's foreground group). */
function npmStartInTerminal(env: NodeJS.ProcessEnv) {
  return spawnUntilJson<Urls>(["start", "--ignore-scripts", "--", "--json"], env, "rest", 90_000, "npm", true);
}

/** Sends `signal` (to the process, or with `group` to its whole process group) and waits until every process holding its output has ended. */
async function stop(
  child: ChildProcess,
  signal: NodeJS.Signals,
  group: boolean,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  child.removeAllListeners("exit");
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signalled) => resolve({ code, signal: signalled })),
  );
  const closed = Promise.all([child.stdout!, child.stderr!].map((stream) => new Promise((resolve) => stream.once("close", resolve))));
  process.kill(group ? -child.pid! : child.pid!, signal);
  const result = await exited;
  await closed;
  return result;
}

function cli(args: string[], env: NodeJS.ProcessEnv) {
  const result = spawnSync(process.execPath, [CLI, ...args, "--json"], { env, encoding: "utf8" });
  const last = result.stdout.trim().split("\n").pop() ?? "";
  return { status: result.status, json: last ? JSON.parse(last) : null, stdout: result.stdout, stderr: result.stderr };
}

test("Ctrl-C (SIGINT to the process group) of `npm start`: backup, restore into a new data directory, the deleted transaction is back", async () => {
  const original = path.join(work, "data");
  const env = envFor(original);
  const first = await npmStartInTerminal(env);
  const demo = cli(["demo"], env);
  expect(demo.status).toBe(0);
  const api = apiKeyClient(first.json.rest, demo.json.api_key);
  const page = await api.get("/transactions?per_page=1");
  const transaction = page.body.transactions[0];
  const total = page.body.pagination.total_count;

  const file = path.join(work, "finance.backup");
  expect(cli(["backup", "--out", file], env)).toMatchObject({ status: 0, json: { file } });
  expect((await api.delete(`/transactions/${transaction.id}`)).status).toBe(200);
  expect((await api.get(`/transactions/${transaction.id}`)).status).toBe(404);

  expect(await stop(first.child, "SIGINT", true)).toEqual({ code: 0, signal: null });
  expect(first.output()).toMatch(/finance-gateway stopped \(SIGINT\); embedded PostgreSQL stopped\n$/);
  expect(first.output()).not.toMatch(/57P01|administrator command|at .*\.js:\d+/);
  expect(fs.existsSync(path.join(original, "postgres", "postmaster.pid"))).toBe(false);

  // Over the original data directory: refused, in one line, and nothing changed.
  const over = cli(["restore", file], env);
  expect(over.status).toBe(1);
  expect(over.stdout.trim().split("\n")).toHaveLength(1);
  expect(over.json.error).toMatch(/^the database is not empty \(\d+ tables\): restore into an empty one \(a new DATA_DIR/);

  // Into a new data directory.
  const restoredEnv = envFor(path.join(work, "restored"));
  const restore = cli(["restore", file], restoredEnv);
  expect(restore).toMatchObject({ status: 0, json: { file } });
  const verify = cli(["audit", "verify"], restoredEnv);
  expect(verify).toMatchObject({ status: 0, json: { ok: true, firstBroken: null } });
  expect(verify.json.checked).toBeGreaterThan(0);

  const second = await npmStartInTerminal(restoredEnv);
  const again = apiKeyClient(second.json.rest, demo.json.api_key);
  expect((await again.get(`/transactions/${transaction.id}`)).body).toMatchObject({ id: transaction.id, amount: transaction.amount });
  expect((await again.get("/transactions?per_page=1")).body.pagination.total_count).toBe(total);
  expect(await stop(second.child, "SIGINT", true)).toEqual({ code: 0, signal: null });
  expect(second.output()).toMatch(/finance-gateway stopped \(SIGINT\); embedded PostgreSQL stopped\n$/);

  // The original still holds the state it was stopped in: the transaction deleted.
  const originalAgain = await npmStartInTerminal(env);
  expect((await apiKeyClient(originalAgain.json.rest, demo.json.api_key).get(`/transactions/${transaction.id}`)).status).toBe(404);
  expect(await stop(originalAgain.child, "SIGTERM", false)).toEqual({ code: 0, signal: null });
  expect(originalAgain.output()).toMatch(/finance-gateway stopped \(SIGTERM\); embedded PostgreSQL stopped\n$/);
});

// One data directory for both stops: the second start finds the database made by the first (a fresh
// embedded cluster costs its initdb and migrations, which the first start already proves).
test("a second `start` on the same data directory is refused in one line, the first keeps serving; SIGTERM to node stops it; started again directly, Ctrl-C (SIGINT to the process group) stops it", async () => {
  const dataDir = path.join(work, "data");
  const env = envFor(dataDir);
  const first = await spawnUntilJson<Urls>([CLI, "start", "--json"], env, "rest");
  const port = new URL(first.json.database_url).port;

  const second = spawnSync(process.execPath, [CLI, "start"], { env, encoding: "utf8" });
  expect(second.status).toBe(1);
  expect(second.stdout).toBe("");
  expect(second.stderr).toBe(
    `finance-gateway is already running on DATA_DIR ${dataDir} (its database listens on port ${port}): stop it first, or set DATA_DIR to another folder\n`,
  );
  expect((await fetch(first.json.rest.replace(/\/api\/v1$/, "/readyz"))).status).toBe(200);

  expect(await stop(first.child, "SIGTERM", false)).toEqual({ code: 0, signal: null });
  expect(first.output()).toMatch(/finance-gateway stopped \(SIGTERM\); embedded PostgreSQL stopped\n$/);
  expect(fs.existsSync(path.join(dataDir, "postgres", "postmaster.pid"))).toBe(false);

  const direct = await spawnUntilJson<Urls>([CLI, "start", "--json"], env, "rest", 90_000, process.execPath, true);
  expect(await stop(direct.child, "SIGINT", true)).toEqual({ code: 0, signal: null });
  expect(direct.output()).toMatch(/finance-gateway stopped \(SIGINT\); embedded PostgreSQL stopped\n$/);
  expect(fs.existsSync(path.join(dataDir, "postgres", "postmaster.pid"))).toBe(false);
});
