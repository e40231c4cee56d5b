import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { within } from "./eventually";

/** The built CLI, run as a user would (`npm test` builds first). */
export const CLI = path.join(__dirname, "..", "..", "bin", "finance-gateway.js");

/**
 * Spawns `node <args>` (or `command <args>`) and resolves once it prints (on stdout or stderr) a JSON
 * line with `key`: a service's start banner, the local IdP's settings. Rejects if it exits or stays
 * silent first. `output()` is everything printed so far, and keeps growing.
 */
export function spawnUntilJson<Json = Record<string, string>>(
  args: string[],
  env: NodeJS.ProcessEnv,
  key: string,
  timeoutMs = 90_000,
  command = process.execPath,
  /** In a process group of its own, as a terminal runs a command: signal it whole with process.kill(-pid). */
  detached = false,
): Promise<{ child: ChildProcess; json: Json; output: () => string }> {
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"], detached });
  let output = "";
  const printed = new Promise<{ child: ChildProcess; json: Json; output: () => string }>((resolve, reject) => {
    let found = false;
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (found) return;
      const line = output.split("\n").find((candidate) => candidate.startsWith("{") && candidate.includes(`"${key}"`));
      if (!line) return;
      found = true;
      resolve({ child, json: JSON.parse(line) as Json, output: () => output });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${code}:\n${output}`)));
  });
  return within(printed, timeoutMs, `${args.join(" ")} to print ${key}`).catch((error: Error) => {
    throw new Error(`${error.message}:\n${output}`);
  });
}

/** Stops a service the test started (SIGTERM) and waits for it to exit; nothing when it already has. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.removeAllListeners("exit");
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}
