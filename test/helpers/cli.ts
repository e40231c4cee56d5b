import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

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
): Promise<{ child: ChildProcess; json: Json; output: () => string }> {
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(" ")} printed no ${key}:\n${output}`)), timeoutMs);
    let found = false;
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (found) return;
      const line = output.split("\n").find((candidate) => candidate.startsWith("{") && candidate.includes(`"${key}"`));
      if (!line) return;
      found = true;
      clearTimeout(timer);
      resolve({ child, json: JSON.parse(line) as Json, output: () => output });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${code}:\n${output}`)));
  });
}
