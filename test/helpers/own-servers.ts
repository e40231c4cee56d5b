import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { eventually } from "./eventually";

/**
 * PostgreSQL and Redis servers of a test's own, on free loopback ports in temporary directories: the
 * drills that kill or restart a database do it to these, never to the machine's services.
 */

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once something accepts connections on the port, or rejects after `timeoutMs`. */
export async function waitForPort(port: number, what: string, timeoutMs = 15_000): Promise<void> {
  await eventually(
    () =>
      new Promise<boolean>((resolve) => {
        const socket = net.connect(port, "127.0.0.1", () => {
          socket.destroy();
          resolve(true);
        });
        socket.on("error", () => resolve(false));
      }),
    { what: `${what} to listen on port ${port}`, timeout: timeoutMs },
  );
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

export type OwnRedis = {
  url: string;
  port: number;
  /** Starts the server (again) on the same port and directory; what it saved is loaded back. */
  start(): Promise<void>;
  /** SIGTERM: Redis writes its append-only file and exits, as on a restart by an operator. SIGKILL: it just dies. */
  stop(signal?: "SIGTERM" | "SIGKILL"): Promise<void>;
  /** Stops the server and removes its directory. */
  remove(): Promise<void>;
};

/**
 * A redis-server of the test's own. `persistent` keeps an append-only file, so a restart keeps what
 * was queued (as a production Redis for BullMQ is configured); without it a restart starts empty.
 */
export async function startOwnRedis(options: { persistent?: boolean } = {}): Promise<OwnRedis> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-redis-"));
  let child: ChildProcess | null = null;
  const persistence = options.persistent ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"];
  const redis: OwnRedis = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", ...persistence, "--dir", dir], {
        stdio: "ignore",
      });
      await waitForPort(port, "our own redis-server");
    },
    async stop(signal = "SIGKILL") {
      if (!child) return;
      const running = child;
      child = null;
      running.kill(signal);
      await exited(running);
    },
    async remove() {
      await redis.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  await redis.start();
  return redis;
}

export type OwnPostgres = {
  /** The `postgres` database as the `postgres` superuser (trust authentication on loopback). */
  adminUrl: string;
  port: number;
  urlOf(database: string): string;
  /** pg_ctl start: waits until it accepts connections. */
  start(): Promise<void>;
  /** pg_ctl stop: `fast` ends every session (their statements fail), `immediate` is a crash. */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  /** Stops the server and removes its data directory. */
  remove(): Promise<void>;
};

/** The newest PostgreSQL server installation of the machine (Debian puts each major version under /usr/lib/postgresql). */
function postgresBin(): string {
  const root = "/usr/lib/postgresql";
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((name) => fs.existsSync(path.join(root, name, "bin", "initdb"))) : [];
  if (versions.length === 0) throw new Error("no PostgreSQL server under /usr/lib/postgresql (Debian: apt install postgresql)");
  versions.sort((a, b) => Number(b) - Number(a));
  return path.join(root, versions[0], "bin");
}

/** initdb refuses to run as root: as root, the cluster belongs to the `postgres` system user. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  return { uid, gid };
}

/** A PostgreSQL cluster of the test's own: initdb in a temporary directory, pg_ctl on a free port. */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = postgresBin();
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-postgres-"));
  const user = runAs();
  if (user) fs.chownSync(dir, user.uid, user.gid);
  const data = path.join(dir, "data");
  // Asynchronous: the test goes on sending requests while the server stops and starts.
  const run = (tool: string, args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(path.join(bin, tool), args, { ...user, cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.on("error", reject);
      child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${tool} ${args.join(" ")} failed (${code}): ${output}`))));
    });
  await run("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"]);
  // Durability settings off: these drills kill the service's processes and restart the server cleanly, never crash it.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const postgres: OwnPostgres = {
    adminUrl,
    port,
    urlOf: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async start() {
      await run("pg_ctl", ["-D", data, "-l", path.join(dir, "server.log"), "-o", options, "-w", "-t", "60", "start"]);
    },
    async stop(mode = "fast") {
      if (!fs.existsSync(path.join(data, "postmaster.pid"))) return;
      await run("pg_ctl", ["-D", data, "-m", mode, "-w", "-t", "60", "stop"]);
    },
    async remove() {
      await postgres.stop("immediate").catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  await postgres.start();
  return postgres;
}
