import fs from "node:fs";

/**
 * Whether the shell that npm put between itself and this process has been signalled.
 *
 * `npx finance-gateway start` runs `sh -c 'finance-gateway start'`; npm passes SIGINT and SIGTERM on to
 * that shell only. SIGTERM ends the shell (this process is orphaned: its parent changes), but a `sh -c`
 * catches SIGINT and keeps waiting for its command, so nothing reaches the service. A shell blocked
 * waiting for its one command wakes only for a signal, so each wake-up (its voluntary context switches,
 * Linux's /proc) means it was signalled: by SIGINT, or by SIGCHLD when this process was stopped or
 * continued (Ctrl-Z, fg), which `resumed()` accounts for.
 *
 * Null where there is no such shell (`npm start` execs node; not Linux): the parent check alone applies.
 */
export function watchLauncherShell(parent: number): { interrupted: () => boolean; resumed: () => void } | null {
  const wakeups = () => {
    try {
      const match = /^voluntary_ctxt_switches:\s*(\d+)$/m.exec(fs.readFileSync(`/proc/${parent}/status`, "utf8"));
      return match ? Number(match[1]) : null;
    } catch {
      return null;
    }
  };
  let argv: string[];
  try {
    argv = fs.readFileSync(`/proc/${parent}/cmdline`, "utf8").split("\0");
  } catch {
    return null;
  }
  if (!/(^|\/)(sh|dash|bash)$/.test(argv[0] ?? "") || argv[1] !== "-c") return null;
  let baseline = wakeups();
  if (baseline === null) return null;
  let resumedAt = 0;
  return {
    interrupted: () => {
      const now = wakeups();
      if (now === null) return false;
      // A stop and continue of this process wakes the shell too (SIGCHLD): take a new baseline after it.
      if (Date.now() - resumedAt < 2000) baseline = now;
      return now !== baseline;
    },
    resumed: () => {
      resumedAt = Date.now();
    },
  };
}
