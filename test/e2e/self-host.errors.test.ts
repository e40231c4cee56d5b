import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { CLI } from "../helpers/cli";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";

/**
 * Issue 16, "errors that name the fix": each runtime failure a self-hoster meets on the first day is
 * one line on stderr naming what failed and the setting to change, and exit status 1.
 */
jest.setTimeout(60_000);

let database: TestDatabase;
let dataDir: string;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());
beforeEach(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-errors-"));
});
afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

function start(env: Record<string, string | undefined>) {
  const merged: NodeJS.ProcessEnv = { ...process.env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "warn", DATA_DIR: dataDir, ...env };
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete merged[key];
  const result = spawnSync(process.execPath, [CLI, "start"], { env: merged, encoding: "utf8", timeout: 45_000 });
  return { status: result.status, stderr: result.stderr.trim(), stdout: result.stdout };
}

function expectOneLine(result: ReturnType<typeof start>, pattern: RegExp): void {
  expect(result.status).toBe(1);
  expect(result.stderr.split("\n")).toHaveLength(1);
  expect(result.stderr).toMatch(pattern);
}

function withUrl(change: (url: URL) => void): string {
  const url = new URL(database.url);
  change(url);
  return url.toString();
}

test("port in use", async () => {
  const squatter = net.createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => squatter.once("listening", resolve));
  const port = (squatter.address() as net.AddressInfo).port;
  try {
    expectOneLine(
      start({ DATABASE_URL: database.url, PORT: String(port) }),
      new RegExp(
        `^port ${port} is already in use on 127\\.0\\.0\\.1: stop the other process or set PORT to a free port \\(0 picks one; see docs/settings\\.md#port\\)$`,
      ),
    );
  } finally {
    squatter.close();
  }
});

test("database unreachable, or refusing the user or the database name", () => {
  expectOneLine(
    start({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/finance" }),
    /^cannot reach the database at 127\.0\.0\.1:1 \(connection refused\): check DATABASE_URL and that PostgreSQL runs there \(see docs\/operating\.md#the-database\)$/,
  );
  expectOneLine(
    start({ DATABASE_URL: withUrl((url) => (url.username = "nobody_here")) }),
    /^the database at [^ ]+ refused user nobody_here \(.*nobody_here.*\): check the user and password in DATABASE_URL \(see docs\/operating\.md#the-database\)$/,
  );
  expectOneLine(
    start({ DATABASE_URL: withUrl((url) => (url.pathname = "/no_such_database_here")) }),
    /^the database at [^ ]+ answers but database "no_such_database_here" does not exist: create it, or name an existing one in DATABASE_URL \(see docs\/settings\.md#database_url\)$/,
  );
});

test("Redis unreachable", () => {
  expectOneLine(
    start({ DATABASE_URL: database.url, REDIS_URL: "redis://127.0.0.1:1" }),
    /^cannot reach Redis at 127\.0\.0\.1:1 \(connection refused\): check REDIS_URL, or unset it to run the queues on PostgreSQL \(see docs\/settings\.md#redis_url\)$/,
  );
});

test("embedded data directory owned by another user, or locked by another process", async () => {
  if (process.getuid?.() === 0) {
    // As root PostgreSQL runs as `postgres`, which must own the database folder.
    fs.mkdirSync(path.join(dataDir, "postgres"));
    fs.chownSync(path.join(dataDir, "postgres"), 65534, 65534);
    expectOneLine(
      start({ DATABASE_URL: undefined }),
      new RegExp(
        `^${path.join(dataDir, "postgres")} is owned by another user \\(uid 65534, expected \\d+\\): .*set DATA_DIR to a folder you own \\(see docs/operating\\.md#the-database\\)$`,
      ),
    );
    fs.rmSync(path.join(dataDir, "postgres"), { recursive: true });
  } else {
    expectOneLine(
      start({ DATABASE_URL: undefined, DATA_DIR: "/" }),
      /^\/ is owned by another user \(uid 0, expected \d+\): .*set DATA_DIR/,
    );
  }

  // A postmaster.pid naming a live process (this one) that serves nothing on its port.
  const closed = net.createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => closed.once("listening", resolve));
  const port = (closed.address() as net.AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  fs.mkdirSync(path.join(dataDir, "postgres"), { recursive: true });
  if (process.getuid?.() === 0) fs.chownSync(path.join(dataDir, "postgres"), ...postgresIds());
  fs.writeFileSync(path.join(dataDir, "postgres", "postmaster.pid"), `${process.pid}\n${dataDir}\n0\n${port}\n`);
  expectOneLine(
    start({ DATABASE_URL: undefined }),
    /^the embedded database in .* is locked by another process \(see its postmaster\.pid\) that does not answer on port \d+: stop that process, or set DATA_DIR to another folder \(see docs\/operating\.md#the-database\)$/,
  );
});

function postgresIds(): [number, number] {
  const line = fs
    .readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("postgres:"));
  if (!line) return [0, 0];
  const [, , uid, gid] = line.split(":");
  return [Number(uid), Number(gid)];
}
