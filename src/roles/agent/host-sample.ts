/**
 * The node's own measurements for its host rules, read in-process from /proc, cgroup files and
 * utmp: a few small files per sample, only those the rules use, no process started.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { HostRules } from "../../model/host-rules.ts";

/** USER_HZ: the unit of /proc/stat's and /proc/PID/stat's times on Linux. */
const TICKS_PER_S = 100;

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

/** CPU seconds of a cgroup v2 (its `cpu.stat` usage_usec); undefined when it cannot be read. */
export function cgroupCpuSeconds(dir: string): number | undefined {
  const m = /^usage_usec (\d+)$/m.exec(read(join(dir, "cpu.stat")) ?? "");
  return m ? Number(m[1]) / 1e6 : undefined;
}

/** CPU seconds of processes, their own and their waited-for children's (a job's leaders, where jobs have no cgroup). */
export function processesCpuSeconds(pids: Iterable<number>): number {
  let sum = 0;
  for (const pid of pids) {
    const stat = read(`/proc/${pid}/stat`);
    if (!stat) continue;
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    sum += (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICKS_PER_S;
  }
  return sum;
}

/** /proc/stat's first line: busy and total CPU seconds of the whole machine. */
function machineCpu(): { busy: number; total: number } | undefined {
  const line = read("/proc/stat")?.slice(0, 256).split("\n", 1)[0];
  if (!line?.startsWith("cpu ")) return undefined;
  // user nice system idle iowait irq softirq steal (guest times are inside user and nice).
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.slice(4).trim().split(/\s+/).map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + (steal ?? 0);
  return { busy: busy / TICKS_PER_S, total: (busy + idle! + iowait!) / TICKS_PER_S };
}

/** The "some avg10" of a PSI file, in % of time. */
function pressure(resource: "cpu" | "memory" | "io"): number | undefined {
  const m = /^some avg10=([\d.]+)/m.exec(read(`/proc/pressure/${resource}`) ?? "");
  return m ? Number(m[1]) : undefined;
}

/** Bytes received and sent so far on every interface but loopback. */
function netBytes(): number | undefined {
  const text = read("/proc/net/dev");
  if (!text) return undefined;
  let sum = 0;
  for (const line of text.split("\n").slice(2)) {
    const colon = line.indexOf(":");
    if (colon < 0 || line.slice(0, colon).trim() === "lo") continue;
    const f = line.slice(colon + 1).trim().split(/\s+/);
    sum += Number(f[0]) + Number(f[8]);
  }
  return sum;
}

const UTMP_RECORD = 384; // glibc's struct utmp on Linux (x86-64, aarch64)
const USER_PROCESS = 7;

/**
 * Users with a live login session: logind's sessions where systemd keeps them, else utmp's
 * USER_PROCESS records whose process still lives (as `who`, without its stale entries).
 */
export function loggedInUsers(sessionsDir = "/run/systemd/sessions", utmpFiles = ["/run/utmp", "/var/run/utmp"]): number {
  const users = new Set<string>();
  if (existsSync(sessionsDir)) {
    for (const f of readdirSync(sessionsDir)) {
      if (f.endsWith(".ref")) continue;
      const s = read(join(sessionsDir, f)) ?? "";
      const user = /^USER=(.+)$/m.exec(s)?.[1];
      if (user && /^CLASS=user$/m.test(s) && !/^STATE=closing$/m.test(s)) users.add(user);
    }
    return users.size;
  }
  for (const path of utmpFiles) {
    let buf: Buffer;
    try {
      buf = readFileSync(path);
    } catch {
      continue;
    }
    for (let off = 0; off + UTMP_RECORD <= buf.length && off < 4096 * UTMP_RECORD; off += UTMP_RECORD) {
      if (buf.readInt32LE(off) !== USER_PROCESS) continue;
      const pid = buf.readInt32LE(off + 4);
      const name = buf.toString("utf8", off + 44, off + 76).replace(/\0.*$/s, "");
      if (name && pid > 0 && existsSync(`/proc/${pid}`)) users.add(name);
    }
    return users.size;
  }
  return 0;
}

/** Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host). */
function cgroup2Mount(): string | undefined {
  for (const line of (read("/proc/self/mountinfo") ?? "").split("\n")) {
    const f = line.split(" ");
    if (f[f.indexOf("-") + 1] === "cgroup2") return f[4];
  }
  return undefined;
}

export interface SampleSources {
  /** CPU seconds used so far by this agent's jobs on the node. */
  jobsCpuSeconds(): number;
  /** The agent's jobs' cgroup, if they have one (subtracted from a `cgroup` source that holds it). */
  jobsCgroup?: string;
}

/** The inputs of `rules` that are measured by reading files (commands are host-command.ts's). */
export class HostSampler {
  private readonly wants: Set<string>;
  private readonly cgroup: string | undefined;
  private last: { wall: number; cpu?: { busy: number; total: number }; jobs: number; cgroup?: number; net?: number } | undefined;

  constructor(
    rules: HostRules,
    private readonly sources: SampleSources,
  ) {
    this.wants = new Set(rules.rules.map((r) => r.name));
    const rel = rules.rules.find((r) => r.name === "cpu.other")?.cgroup;
    this.cgroup = rel === undefined ? undefined : join(cgroup2Mount() ?? "/sys/fs/cgroup", rel);
  }

  /** Where a cpu.other rule's cgroup is, to name it in an error when it is missing. */
  get cgroupPath(): string | undefined {
    return this.cgroup;
  }

  /** One sample at `wall` (s): rates over the time since the previous one (none at the first). */
  sample(wall: number): Record<string, number | undefined> {
    const out: Record<string, number | undefined> = {};
    const prev = this.last;
    const now: NonNullable<typeof this.last> = { wall, jobs: 0 };
    if (this.wants.has("cpu.other")) {
      now.cpu = machineCpu();
      now.jobs = this.sources.jobsCpuSeconds();
      if (this.cgroup) now.cgroup = cgroupCpuSeconds(this.cgroup);
      const capacity = prev?.cpu && now.cpu ? now.cpu.total - prev.cpu.total : 0;
      if (capacity > 0) {
        const jobs = Math.max(0, now.jobs - prev!.jobs);
        const inside = this.cgroup && this.sources.jobsCgroup?.startsWith(`${this.cgroup}/`);
        const used = this.cgroup
          ? now.cgroup !== undefined && prev!.cgroup !== undefined ? now.cgroup - prev!.cgroup - (inside ? jobs : 0) : undefined
          : now.cpu!.busy - prev!.cpu!.busy - jobs;
        if (used !== undefined) out["cpu.other"] = Math.min(1, Math.max(0, used / capacity));
      }
    }
    if (this.wants.has("load1")) {
      const l = Number(read("/proc/loadavg")?.split(" ", 1)[0]);
      if (Number.isFinite(l)) out.load1 = l;
    }
    if (this.wants.has("psi.cpu")) out["psi.cpu"] = pressure("cpu");
    if (this.wants.has("psi.mem")) out["psi.mem"] = pressure("memory");
    if (this.wants.has("psi.io")) out["psi.io"] = pressure("io");
    if (this.wants.has("net.bytes")) {
      now.net = netBytes();
      if (prev?.net !== undefined && now.net !== undefined && wall > prev.wall) out["net.bytes"] = Math.max(0, (now.net - prev.net) / (wall - prev.wall));
    }
    if (this.wants.has("users")) out.users = loggedInUsers();
    this.last = now;
    return out;
  }
}
