/**
 * Keeping a job's processes where the agent can kill them all, even after the agent itself dies.
 *
 * - Where the host offers a writable cgroup v2 hierarchy, every job gets a cgroup under the agent's
 *   own (`ebb-agent-NAME-PID/job-N`); each process starts in it (the kernel places it there before
 *   it runs its program), so whatever it forks, `setsid` or not, stays inside, and `cgroup.kill`
 *   ends them all.
 * - Everywhere, a sentinel (sentinel.ts): when the agent's process dies (SIGKILL included), it kills
 *   the agent's cgroup and every process group of the agent's record whose leader is still the one
 *   recorded, and removes the agent's cgroups.
 * - Where the sentinel died with the agent or gave up, the next agent to start sweeps what is left
 *   (cgroup-sweep.ts); a clean stop removes the agent's cgroups itself (removeAll).
 * - Each job's cgroup holds it to its cores and memory where the host allows (cgroup-limits.ts).
 * - A process joins the job's cgroup v1 hierarchies (cgroup-limits.ts) by being born in them: the
 *   agent's thread steps into them around the spawn (`fromInside`; a child starts in its forking
 *   thread's cgroups), so no shell has to join them before the program (procs.ts `joinArgv`, 0.6
 *   ms of the 1.2 ms a spawn cost). Only a thread that is not the process's main thread may: the
 *   memory controller charges a process's page faults to its main thread's cgroup and picks the
 *   OOM victim of a full cgroup among the processes whose main thread is in it, so a main thread
 *   in a job's memory cgroup charged the agent's faults to the job and, the job at its limit, was
 *   the one killed (checked). A worker thread charges the job only the kernel memory of the new
 *   process (its task and stack: the job's own), and a full job's spawn fails or kills a process
 *   of the job. `ebb agent` and `ebb up` run their agents on a worker thread; an agent on a main
 *   thread (started in-process, as some tests do) joins through the shell.
 */
import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, readlinkSync, rmdirSync, writeSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { logger } from "../../util/log.ts";
import { formatIndexList } from "../../domain/index-list.ts";
import { Sentinel } from "./sentinel.ts";
import { sweepStaleCgroups } from "./cgroup-sweep.ts";
import { removeCgroups } from "./cgroup-tree.ts";
import { CgroupLimits, CONTROLLERS, SELF_LEAF, v1Own, writeCgroupFile, type JobLimits, type JobUsage } from "./cgroup-limits.ts";
import { bindOwnThread, keepingAffinity, withAffinity } from "./affinity.ts";
import { DeviceFence, type Device } from "./device-fence.ts";

const log = logger("agent");
/** How long a clean stop waits for what it killed to leave the agent's cgroups (the sentinel's own wait). */
const STOP_WAIT_MS = 30_000;

/** The mount point of the cgroup v2 hierarchy, if there is one. */
export function cgroup2Mount(): string | undefined {
  try {
    return readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .map((l) => l.split(" "))
      .find((f) => f[f.indexOf("-") + 1] === "cgroup2")?.[4];
  } catch {
    return undefined;
  }
}

/** The mount point of the cgroup v2 hierarchy and this process's cgroup in it, if there is one. */
export function cgroup2Root(): string | undefined {
  try {
    const mount = cgroup2Mount();
    const own = /^0::(\S*)$/m.exec(readFileSync("/proc/self/cgroup", "utf8"))?.[1];
    if (!mount || own === undefined) return undefined;
    // An agent that moved itself into a leaf of its cgroup (cgroup-limits.ts) still counts from that cgroup.
    return join(mount, own.endsWith(`/${SELF_LEAF}`) ? own.slice(0, -SELF_LEAF.length - 1) : own);
  } catch {
    return undefined;
  }
}

/**
 * What a thread writes to a v1 `tasks` file to move itself: "0" is the calling thread. The kernel
 * moves a thread named by its id under the write lock of cgroup_threadgroup_rwsem, which waits for
 * an RCU grace period and holds off every fork and exit on the host meanwhile; the calling thread
 * cannot exit or exec under it, and is moved without that lock (cgroup_procs_write_start). The same
 * thread moves either way: measured on this host's 6.18 kernel, a worker thread's move into a job's
 * cpuset and memory cgroups and back took 51-55 µs of its CPU and 74-95 µs of wall time with "0",
 * 53-68 µs and 88-130 µs with its id (3 alternating rounds of 300).
 */
const CALLING_THREAD = "0";

/**
 * The agent's own v1 `tasks` files, open for good: its thread steps back through one of them after
 * every spawn (fromInside), and the open of that long cgroup path and its close cost half again the
 * move itself: a move into a job's v1 memory cgroup and back took 32 µs of CPU with `back` opened
 * each time, 21 µs with it held (medians of 6 alternating runs of 4,000, load 5); 2 hierarchies, so
 * ~20 µs a job. One per hierarchy for each thread's VM: every agent of the thread steps back into
 * the same cgroups (the process's own). Close-on-exec, as every descriptor the agent opens: no job
 * process holds one (agent-attacks.test.ts lists a job's descriptors).
 */
const ownTasks = new Map<string, number>();

/** Moves the calling thread into the v1 cgroup whose `tasks` file is `path` (the agent's own). */
function stepBack(path: string): void {
  let fd = ownTasks.get(path);
  if (fd === undefined) ownTasks.set(path, (fd = openSync(path, constants.O_WRONLY)));
  try {
    writeSync(fd, CALLING_THREAD);
  } catch (e) {
    ownTasks.delete(path);
    closeSync(fd);
    throw e;
  }
}

export class Containment {
  /** The sentinel cleaning up after this agent, if it took the duty. */
  private readonly sentinel: Sentinel | undefined;
  /** The agent's cgroup (undefined where cgroup v2 cannot be used). */
  readonly base: string | undefined;
  private readonly limits: CgroupLimits;
  /** Each job's cores and memory here, as the controller last said. */
  private readonly jobLimits = new Map<number, JobLimits>();
  /**
   * Jobs whose cgroups are made (limits written), with their v2 cgroup if they have one. A v2
   * cgroup is made for each job and removed after it, not kept for the next as v1 ones are
   * (cgroup-spares.ts): the kernel refuses to rename a v2 cgroup (EPERM), so a kept one could not
   * carry the job's id in its name (`/proc/PID/cgroup` shows `job-N`), and with a memory
   * controller it would start charged with what the last job left.
   */
  private readonly made = new Map<number, string | undefined>();
  /** Each job's GPU device files it may not use, and the fence that keeps it off them. */
  private readonly denied = new Map<number, readonly Device[]>();
  private readonly fences = new Map<number, DeviceFence>();
  /** The id of the agent's thread, where it is not the process's main thread: it joins jobs' v1 cgroups itself (fromInside). */
  private threadId = workerThreadId();

  /** `sentinel`: one shared with the other agents of this process (`ebb up`'s); default: its own. */
  constructor(name: string, recordPath: string, sentinel?: Sentinel) {
    const safeName = name.replace(/[^A-Za-z0-9._-]/g, "_");
    const leaf = `ebb-agent-${safeName}-${process.pid}`;
    sweepStaleCgroups(Containment.parents(), safeName);
    this.base = Containment.makeBase(leaf);
    this.limits = new CgroupLimits(this.base, leaf);
    const guard = sentinel ?? new Sentinel(recordPath);
    this.sentinel = guard.add({ record: recordPath, base: this.base, v1: this.limits.v1Bases }) ? guard : undefined;
    log.info(this.base ? `jobs run in cgroups under ${this.base}` : "no writable cgroup v2: jobs are tracked by process group");
    log.info(this.limits.describe());
  }

  /** Where the agent makes its cgroups: its own cgroup in v2 and, for root, in the v1 hierarchies it may use. */
  private static parents(): string[] {
    const v1 = process.getuid?.() === 0 ? CONTROLLERS.map(v1Own) : [];
    return [...new Set([cgroup2Root(), ...v1].filter((p): p is string => p !== undefined))];
  }

  private static makeBase(leaf: string): string | undefined {
    const root = cgroup2Root();
    if (!root) return undefined;
    const base = join(root, leaf);
    try {
      mkdirSync(base, { recursive: true });
      if (!existsSync(join(base, "cgroup.procs"))) return undefined;
      // Moving a process in needs write access to the cgroup.procs files: try with ourselves' parent's rules.
      accessSync(join(base, "cgroup.procs"), constants.W_OK);
      return base;
    } catch {
      return undefined;
    }
  }

  /** A job's cores and memory: written to its cgroups now if they are made, else when they are. */
  setLimits(jobId: number, limits: JobLimits): void {
    const old = this.jobLimits.get(jobId);
    this.jobLimits.set(jobId, limits);
    if (this.made.has(jobId) && (old?.memMiB !== limits.memMiB || old.cpus.join() !== limits.cpus.join())) this.limits.apply(jobId, this.made.get(jobId), limits);
  }

  /**
   * Whether jobs can be fenced off GPUs here (a device program on a cgroup v2 of the agent's, tried
   * once); false says why in the log. Only then do jobs get GPU indices of their own (placement.ts).
   */
  canFence(): boolean {
    const probe = this.base && join(this.base, "fence-probe");
    try {
      if (!probe) throw new Error("no cgroup v2 of the agent's");
      mkdirSync(probe, { recursive: true });
      try {
        DeviceFence.attach(probe, []).close();
      } finally {
        rmdirSync(probe);
      }
      return true;
    } catch (e) {
      log.warn(`jobs are not fenced off the GPUs they do not hold (${(e as Error).message}): CUDA_VISIBLE_DEVICES and the like alone choose a job's GPUs`);
      return false;
    }
  }

  /**
   * The device files of the node's GPUs the job does not hold (gpu-devices.ts): fenced off in its
   * cgroup before its first process, or at once if it has some. A job that cannot be fenced does
   * not run here: its GPU variables count its own GPUs from 0, which unfenced would be others'.
   */
  setDenied(jobId: number, deny: readonly Device[]): void {
    const key = (d: readonly Device[]) => d.map((x) => `${x.kind}${x.major}:${x.minor}`).join();
    const old = this.denied.get(jobId);
    this.denied.set(jobId, deny);
    if (!this.made.has(jobId) || (old !== undefined && key(old) === key(deny))) return;
    try {
      this.fence(jobId, this.made.get(jobId));
    } catch (e) {
      log.error(`${(e as Error).message}; its processes here are killed`, { job: jobId });
      this.killJob(jobId);
    }
  }

  /** Whether the job is fenced off GPUs (its processes must start in its cgroup, or not at all). */
  fenced(jobId: number): boolean {
    return this.fences.has(jobId);
  }

  private fence(jobId: number, cgroup: string | undefined): void {
    const deny = this.denied.get(jobId) ?? [];
    const fence = this.fences.get(jobId);
    try {
      if (fence) fence.replace(deny);
      else {
        if (cgroup === undefined) throw new Error("no cgroup v2 for the job");
        this.fences.set(jobId, DeviceFence.attach(cgroup, deny));
      }
    } catch (e) {
      throw new Error(`cannot fence job ${jobId} off the GPUs it does not hold: ${(e as Error).message}`);
    }
  }

  /** Whether the memory of jobs is confined here (an OOM kill can end them). */
  get confinesMemory(): boolean {
    return this.limits.confinesMemory;
  }

  /**
   * Where a process of the job starts: `cgroup`, its v2 cgroup (made, with its limits, on first
   * use), for Bun.spawn's `cgroup` option, which places the child there before it runs its program;
   * `join`, the v1 cgroup.procs files it writes itself into first (`joinArgv`, procs.ts).
   */
  prepare(jobId: number): { cgroup: string | undefined; join: string[] } {
    if (!this.made.has(jobId)) {
      const cgroup = this.newDir(jobId);
      this.made.set(jobId, cgroup);
      const limits = this.jobLimits.get(jobId);
      if (limits) this.limits.apply(jobId, cgroup, limits);
    }
    if (this.denied.has(jobId) && !this.fences.has(jobId)) this.fence(jobId, this.made.get(jobId));
    return { cgroup: this.made.get(jobId), join: this.limits.joinFiles(jobId) };
  }

  /** Whether processes of the job join its v1 cgroups by being started from inside them (fromInside), not by `join` (procs.ts joinArgv). */
  joinsByThread(jobId: number): boolean {
    return this.threadId !== undefined && this.limits.threadMoves(jobId).length > 0;
  }

  /**
   * Runs `spawn` with the agent's thread in the job's v1 cgroups and bound to `cpus` (withAffinity),
   * so that the process it starts is in them and bound from its birth; the thread then goes back to
   * the agent's cgroups and CPU mask. Joining a v1 cpuset binds the thread to the cpuset's CPUs
   * (the kernel sets its mask): when those are `cpus` (a one-rank job's rank has all of the job's),
   * no binding of its own follows. A v1
   * cgroup that refuses the thread is passed over, as joinArgv does. A thread that cannot go back
   * is said loudly and joins no more jobs: later processes join through the shell.
   */
  fromInside<T>(jobId: number, cpus: readonly number[] | undefined, spawn: () => T): T {
    const moves = this.threadId === undefined ? [] : this.limits.threadMoves(jobId);
    if (moves.length === 0) return withAffinity(cpus, spawn);
    // One mask saved and restored for both: the cpuset's CPUs the thread gets inside, and `cpus`.
    return keepingAffinity(() => {
      let bound = false;
      for (const m of moves)
        try {
          writeCgroupFile(m.into, CALLING_THREAD);
          if (m.cpus !== undefined && cpus !== undefined && m.cpus === formatIndexList(cpus)) bound = true;
        } catch {
          /* as joinArgv: the job runs without that v1 controller */
        }
      try {
        if (!bound) bindOwnThread(cpus);
        return spawn();
      } finally {
        for (const m of moves)
          try {
            stepBack(m.back);
          } catch (e) {
            this.threadId = undefined;
            log.error(`the agent's thread could not leave job ${jobId}'s cgroup (${m.back}); processes join their cgroups through a shell from now on`, { error: e });
          }
      }
    });
  }

  /**
   * Moves a running process (a warm rank, procs.ts) into the job's cgroups, as `prepare` places a
   * new one: the v2 cgroup must take it (else this rejects and the caller kills the rank); a v1
   * file that refuses is passed over, as `joinArgv` does. Memory it touched before stays counted where it was.
   */
  async enter(jobId: number, pid: number): Promise<void> {
    const place = this.prepare(jobId);
    // Off the agent's thread: a move waits for the kernel (an RCU grace period, 5-15 ms), and on
    // `ebb up` every agent shares that thread.
    if (place.cgroup !== undefined) await writeFile(join(place.cgroup, "cgroup.procs"), String(pid));
    for (const file of place.join)
      try {
        writeCgroupFile(file, String(pid));
      } catch {
        /* as joinArgv: the job runs without that v1 controller */
      }
  }

  /** The cgroup warm ranks wait in, under the agent's (made at first use), if there is one. */
  warmCgroup(): string | undefined {
    if (!this.base) return undefined;
    const dir = join(this.base, "warm");
    try {
      mkdirSync(dir, { recursive: true });
      return dir;
    } catch {
      return undefined;
    }
  }

  /** Notes the job's memory use (for kernels without memory.peak). */
  sample(jobId: number): void {
    this.limits.sample(jobId, this.dirOf(jobId));
  }

  /** What the job used on this node so far, from its cgroups; undefined without any. */
  usage(jobId: number): JobUsage | undefined {
    return this.limits.usage(jobId, this.dirOf(jobId));
  }

  /** The job's cgroup: the one its processes here were started in, else where its first would be. */
  private dirOf(jobId: number): string | undefined {
    return this.made.get(jobId) ?? (this.base && join(this.base, `job-${jobId}`));
  }

  /**
   * A new cgroup for the job: `job-<id>`, made anew where an earlier run's (a requeued job's) is
   * still there, and `job-<id>.<n>` while that one still holds processes. Never the earlier one:
   * once written `cgroup.kill`, a cgroup kills every process later cloned into it (seen on Linux
   * 6.18: a second run started there died of SIGKILL at once).
   */
  private newDir(jobId: number): string | undefined {
    if (!this.base) return undefined;
    for (let n = 0; n < 8; n++) {
      const dir = join(this.base, n === 0 ? `job-${jobId}` : `job-${jobId}.${n}`);
      try {
        mkdirSync(dir);
        return dir;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") return undefined;
      }
      try {
        rmdirSync(dir);
        mkdirSync(dir);
        return dir;
      } catch {
        /* its processes are still ending: the next name */
      }
    }
    return undefined;
  }

  /** The processes in the job's cgroup now. */
  pids(jobId: number): number[] {
    const dir = this.dirOf(jobId);
    return dir ? readPids(join(dir, "cgroup.procs")) : [];
  }

  /**
   * Kill every process of the job's cgroup (those that left their process group included). Only
   * one made for the job's processes: a job's is not there before, and after forgetJob it was
   * removed empty or killed then (the controller's SIGKILL at every job's end came after it, and
   * looked for the directory in vain: a system call a job).
   */
  killJob(jobId: number): void {
    const dir = this.made.get(jobId);
    if (dir !== undefined) killCgroup(dir);
  }

  /** The job's cgroups (and limits) once it is empty: the job has left this node. */
  forgetJob(jobId: number): void {
    const dir = this.dirOf(jobId);
    this.jobLimits.delete(jobId);
    this.made.delete(jobId);
    this.denied.delete(jobId);
    this.fences.get(jobId)?.close();
    this.fences.delete(jobId);
    this.limits.remove(jobId);
    if (!dir) return;
    try {
      rmdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EBUSY") return;
      // Processes that left the job's process groups: they go now, the cgroup a moment later.
      killCgroup(dir);
      setTimeout(() => {
        try {
          rmdirSync(dir);
        } catch {
          /* still busy, or gone: the agent's stop removes what is left */
        }
      }, 1000).unref();
    }
  }

  /** When the sentinel has done its work and ended (its exit code); undefined without one. */
  get ended(): Promise<number> | undefined {
    return this.sentinel?.ended;
  }

  /** The sentinel's pid; undefined without one. */
  get sentinelPid(): number | undefined {
    return this.sentinel?.pid;
  }

  /**
   * A clean stop (the agent has killed everything already): the sentinel does its work now and
   * removes the cgroups, or, shared, once the last agent it serves has stopped.
   */
  stop(): void {
    this.sentinel?.release();
  }

  /**
   * The end of a clean stop: kills what is still in the agent's cgroups (a warm rank or a job's
   * process still dying) and removes them bottom-up, waiting for the last to leave, itself rather
   * than leaving it all to the sentinel, which a kill of the service's whole cgroup can end with it.
   */
  async removeAll(): Promise<void> {
    const dirs = [this.base, ...this.limits.v1Bases].filter((d): d is string => d !== undefined);
    const left = await removeCgroups(dirs, STOP_WAIT_MS);
    if (left.length > 0) log.warn(`could not remove ${left.join(", ")}: processes in them did not end within ${STOP_WAIT_MS / 1000} s (the agent's next start removes them)`);
  }
}

/** This thread's id, if it is not the process's main thread (a Worker's); undefined on the main thread or without /proc. */
function workerThreadId(): number | undefined {
  try {
    const tid = Number(/\/task\/(\d+)$/.exec(readlinkSync("/proc/thread-self"))?.[1]);
    return tid > 0 && tid !== process.pid ? tid : undefined;
  } catch {
    return undefined;
  }
}

function readPids(path: string): number[] {
  try {
    return readFileSync(path, "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Kill every process in the cgroup `dir`. */
function killCgroup(dir: string): void {
  try {
    writeCgroupFile(join(dir, "cgroup.kill"), "1");
  } catch {
    for (const pid of readPids(join(dir, "cgroup.procs")))
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* gone */
      }
  }
}
