import { spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { CLI, spawnUntilJson } from "../helpers/cli";

/**
 * A self-hoster's first day (issue 16), with the real `npm start`: signalling the npm process stops
 * the service and its embedded PostgreSQL and says so; the embedded database keeps a fixed port
 * (the next free one, printed, when it is taken); `db url` and `db psql` reach it.
 */
jest.setTimeout(120_000);

let dataDir: string;
let env: NodeJS.ProcessEnv;

// One data directory for the file: the first start makes its database (initdb and migrations), the later
// ones start what the earlier stops left, which also proves each stop left it whole.
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-self-host-"));
});

beforeEach(() => {
  env = { ...process.env, DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn", LOG_FORMAT: "json" };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
});

afterAll(() => {
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

/** `npm start` as the README says, without its build step (the suite has built already). */
function npmStart() {
  return spawnUntilJson<{ rest: string; database_url: string }>(["start", "--ignore-scripts", "--", "--json"], env, "rest", 90_000, "npm");
}

/** Resolves once every process holding the output pipes (npm, the service, PostgreSQL) has ended. */
function outputClosed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    let open = 2;
    const done = () => --open === 0 && resolve();
    child.stdout!.once("close", done);
    child.stderr!.once("close", done);
  });
}

async function expectEverythingStopped(httpPort: number, databasePort: number): Promise<void> {
  expect(await listening(httpPort)).toBe(false);
  expect(await listening(databasePort)).toBe(false);
  expect(fs.existsSync(path.join(dataDir, "postgres", "postmaster.pid"))).toBe(false);
}

test("SIGTERM to `npm start` drains and stops the service and the embedded database, which kept its port", async () => {
  // The configured port is taken: the next free one is used and printed.
  const wanted = await freePort();
  const squatter = net.createServer().listen(wanted, "127.0.0.1");
  await new Promise((resolve) => squatter.once("listening", resolve));
  env.EMBEDDED_POSTGRES_PORT = String(wanted);
  try {
    const { child, json, output } = await npmStart();
    const databasePort = Number(new URL(json.database_url).port);
    expect(databasePort).toBeGreaterThan(wanted);
    expect(json.database_url).toBe(`postgres://postgres@127.0.0.1:${databasePort}/finance`);
    expect(output()).toContain(`port ${wanted} is taken; the embedded PostgreSQL uses ${databasePort} (set EMBEDDED_POSTGRES_PORT)`);

    // `db url` prints the full connection string, which works while the service runs.
    const url = spawnSync(process.execPath, [CLI, "db", "url"], { env, encoding: "utf8" });
    expect(url.status).toBe(0);
    const printed = url.stdout.trim();
    expect(printed).toMatch(new RegExp(`^postgres://postgres:[^@]+@127\\.0\\.0\\.1:${databasePort}/finance$`));
    const client = new Client({ connectionString: printed });
    await client.connect();
    expect((await client.query("SELECT count(*)::int AS n FROM schema_migrations")).rows[0].n).toBeGreaterThan(0);
    await client.end();

    // `db psql` opens psql on it (here reading its commands from standard input).
    const psql = spawnSync(process.execPath, [CLI, "db", "psql"], { env, encoding: "utf8", input: "SELECT 40 + 2 AS answer;\n" });
    expect(psql.stderr).toBe("");
    expect(psql.stdout).toMatch(/answer\s*\n-+\s*\n\s*42/);

    const httpPort = Number(new URL(json.rest).port);
    const closed = outputClosed(child);
    child.removeAllListeners("exit");
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    process.kill(child.pid!, "SIGTERM");
    expect(await exited).toBe(0);
    await closed;
    expect(output()).toMatch(/finance-gateway stopped \(SIGTERM\); embedded PostgreSQL stopped/);
    await expectEverythingStopped(httpPort, databasePort);
  } finally {
    squatter.close();
  }
});

test("when npm itself is killed outright, the service notices and stops too", async () => {
  env.EMBEDDED_POSTGRES_PORT = "0";
  const { child, json, output } = await npmStart();
  const httpPort = Number(new URL(json.rest).port);
  const databasePort = Number(new URL(json.database_url).port);
  const closed = outputClosed(child);
  child.removeAllListeners("exit");
  process.kill(child.pid!, "SIGKILL");
  await closed;
  expect(output()).toMatch(/finance-gateway stopped \(npm exited\); embedded PostgreSQL stopped/);
  await expectEverythingStopped(httpPort, databasePort);
});

test("SIGINT to the `npx finance-gateway start` process itself stops the service and the embedded database", async () => {
  env.EMBEDDED_POSTGRES_PORT = "0";
  // npx runs `sh -c 'finance-gateway start'` and passes SIGINT to that shell alone, which holds it.
  const { child, json, output } = await spawnUntilJson<{ rest: string; database_url: string }>(
    ["finance-gateway", "start", "--json"],
    env,
    "rest",
    90_000,
    "npx",
  );
  const httpPort = Number(new URL(json.rest).port);
  const databasePort = Number(new URL(json.database_url).port);
  const closed = outputClosed(child);
  child.removeAllListeners("exit");
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  process.kill(child.pid!, "SIGINT");
  // npm ends as its shell does: by the SIGINT it was sent, once the service has stopped.
  expect(await exited).toEqual({ code: null, signal: "SIGINT" });
  await closed;
  expect(output()).toMatch(/finance-gateway stopped \(npm interrupted\); embedded PostgreSQL stopped/);
  await expectEverythingStopped(httpPort, databasePort);
});

test("`db url` names DATABASE_URL when one is set, without starting anything", () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), "fg-self-host-empty-"));
  try {
    const url = spawnSync(process.execPath, [CLI, "db", "url", "--json"], {
      env: { ...env, DATA_DIR: empty, DATABASE_URL: "postgres://finance@db.internal:5432/finance" },
      encoding: "utf8",
    });
    expect(url.status).toBe(0);
    expect(JSON.parse(url.stdout)).toEqual({ url: "postgres://finance@db.internal:5432/finance" });
    expect(fs.readdirSync(empty)).toEqual([]);
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
});
