/**
 * What a job's cgroup allows it on this node (its cores: cpuset.cpus; its memory: memory.max,
 * no swap, and the whole job killed when one of its processes goes over: memory.oom.group), and
 * what the job used there (CPU time, peak memory, OOM kills).
 *
 * - cgroup v2 where its cpuset and memory controllers can be enabled below the agent's cgroup.
 *   A cgroup with processes cannot enable them for its children (v2's "no internal processes"),
 *   so an agent alone in its cgroup (systemd's Delegate=yes) first moves itself into a leaf of it,
 *   `ebb-agent-self`.
 * - Else cgroup v1's memory and cpuset hierarchies, where the host still mounts them (RHEL 8's
 *   default, hybrid hosts) and the agent may write them (root): a job cgroup in each, beside its
 *   v2 one; a process joins them before it runs its program (procs.ts `joinArgv`). v1 has no group OOM
 *   kill: the kernel kills the largest process of the job, and the job fails from there.
 * - Else the job is not confined (said once in the log). CPU time comes from v2's cpu.stat, which
 *   every v2 cgroup has.
 */
import { closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, rmdirSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { formatIndexList } from "../../domain/index-list.ts";
import { readKernelRecord } from "../../util/kernel-file.ts";
import { logger } from "../../util/log.ts";
import { SpareCgroups } from "./cgroup-spares.ts";

const log = logger("agent");

export interface JobLimits {
  /** CPU ids (the machine's numbers, not the share's core indices). */
  cpus: readonly number[];
  /** 0: no memory limit of its own. */
  memMiB: number;
}

export interface JobUsage {
  cpuSec: number;
  peakMemMiB: number;
  oomKills: number;
}

type Controller = "cpuset" | "memory";
export const CONTROLLERS: readonly Controller[] = ["cpuset", "memory"];
const MiB = 2 ** 20;
/** A page (x86-64's, arm64's smallest): at most this much may be left charged to a spare v1 memory cgroup a job takes (memoryIsFresh). */
const ONE_PAGE = 4096;
/** The leaf a lone agent moves itself into, so that its own cgroup may enable controllers for its children. */
export const SELF_LEAF = "ebb-agent-self";

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};
/** A cgroup file of one record (a value, or key-value lines: not cgroup.procs or tasks), in one read (util/kernel-file.ts). */
const readRecord = (path: string): string | undefined => {
  try {
    return readKernelRecord(path);
  } catch {
    return undefined;
  }
};
const words = (path: string) => (read(path) ?? "").split(/\s+/).filter(Boolean);
/** A `key value` line's value (cpu.stat, memory.events, memory.oom_control). */
const field = (text: string | undefined, key: string): number | undefined => {
  const m = new RegExp(`^${key} (\\d+)$`, "m").exec(text ?? "");
  return m ? Number(m[1]) : undefined;
};
const number = (text: string | undefined): number | undefined => (text !== undefined && /^\d+\s*$/.test(text) ? Number(text) : undefined);

/**
 * Writes `value` to a cgroup file (which exists: the kernel makes them): open, one write, close.
 * writeFileSync also asks to create it and truncates it after the write, two more calls into
 * kernfs for each of the ~10 writes a job's cgroups take.
 */
export function writeCgroupFile(path: string, value: string): void {
  const fd = openSync(path, constants.O_WRONLY);
  try {
    writeSync(fd, value);
  } finally {
    closeSync(fd);
  }
}

/** Writes a cgroup file; the errno code when the kernel refuses. */
function put(path: string, value: string): string | undefined {
  try {
    writeCgroupFile(path, value);
    return undefined;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  }
}

/**
 * Enables `want` (those `dir` has) for the children of the v2 cgroup `dir`; the ones enabled.
 * `own`: `dir` is the agent's own cgroup, which it may leave for a leaf of it to enable them.
 */
function enableBelow(dir: string, want: readonly Controller[], own = false): Controller[] {
  const has = words(join(dir, "cgroup.controllers"));
  const enabled = () => words(join(dir, "cgroup.subtree_control"));
  for (const c of want.filter((c) => has.includes(c) && !enabled().includes(c))) {
    const error = put(join(dir, "cgroup.subtree_control"), `+${c}`);
    if (error === "EBUSY" && own && moveSelfToLeaf(dir)) put(join(dir, "cgroup.subtree_control"), `+${c}`);
  }
  return want.filter((c) => enabled().includes(c));
}

/** Moves this process into `dir/ebb-agent-self` when it is the only one in `dir`; true if it did. */
function moveSelfToLeaf(dir: string): boolean {
  const procs = words(join(dir, "cgroup.procs"));
  if (procs.length !== 1 || procs[0] !== String(process.pid)) return false;
  try {
    mkdirSync(join(dir, SELF_LEAF), { recursive: true });
    writeFileSync(join(dir, SELF_LEAF, "cgroup.procs"), String(process.pid));
    log.info(`moved the agent into ${join(dir, SELF_LEAF)}, so that its cgroup may enable controllers for its jobs`);
    return true;
  } catch {
    return false;
  }
}

/** The mount point of the v1 hierarchy of `controller` and the root it shows ("/" unless bind-mounted from below), if the host mounts one. */
function v1Mount(controller: Controller): { dir: string; root: string } | undefined {
  const f = (read("/proc/self/mountinfo") ?? "")
    .split("\n")
    .map((l) => l.split(" "))
    .find((f) => f[f.indexOf("-") + 1] === "cgroup" && (f[f.indexOf("-") + 3] ?? "").split(",").includes(controller));
  return f ? { dir: f[4]!, root: f[3] ?? "/" } : undefined;
}

/** The directory of this process's cgroup in the v1 hierarchy of `controller`, if the host mounts one. */
export function v1Own(controller: Controller): string | undefined {
  const mount = v1Mount(controller);
  const own = (read("/proc/self/cgroup") ?? "")
    .split("\n")
    .map((l) => /^\d+:([^:]*):(.*)$/.exec(l))
    .find((m) => m?.[1]!.split(",").includes(controller))?.[2];
  if (!mount || own === undefined) return undefined;
  return join(mount.dir, mount.root !== "/" && own.startsWith(mount.root) ? own.slice(mount.root.length) : own);
}

/**
 * Whether ebb's v1 cpusets can leave load balancing to the hierarchy's root: where the root
 * balances, the scheduler keeps one domain over all CPUs and a child's `sched_load_balance` does
 * not matter (the kernel's cgroup-v1/cpusets.rst, 1.7), but a child that has it set makes the kernel rebuild
 * the scheduling domains, walking every cpuset and task of the host, at each write of its
 * `cpuset.cpus` and at its removal: ~2.5 ms of wall time a job cgroup on a host with ~2,000
 * cpusets, one after the other in the agent's thread. The job's `cpuset.cpus` confines it the same.
 */
function rootBalancesCpus(): boolean {
  const mount = v1Mount("cpuset");
  return mount !== undefined && read(join(mount.dir, "cpuset.sched_load_balance"))?.trim() === "1";
}

/** Before a v1 cpuset gets its CPUs (while it has none, which rebuilds nothing), it stops asking for a domain of its own. */
function leaveBalancingToRoot(dir: string): void {
  put(join(dir, "cpuset.sched_load_balance"), "0");
}

/** A v1 base of the agent under its own cgroup of `controller` (cpuset: with its parent's CPUs and memory nodes, as v1 needs). */
function v1Base(controller: Controller, leaf: string, unbalanced: boolean): string | undefined {
  const own = v1Own(controller);
  if (!own) return undefined;
  const base = join(own, leaf);
  try {
    mkdirSync(base, { recursive: true });
    if (controller === "cpuset") {
      if (unbalanced) leaveBalancingToRoot(base);
      for (const f of ["cpuset.cpus", "cpuset.mems"]) {
        const error = put(join(base, f), (read(join(own, f)) ?? "").trim());
        if (error) throw new Error(`${f}: ${error}`);
      }
    }
    return base;
  } catch {
    try {
      rmdirSync(base);
    } catch {
      /* not made */
    }
    return undefined;
  }
}

/** rmdir; the errno code when it fails (EBUSY: a task is still in it). */
function removeDir(dir: string): string | undefined {
  try {
    rmdirSync(dir);
    return undefined;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? "EIO";
  }
}

/**
 * Moves every thread of this process found in the v1 cgroup `dir` back into `back` (the
 * process's own `tasks`); true if there was one. A thread inherits the cgroups of the thread that
 * starts it, and the runtime starts its helpers (JIT compilers, GC helpers) on demand from
 * whichever thread needs one, so one may start while the agent's thread stands in a job's
 * cgroups (containment.ts `fromInside`): seen with JSC's JITWorker, about once in 10,000 spawns
 * from a worker thread. Left there, it kept the job's cgroups from being removed (and ran on the
 * job's CPUs) until the agent stopped.
 */
function takeBackOwnThreads(dir: string, back: string): boolean {
  const ours = (read(join(dir, "tasks")) ?? "").split("\n").filter((tid) => tid && existsSync(`/proc/self/task/${tid}`));
  for (const tid of ours) put(back, tid);
  return ours.length > 0;
}

export class CgroupLimits {
  /** Controllers the job cgroups under the v2 base have. */
  private readonly v2: Controller[];
  /** Where v2 lacks a controller: the agent's v1 base for it. */
  private readonly v1 = new Map<Controller, string>();
  /** The v1 cpuset base's memory nodes, read once: every job's cpuset takes them. */
  private baseMems: string | undefined;
  /** Whether v1 memory cgroups have memory.memsw.* here (swap accounting), found once. */
  private memsw: boolean | undefined;
  /** Whether v2 memory cgroups have memory.swap.max here, found once. */
  private swapMax: boolean | undefined;
  /** Each job's v1 cgroups made so far, by controller. */
  private readonly v1Made = new Map<number, Map<Controller, string>>();
  /** The largest memory.current seen, for kernels without memory.peak (before 5.19). */
  private readonly peaks = new Map<number, number>();
  /** v1 cpusets are made without load balancing of their own (rootBalancesCpus). */
  private readonly unbalanced: boolean;
  /** The CPUs each job's v1 cpuset has (absent: not written yet, its memory nodes neither). */
  private readonly cpusetCpus = new Map<number, string>();
  /**
   * Empty v1 cgroups of jobs that left, for the next jobs (cgroup-spares.ts). A cpuset (its CPUs,
   * its memory nodes and balancing flag written) charges nothing to anyone. A memory cgroup is
   * taken only once at most a page is charged to it (`memoryIsFresh`): what a job leaves charged
   * (page cache, kernel memory freed after a grace period, the per-CPU charge stock: 12-250 KiB
   * after `true`, `ls` or `python3 -c pass`, measured) would count against the next job's limit
   * and peak. Until then jobs get new ones; memory.force_empty is not used to empty one: it would
   * write back a job's dirty pages on the agent's thread, and drop the page cache of the files the
   * job wrote, which the next job of a workflow reads.
   */
  private readonly spares = new Map<Controller, SpareCgroups>();
  /** The limit each job's v1 memory cgroup has ("-1": none, what the kernel gives a new one): a job without a limit of its own writes nothing. */
  private readonly memoryLimit = new Map<number, string>();

  /** `v2Base`: the agent's v2 cgroup (its jobs' parent), if it has one; `leaf`: the agent's directory name. */
  constructor(v2Base: string | undefined, leaf: string) {
    this.v2 = v2Base ? enableBelow(join(v2Base, ".."), CONTROLLERS, true).filter((c) => enableBelow(v2Base, [c]).length > 0) : [];
    this.unbalanced = process.getuid?.() === 0 && !this.v2.includes("cpuset") && rootBalancesCpus();
    if (process.getuid?.() !== 0) return;
    for (const c of CONTROLLERS) {
      if (this.v2.includes(c)) continue;
      const base = v1Base(c, leaf, this.unbalanced);
      if (!base) continue;
      this.v1.set(c, base);
      this.spares.set(c, new SpareCgroups(base, c === "memory" ? (dir) => this.memoryIsFresh(dir) : undefined));
    }
  }

  /** One line for the log: how jobs are confined here, or that they are not. */
  describe(): string {
    const how = CONTROLLERS.map((c) => (this.v2.includes(c) ? `${c} (cgroup v2)` : this.v1.has(c) ? `${c} (cgroup v1)` : undefined)).filter(Boolean);
    const missing = CONTROLLERS.filter((c) => !this.v2.includes(c) && !this.v1.has(c));
    if (missing.length === 0) return `jobs are confined to their cores and memory: ${how.join(", ")}`;
    const v1 = process.getuid?.() === 0 ? "nor a cgroup v1 hierarchy it may write" : "and only a root agent uses cgroup v1";
    return `jobs run without ${missing.join(" or ")} limits${how.length ? ` (confined by ${how.join(", ")} only)` : ""}: no cgroup v2 ${missing.join(" or ")} controller the agent may enable below its cgroup, ${v1}`;
  }

  /** The v1 bases, which the sentinel removes with the agent. */
  get v1Bases(): string[] {
    return [...this.v1.values()];
  }

  /** Whether a job's memory is confined (and its OOM kills counted). */
  get confinesMemory(): boolean {
    return this.v2.includes("memory") || this.v1.has("memory");
  }

  /** Writes a job's limits to its cgroups (the v1 ones made if need be); `v2Dir` is its v2 cgroup. */
  apply(jobId: number, v2Dir: string | undefined, limits: JobLimits): void {
    const cpus = formatIndexList(limits.cpus);
    const bytes = limits.memMiB > 0 ? String(limits.memMiB * MiB) : "max";
    const failed: string[] = [];
    const check = (what: string, error: string | undefined) => error && failed.push(`${what}: ${error}`);
    if (v2Dir && this.v2.includes("cpuset") && cpus) check("cpuset.cpus", put(join(v2Dir, "cpuset.cpus"), cpus));
    if (v2Dir && this.v2.includes("memory")) {
      check("memory.max", put(join(v2Dir, "memory.max"), bytes));
      this.swapMax ??= existsSync(join(v2Dir, "memory.swap.max"));
      if (this.swapMax) check("memory.swap.max", put(join(v2Dir, "memory.swap.max"), "0"));
      check("memory.oom.group", put(join(v2Dir, "memory.oom.group"), "1"));
    }
    // Without CPUs no cpuset is made (a process cannot join an empty one; a spare would have another job's).
    const cpuset = cpus ? this.v1Dir("cpuset", jobId, cpus) : undefined;
    if (cpuset && this.cpusetCpus.get(jobId) !== cpus) {
      let mems: string | undefined;
      if (!this.cpusetCpus.has(jobId)) {
        if (this.unbalanced) leaveBalancingToRoot(cpuset);
        this.baseMems ??= (read(join(this.v1.get("cpuset")!, "cpuset.mems")) ?? "").trim();
        check("cpuset.mems", (mems = put(join(cpuset, "cpuset.mems"), this.baseMems)));
      }
      const error = put(join(cpuset, "cpuset.cpus"), cpus);
      check("cpuset.cpus", error);
      // Recorded only once all is written: a spare is taken as having what is recorded.
      if (!error && !mems) this.cpusetCpus.set(jobId, cpus);
    }
    const v1Bytes = limits.memMiB > 0 ? bytes : "-1";
    const memory = this.v1Dir("memory", jobId, v1Bytes);
    if (memory && this.memoryLimit.get(jobId) !== v1Bytes) {
      this.memsw ??= existsSync(join(memory, "memory.memsw.limit_in_bytes"));
      // memsw (memory + swap) may never be below the memory limit: lowered after it, raised before it.
      const files = ["memory.limit_in_bytes", ...(this.memsw ? ["memory.memsw.limit_in_bytes"] : [])];
      const before = failed.length;
      if (files.some((f) => put(join(memory, f), v1Bytes))) for (const f of [...files].reverse()) check(f, put(join(memory, f), v1Bytes));
      if (failed.length === before) this.memoryLimit.set(jobId, v1Bytes);
      else this.memoryLimit.delete(jobId); // not known: written again by the next apply, and not kept as a spare
    }
    if (failed.length > 0) log.warn(`job ${jobId}: could not set all of its cgroup limits (${failed.join("; ")}); it runs less confined`);
  }

  /**
   * The v1 job cgroup of `controller`, made on first use (a spare, one with `want` written if there
   * is); undefined where v1 is not used for it.
   */
  private v1Dir(controller: Controller, jobId: number, want: string): string | undefined {
    const base = this.v1.get(controller);
    if (!base) return undefined;
    let made = this.v1Made.get(jobId);
    const known = made?.get(controller);
    if (known) return known;
    const dir = join(base, `job-${jobId}`);
    const written = controller === "cpuset" ? this.cpusetCpus : this.memoryLimit;
    const spare = this.spares.get(controller)!.take(dir, want);
    if (spare !== undefined) written.set(jobId, spare);
    else
      try {
        mkdirSync(dir);
        if (controller === "memory") this.memoryLimit.set(jobId, "-1");
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") return undefined;
      }
    if (!made) this.v1Made.set(jobId, (made = new Map()));
    made.set(controller, dir);
    return dir;
  }

  /** The v1 cgroup.procs files a process of the job writes its pid to before it runs its program. */
  joinFiles(jobId: number): string[] {
    return [...(this.v1Made.get(jobId)?.values() ?? [])].map((dir) => join(dir, "cgroup.procs"));
  }

  /**
   * For a thread of the agent that steps into the job's v1 cgroups (containment.ts `fromInside`):
   * each hierarchy's job `tasks` file, and the agent's own cgroup's there, to step back into;
   * `cpus`, for the cpuset, the CPUs it has (formatIndexList), which a thread joining it is bound to.
   */
  threadMoves(jobId: number): { into: string; back: string; cpus?: string }[] {
    return [...(this.v1Made.get(jobId) ?? [])].map(([controller, dir]) => ({
      into: join(dir, "tasks"),
      back: join(dir, "..", "..", "tasks"),
      ...(controller === "cpuset" ? { cpus: this.cpusetCpus.get(jobId) } : {}),
    }));
  }

  /** Notes the job's memory now (kernels without memory.peak). */
  sample(jobId: number, v2Dir: string | undefined): void {
    if (!v2Dir || !this.v2.includes("memory") || existsSync(join(v2Dir, "memory.peak"))) return;
    const now = number(readRecord(join(v2Dir, "memory.current")));
    if (now !== undefined) this.peaks.set(jobId, Math.max(now, this.peaks.get(jobId) ?? 0));
  }

  /** What the job used on this node so far; undefined without any cgroup to tell. */
  usage(jobId: number, v2Dir: string | undefined): JobUsage | undefined {
    const memory = this.v1.has("memory") ? join(this.v1.get("memory")!, `job-${jobId}`) : undefined;
    // Each file read once, and a cgroup that is not there is a file that cannot be read.
    const cpuStat = v2Dir === undefined ? undefined : readRecord(join(v2Dir, "cpu.stat"));
    const v2 = cpuStat !== undefined;
    const v1Peak = memory && !(v2 && this.v2.includes("memory")) ? readRecord(join(memory, "memory.max_usage_in_bytes")) : undefined;
    if (!v2 && v1Peak === undefined) return undefined;
    const cpuUsec = field(cpuStat, "usage_usec") ?? 0;
    let peak = 0;
    let oomKills = 0;
    if (v2 && this.v2.includes("memory")) {
      peak = number(readRecord(join(v2Dir!, "memory.peak"))) ?? Math.max(this.peaks.get(jobId) ?? 0, number(readRecord(join(v2Dir!, "memory.current"))) ?? 0);
      oomKills = field(readRecord(join(v2Dir!, "memory.events")), "oom_kill") ?? 0;
    } else if (v1Peak !== undefined) {
      peak = number(v1Peak) ?? 0;
      oomKills = field(readRecord(join(memory!, "memory.oom_control")), "oom_kill") ?? 0;
    }
    return { cpuSec: cpuUsec / 1e6, peakMemMiB: Math.ceil(peak / MiB), oomKills };
  }

  /**
   * Whether the spare v1 memory cgroup `dir` may be the next job's: at most a page of memory and
   * swap charged to it (what is left charged of a page the kernel's objects were charged by once
   * they are freed: 4 KiB after most null jobs, measured; the kernel charges in batches of up to 64
   * pages a CPU, so no count is closer than that), and no OOM kill counted (memory.oom_control's
   * count cannot be reset); then its peak is reset to what is charged, so the job's usage is its own.
   */
  private memoryIsFresh(dir: string): boolean {
    this.memsw ??= existsSync(join(dir, "memory.memsw.usage_in_bytes"));
    const charged = number(readRecord(join(dir, this.memsw ? "memory.memsw.usage_in_bytes" : "memory.usage_in_bytes")));
    if (charged === undefined || charged > ONE_PAGE) return false;
    if (field(readRecord(join(dir, "memory.oom_control")), "oom_kill") !== 0) return false;
    return put(join(dir, "memory.max_usage_in_bytes"), "0") === undefined;
  }

  /** The job's v1 cgroups, once empty: each kept as a spare if no task is in it (cgroup-spares.ts), else removed. */
  remove(jobId: number): void {
    this.peaks.delete(jobId);
    this.v1Made.delete(jobId);
    const written = { cpuset: this.cpusetCpus.get(jobId), memory: this.memoryLimit.get(jobId) };
    this.cpusetCpus.delete(jobId);
    this.memoryLimit.delete(jobId);
    for (const [controller, base] of this.v1) {
      const dir = join(base, `job-${jobId}`);
      const value = written[controller];
      if (value !== undefined && this.spares.get(controller)!.keep(dir, value)) continue;
      if (removeDir(dir) === "EBUSY" && takeBackOwnThreads(dir, join(base, "..", "tasks"))) removeDir(dir);
    }
  }
}
