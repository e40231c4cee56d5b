/**
 * CPU and memory of processes and of the machine, read from /proc (Linux): what the load bench
 * reports beside its throughput, so a figure comes with what the cores were doing meanwhile.
 */
import fs from "node:fs";

const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) the process has used, or null once it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Resident set size in MiB, or null once the process is gone. */
export function rssMiB(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

export type MachineTicks = { busy: number; total: number };

/** The machine's CPU time so far, all cores: busy (everything but idle and iowait) and total. */
export function machineTicks(): MachineTicks {
  const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0];
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const total = values.reduce((sum, value) => sum + value, 0);
  const idle = values[3] + (values[4] ?? 0);
  return { busy: total - idle, total };
}

/** Share of the machine's CPU time that was busy between two readings, 0..1 (all cores together). */
export function busyShare(before: MachineTicks, after: MachineTicks): number {
  const total = after.total - before.total;
  return total > 0 ? (after.busy - before.busy) / total : 0;
}

/**
 * CPU seconds per named group of processes between two readings: how many cores each group used on
 * average. The pids of each group are taken at reset; one that ends meanwhile is left out.
 */
export class CpuMeter {
  private start = new Map<string, Map<number, number>>();
  private machine = machineTicks();
  private startedAt = Date.now();

  constructor(private readonly processes: () => Promise<Record<string, number[]>>) {}

  async reset(): Promise<void> {
    const groups = await this.processes();
    this.start = new Map(
      Object.entries(groups).map(([name, pids]) => [
        name,
        new Map(pids.flatMap((pid) => (cpuSeconds(pid) === null ? [] : [[pid, cpuSeconds(pid)!] as [number, number]]))),
      ]),
    );
    this.machine = machineTicks();
    this.startedAt = Date.now();
  }

  /** Cores used on average by each named group since reset, and the machine's busy share (0..1, all cores). */
  read(): { cores: Record<string, number>; machineBusy: number } {
    const seconds = (Date.now() - this.startedAt) / 1000;
    const cores: Record<string, number> = {};
    for (const [name, pids] of this.start) {
      let used = 0;
      for (const [pid, before] of pids) {
        const now = cpuSeconds(pid);
        if (now !== null) used += now - before;
      }
      cores[name] = seconds > 0 ? used / seconds : 0;
    }
    return { cores, machineBusy: busyShare(this.machine, machineTicks()) };
  }
}
