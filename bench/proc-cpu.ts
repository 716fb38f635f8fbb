/**
 * CPU time of this process's descendants from /proc, by kind (controller, agents, browser,
 * ...): what a benchmark's watchers cost beside what they slow down. Includes the CPU time of
 * children a process has waited for (an agent's job processes).
 */
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_S = 100; // USER_HZ on Linux

export interface Proc {
  ppid: number;
  cmd: string;
  cpu: number;
  /** Of `cpu`, the process's own (its threads'), without its waited-for children's. */
  own: number;
}

/** Every process now: parent, command line, CPU seconds (its own and its waited-for children's). */
export function processTable(): Map<number, Proc> {
  const out = new Map<number, Proc>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // utime, stime, cutime, cstime are fields 14-17 of stat (11-14 after the state).
      const own = (Number(f[11]) + Number(f[12])) / TICKS_PER_S;
      const cpu = own + (Number(f[13]) + Number(f[14])) / TICKS_PER_S;
      out.set(Number(d), { ppid: Number(f[1]), cmd: readFileSync(`/proc/${d}/cmdline`, "utf8").replaceAll("\0", " "), cpu, own });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

export type Kind = (cmd: string) => string;

/** controller, agent, browser (any Chromium or Firefox process), else other. */
export const byRole: Kind = (cmd) => (/ controller /.test(cmd) ? "controller" : / agent /.test(cmd) ? "agents" : /chrom|firefox/.test(cmd) ? "browser" : / up /.test(cmd) ? "up" : "other");

export type CpuSnapshot = Map<number, { kind: string; cpu: number; own: number }>;

export function cpuSnapshot(kind: Kind = byRole): CpuSnapshot {
  const all = processTable();
  const pids = [process.pid];
  for (let i = 0; i < pids.length; i++) for (const [pid, p] of all) if (p.ppid === pids[i]) pids.push(pid);
  const m: CpuSnapshot = new Map();
  for (const pid of pids.slice(1)) {
    const p = all.get(pid)!;
    m.set(pid, { kind: kind(p.cmd), cpu: p.cpu, own: p.own });
  }
  return m;
}

/**
 * CPU seconds by kind between two snapshots (processes that ended in between are not counted), and
 * under "KIND own" the same without the children those processes waited for (an agent's jobs).
 */
export function cpuSince(before: CpuSnapshot, after: CpuSnapshot = cpuSnapshot()): Record<string, number> {
  const r: Record<string, number> = {};
  for (const [pid, p] of after) {
    const b = before.get(pid);
    r[p.kind] = (r[p.kind] ?? 0) + p.cpu - (b?.cpu ?? 0);
    r[`${p.kind} own`] = (r[`${p.kind} own`] ?? 0) + p.own - (b?.own ?? 0);
  }
  return r;
}
