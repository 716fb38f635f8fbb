/**
 * Every process an agent starts, by job. Each runs in its own process group (session) so that a
 * signal reaches the whole tree it forks. Group ids are recorded (group-log.ts) so that an agent
 * that was killed can, when restarted, kill what its previous life left behind.
 */
import { mark } from "../../util/trace.ts";
import { runAs, type Identity } from "../identity.ts";
import { withOwnUmask } from "../job-umask.ts";
import type { Subprocess } from "bun";
import { logger } from "../../util/log.ts";
import type { Containment } from "./containment.ts";
import type { GroupLog, GroupRecord } from "./group-log.ts";
import { bindThreads, withAffinity } from "./affinity.ts";
import { startsWarm, warmProgram, type WarmPool } from "./warm-pool.ts";
import { tierUp } from "./tier-up.ts";
import type { WarmClaim } from "../warm-rank.ts";
import { closeSync } from "node:fs";
import { readKernelRecord } from "../../util/kernel-file.ts";

const log = logger("agent");

/**
 * argv that writes its own pid into each of `files` (the job's cgroup v1 cgroup.procs), then
 * executes `argv`: the process is in the job's v1 cgroups before any program of the job runs.
 * Only where the agent's thread cannot start it inside them (containment.ts `fromInside`).
 * Root's shell with a fixed script and the agent's own paths; `argv` is passed on unread, as setpriv does.
 */
const JOIN =
  'while [ "$1" != -- ]; do { echo $$ >"$1"; } 2>/dev/null; shift; done; shift; ' +
  // A program that is not there gets the message a direct spawn gives (the shell's own says "not found").
  'case $1 in */*) [ -e "$1" ];; *) command -v -- "$1" >/dev/null;; esac || { echo "$1: No such file or directory" >&2; exit 127; }; exec "$@"';
export const joinArgv = (files: readonly string[], argv: string[]): string[] => (files.length === 0 ? argv : ["/bin/sh", "-c", JOIN, "ebb-join", ...files, "--", ...argv]);

/** Leader start time (clock ticks since boot, /proc/PID/stat field 22): guards against pid reuse. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readKernelRecord(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** A process's process group (/proc/PID/stat field 5). */
function pgidOf(pid: number): number | undefined {
  try {
    const stat = readKernelRecord(`/proc/${pid}/stat`);
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
  } catch {
    return undefined;
  }
}

export type Stdio = "pipe" | "ignore" | number;

export interface SpawnOptions {
  cwd: string;
  env: Record<string, string>;
  /** stdout, stderr, and optionally fd 3 ("pipe" there is a socketpair). */
  stdio: [Stdio, Stdio, Stdio?];
  /** Run as this user (the agent runs as root); cwd is then entered with the user's rights. */
  runAs?: Identity;
  /** CPU ids the process is bound to from its start (affinity.ts); absent: those of the agent. */
  cpus?: readonly number[];
  /** The read end of a pipe that is the process's standard input (the caller closes its copy); absent: /dev/null. */
  stdin?: number;
}

export interface Proc {
  pid: number;
  stdout: ReadableStream<Uint8Array> | null;
  stderr: ReadableStream<Uint8Array> | null;
  /** The agent's end of the socketpair the process has as fd 3. */
  fd3: number | undefined;
  exited: Promise<{ code: number | null; signal: string | null }>;
}

/** Why a program could not be started (its errno code, e.g. ENOENT). */
export class SpawnError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class ProcessTable {
  private readonly live = new Map<number, Set<Subprocess>>();
  private readonly groups = new Map<number, GroupRecord>();

  constructor(
    private readonly record: GroupLog,
    /** A job's last process exited (the job's cgroups are the caller's to read and remove). */
    private readonly onJobEmpty: (jobId: number) => void,
    /** Cgroups and the sentinel, where the agent has them. */
    private readonly containment?: Containment,
    /** Pre-started ranks (`--warm-ranks`) that ranks running `ebb exec` take instead of a cold start. */
    private readonly warm?: WarmPool,
  ) {}

  spawn(jobId: number, argv: readonly string[], opts: SpawnOptions): Proc {
    const [out, err, fd3] = opts.stdio;
    const proc = this.claimWarm(jobId, argv, opts) ?? this.startCold(jobId, argv, opts);
    tierUp.spawned();
    let set = this.live.get(jobId);
    if (!set) this.live.set(jobId, (set = new Set()));
    set.add(proc);
    const rec: GroupRecord = { jobId, start: startTimeOf(proc.pid) ?? "" };
    this.remember(proc.pid, rec);
    const exited = proc.exited.then(() => {
      rec.leaderReaped = true;
      set!.delete(proc);
      if (set!.size === 0 && this.live.get(jobId) === set) {
        this.live.delete(jobId);
        this.onJobEmpty(jobId);
      }
      const signal = proc.signalCode;
      return { code: signal ? null : proc.exitCode, signal: signal === null || signal === undefined ? null : String(signal) };
    });
    const stdio = (proc as unknown as { stdio: Array<number | null | undefined> }).stdio;
    return {
      pid: proc.pid,
      stdout: out === "pipe" ? (proc.stdout as ReadableStream<Uint8Array>) : null,
      stderr: err === "pipe" ? (proc.stderr as ReadableStream<Uint8Array>) : null,
      fd3: fd3 === "pipe" && typeof stdio[3] === "number" ? stdio[3] : undefined,
      exited,
    };
  }

  /** A process started as the job's user (the spawn's own drop or setpriv, then the shell: runAs), in the job's cgroups, bound to its CPUs. */
  private startCold(jobId: number, argv: readonly string[], opts: SpawnOptions): Subprocess {
    const [out, err, fd3] = opts.stdio;
    try {
      // As root, descriptor 0 carries the environment to the dropped shell: the rank's stdin comes after fd 3's PMI link, and the shell moves it to 0.
      const stdinAt = opts.stdin === undefined ? undefined : fd3 === undefined ? 3 : 4;
      const place = this.containment?.prepare(jobId);
      // Born in the job's v1 cgroups where the agent's thread may step into them; else a shell joins them first, as root.
      const byThread = this.containment?.joinsByThread(jobId) === true;
      const join = byThread ? [] : (place?.join ?? []);
      const fenced = this.containment?.fenced(jobId);
      const user = opts.runAs ? runAs(opts.runAs, opts.cwd, argv, { ...opts.env, USER: opts.runAs.user, LOGNAME: opts.runAs.user }, stdinAt, join.length === 0) : undefined;
      const own = user ? undefined : withOwnUmask(argv, opts.env);
      const command = joinArgv(join, user?.argv ?? [...own!.argv]);
      const options: Bun.SpawnOptions.OptionsObject<"ignore" | Uint8Array | number, Stdio, Stdio> = {
        cwd: user ? "/" : opts.cwd,
        env: user?.env ?? own!.env,
        ...user?.ids,
        stdio: user
          ? [user.stdin, out, err, ...(fd3 === undefined ? [] : [fd3]), ...(opts.stdin === undefined ? [] : [opts.stdin])]
          : [opts.stdin ?? "ignore", out, err, ...(fd3 === undefined ? [] : [fd3])],
        detached: true,
      };
      const start = () => this.start(command, options, place?.cgroup, fenced);
      return byThread ? this.containment!.fromInside(jobId, opts.cpus, start) : withAffinity(opts.cpus, start);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? "EIO";
      throw new SpawnError(code, spawnMessage(code, e as Error));
    }
  }

  /**
   * A warm rank (warm-pool.ts) for `argv`, if it is one the pool serves and one is idle: moved into
   * the job's cgroups and bound to its CPUs while it still waits, then handed the rank (WarmClaim on
   * its stdin), which it runs as the job's user. Undefined: the rank starts cold (none idle).
   */
  private claimWarm(jobId: number, argv: readonly string[], opts: SpawnOptions): Subprocess | undefined {
    const [out, err, fd3] = opts.stdio;
    if (!this.warm || out !== "pipe" || err !== "pipe" || (fd3 !== undefined && fd3 !== "pipe") || opts.stdin !== undefined || !startsWarm(opts.env)) return undefined;
    const program = warmProgram(argv, this.warm.ebbNames);
    if (!program) return undefined;
    const proc = this.warm.take();
    if (!proc) return undefined;
    const id = opts.runAs;
    const claim: WarmClaim = {
      ...(id ? { as: { uid: id.uid, gid: id.gid, groups: id.groups } } : {}),
      cwd: opts.cwd,
      env: id ? { ...opts.env, USER: id.user, LOGNAME: id.user } : opts.env,
      file: program.file,
      args: program.args,
    };
    // The claim goes once the rank is in the job's cgroups and on its CPUs, a move that waits for
    // the kernel off the agent's thread: meanwhile the rank is the job's (its process group is
    // killed with it) but runs nothing of the user's. One the kernel refuses is killed: the rank fails.
    void (async () => {
      await this.containment?.enter(jobId, proc.pid);
      bindThreads(proc.pid, opts.cpus);
      mark("a.claim", proc.pid);
      proc.stdin.write(JSON.stringify(claim));
      await proc.stdin.end();
    })().catch((e) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return; // killed with its job meanwhile
      log.warn(`cannot place a warm rank in job ${jobId}'s cgroup or on its CPUs, or hand it its rank; the rank is killed`, { error: e });
      proc.kill("SIGKILL");
    });
    const pmi = (proc as unknown as { stdio: Array<number | null | undefined> }).stdio[3];
    if (fd3 === undefined && typeof pmi === "number") closeSync(pmi);
    return proc as unknown as Subprocess;
  }

  /**
   * Bun.spawn, in the job's cgroup where there is one. A cgroup the kernel refuses to place the
   * process in (a host that changed its hierarchy under the agent) costs the job its cgroup, not
   * its start: it then runs tracked by its process group, as on hosts without cgroups. Not a job
   * fenced off GPUs (`fenced`): outside its cgroup it could open them all, and its GPU variables
   * count its own from 0, so this throws instead.
   */
  private start(command: string[], options: Bun.SpawnOptions.OptionsObject<"ignore" | Uint8Array | number, Stdio, Stdio>, cgroup: string | undefined, fenced = false): Subprocess {
    if (cgroup === undefined) return Bun.spawn(command, options) as Subprocess;
    try {
      return Bun.spawn(command, { ...options, cgroup }) as Subprocess;
    } catch (e) {
      if (fenced) throw new Error(`cannot start a process in the cgroup ${cgroup} that fences the job off the GPUs it does not hold: ${(e as Error).message}`);
      // The program itself may be what cannot start: then this throws its own error.
      const proc = Bun.spawn(command, options) as Subprocess;
      log.warn(`cannot start a process in the cgroup ${cgroup}; it runs tracked by its process group only`, { error: e });
      return proc;
    }
  }

  /** The pids of the processes it started that still run (each its process group's leader). */
  leaders(): number[] {
    return [...this.live.values()].flatMap((set) => [...set].map((p) => p.pid));
  }

  /** Jobs with at least one live process. */
  jobs(): number[] {
    return [...this.live.keys()];
  }

  has(jobId: number): boolean {
    return this.live.has(jobId);
  }

  /**
   * Signal every process group the job had on this node, including groups whose leader has exited
   * but whose members live on; SIGKILL also forgets them (the controller sends it when a job ends).
   * The record keeps them until it is compacted: reapLeftovers skips a killed group, its leader's
   * start time no longer matching. `except`: a group left alone (a batch shell's, for --signal).
   */
  signal(jobId: number, signal: NodeJS.Signals, except?: number): void {
    let orphaned: Set<number> | undefined;
    for (const [pgid, rec] of this.groups) {
      if (rec.jobId !== jobId || pgid === except) continue;
      // A group whose leader has exited may be gone too, and its id then anyone's new group's
      // (pid_max is 32,768 here): the agent is root, so kill(-pgid) would reach another user's
      // processes or root's. Its members, if any, are reached through the job's cgroup.
      // A leader this agent reaped is gone for sure: its id is not looked up (/proc/PID/stat, a throw).
      if (!this.containment || (rec.start !== "" && !rec.leaderReaped && startTimeOf(pgid) === rec.start)) this.signalGroup(pgid, signal);
      else (orphaned ??= new Set()).add(pgid);
      if (signal === "SIGKILL") this.groups.delete(pgid);
    }
    if (signal === "SIGKILL") this.containment?.killJob(jobId);
    else if (orphaned)
      for (const pid of this.containment!.pids(jobId))
        if (orphaned.has(pgidOf(pid) ?? -1))
          try {
            process.kill(pid, signal);
          } catch {
            /* gone */
          }
  }

  /**
   * A graceful kill's TERM has ended the job's processes here and the node says so (job.cleaned),
   * so no KILL comes for it: its groups are forgotten, as a SIGKILL forgets them. Before, such a
   * job's groups stayed in the table for the agent's life, every job.kill walking them all, and
   * the group record's compaction kept them too.
   */
  forget(jobId: number): void {
    for (const [pgid, rec] of this.groups) if (rec.jobId === jobId) this.groups.delete(pgid);
  }

  /** Signal one process group (a rank and whatever it forked). */
  signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      /* gone */
    }
  }

  /** The agent stops: every group is killed. */
  killAll(): void {
    for (const jobId of new Set([...this.groups.values()].map((g) => g.jobId))) this.signal(jobId, "SIGKILL");
    this.warm?.stop();
    this.containment?.stop();
  }

  /** Kill process groups a previous incarnation of this agent recorded and that still exist. */
  reapLeftovers(): number {
    let reaped = 0;
    try {
      for (const [pgid, rec] of this.record.read()) {
        if (!rec.start || startTimeOf(pgid) !== rec.start) continue;
        try {
          process.kill(-pgid, "SIGKILL");
          reaped++;
        } catch {
          /* gone */
        }
      }
    } catch (e) {
      log.warn("could not read the process record of a previous run", { error: e });
    }
    this.record.rewrite(this.groups);
    if (reaped > 0) log.warn(`killed ${reaped} process groups left by a previous run of this agent`);
    return reaped;
  }

  /**
   * Recorded now, not later: an agent killed a moment after a spawn must still know the group. The
   * record is compacted to the live groups once it holds mostly forgotten ones.
   */
  private remember(pgid: number, rec: GroupRecord): void {
    this.groups.set(pgid, rec);
    try {
      if (this.record.length > 2 * this.groups.size + 256) this.record.rewrite(this.groups);
      else this.record.append(pgid, rec);
    } catch (e) {
      log.warn("could not record process groups", { error: e });
    }
  }
}

/**
 * Reads a process's output stream to its end, as text, in order. After each piece, waits for
 * `room` (if it returns a promise) before reading on: the pipe fills and the writer blocks.
 */
export async function pump(stream: ReadableStream<Uint8Array> | null, onText: (text: string) => void, room?: () => Promise<void> | undefined): Promise<void> {
  if (!stream) return;
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    const text = decoder.decode(chunk, { stream: true });
    if (text) onText(text);
    const wait = room?.();
    if (wait) await wait;
  }
  const rest = decoder.decode();
  if (rest) onText(rest);
}

/**
 * What a failed spawn says. A process born inside a v1 memory cgroup at its limit cannot be
 * created, and the kernel's errno for that (E2BIG, ENOMEM) names no cgroup: say what it means.
 */
function spawnMessage(code: string, e: Error): string {
  if (code === "ENOENT") return "No such file or directory";
  if (code === "EACCES") return "Permission denied";
  if (code === "E2BIG" || code === "ENOMEM")
    return `${e.message}: the program's arguments and environment are too large, or the job's memory is at its limit (--mem); shorten them or ask for more memory`;
  return e.message;
}
