/**
 * Keeping a job's processes where the agent can kill them all, even after the agent itself dies.
 *
 * - Where the host offers a writable cgroup v2 hierarchy, every job gets a cgroup under the agent's
 *   own (`ebb-agent-NAME-PID/job-N`); each process starts in it (the kernel places it there before
 *   it runs its program), so whatever it forks, `setsid` or not, stays inside, and `cgroup.kill`
 *   ends them all.
 * - Everywhere, a sentinel: a small shell process that waits for EOF on a pipe only the agent holds.
 *   When the agent dies (SIGKILL included) the pipe closes and the sentinel kills the agent's cgroup
 *   and every process group of the agent's record whose leader is still the one recorded.
 *   It ignores HUP, INT and TERM: what signals a whole tree or step at once (Slurm ending the
 *   allocation of `ebb up --slurm`, a terminal hanging up) reaches the agent and the sentinel
 *   together, and a sentinel killed then left the agent's cgroups behind.
 *   It reads each leader's start time with shell builtins (no process per record line): the
 *   record holds up to ~256 groups that ended, and a `sed | cut` per line cost 3 forks each —
 *   about 6 CPU seconds and 37 s per agent at load 28, after every stop.
 */
import type { Subprocess } from "bun";
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { logger } from "../../util/log.ts";
import { SYSTEM_PATH } from "../system-path.ts";

const log = logger("agent");

const SENTINEL = `
trap '' HUP INT TERM
cat >/dev/null
record=$1 base=$2
if [ -n "$base" ] && [ -d "$base" ]; then
  echo 1 >"$base/cgroup.kill" 2>/dev/null || for f in "$base"/*/cgroup.procs; do xargs -r kill -9 <"$f" 2>/dev/null; done
fi
if [ -f "$record" ]; then
  set -f
  while read -r pgid job start; do
    [ -r "/proc/$pgid/stat" ] || continue
    read -r st <"/proc/$pgid/stat" 2>/dev/null || continue
    set -- \${st##*) }
    [ $# -ge 20 ] || continue
    shift 19
    [ "$1" = "$start" ] && kill -KILL "-$pgid" 2>/dev/null
  done <"$record"
  set +f
fi
if [ -n "$base" ]; then
  for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    for d in "$base"/*/; do rmdir "$d" 2>/dev/null; done
    rmdir "$base" 2>/dev/null
    [ -d "$base" ] || break
    sleep 0.1
  done
fi
`;

/** The mount point of the cgroup v2 hierarchy and this process's cgroup in it, if there is one. */
export function cgroup2Root(): string | undefined {
  try {
    const mount = readFileSync("/proc/self/mountinfo", "utf8")
      .split("\n")
      .map((l) => l.split(" "))
      .find((f) => f[f.indexOf("-") + 1] === "cgroup2")?.[4];
    const own = /^0::(\S*)$/m.exec(readFileSync("/proc/self/cgroup", "utf8"))?.[1];
    if (!mount || own === undefined) return undefined;
    return join(mount, own);
  } catch {
    return undefined;
  }
}

export class Containment {
  private readonly sentinel: Subprocess<"pipe", "ignore", "ignore"> | undefined;
  private stopping = false;
  /** The agent's cgroup (undefined where cgroup v2 cannot be used). */
  readonly base: string | undefined;

  constructor(name: string, recordPath: string) {
    this.base = Containment.makeBase(name);
    try {
      // Its own PATH: the agent's may lack the tools it runs (cat, xargs, rmdir, sleep), and a
      // sentinel whose cat is not found ends at once and guards nothing.
      this.sentinel = Bun.spawn(["/bin/sh", "-c", SENTINEL, "ebb-sentinel", recordPath, this.base ?? ""], { stdin: "pipe", stdout: "ignore", stderr: "ignore", detached: true, env: { PATH: SYSTEM_PATH } });
      this.sentinel.unref();
      void this.sentinel.exited.then((code) => {
        if (!this.stopping) log.warn(`the sentinel ended (exit ${code}) while the agent runs: its jobs will not be killed if the agent dies`);
      });
    } catch (e) {
      log.warn("could not start the sentinel that kills jobs if the agent dies", { error: e });
    }
    log.info(this.base ? `jobs run in cgroups under ${this.base}` : "no writable cgroup v2: jobs are tracked by process group");
  }

  private static makeBase(name: string): string | undefined {
    const root = cgroup2Root();
    if (!root) return undefined;
    const base = join(root, `ebb-agent-${name.replace(/[^A-Za-z0-9._-]/g, "_")}-${process.pid}`);
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

  /**
   * The job's cgroup directory (made on first use), for Bun.spawn's `cgroup` option: the child is
   * placed in it before it runs its program. Undefined without cgroups.
   */
  cgroupOf(jobId: number): string | undefined {
    if (!this.base) return undefined;
    const dir = join(this.base, `job-${jobId}`);
    try {
      mkdirSync(dir, { recursive: true });
      return dir;
    } catch {
      return undefined;
    }
  }

  /** Kill every process of the job's cgroup (those that left their process group included). */
  killJob(jobId: number): void {
    if (!this.base) return;
    const dir = join(this.base, `job-${jobId}`);
    if (!existsSync(dir)) return;
    try {
      writeFileSync(join(dir, "cgroup.kill"), "1");
    } catch {
      for (const pid of readPids(join(dir, "cgroup.procs")))
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          /* gone */
        }
    }
  }

  /** The job's cgroup once it is empty. */
  forgetJob(jobId: number): void {
    if (!this.base) return;
    const dir = join(this.base, `job-${jobId}`);
    if (readPids(join(dir, "cgroup.procs")).length > 0) return;
    try {
      rmdirSync(dir);
    } catch {
      /* not empty yet, or gone */
    }
  }

  /** When the sentinel has done its work and ended (its exit code); undefined without one. */
  get ended(): Promise<number> | undefined {
    return this.sentinel?.exited;
  }

  /** A clean stop: the sentinel does its work now (the agent has killed everything already) and removes the cgroups. */
  stop(): void {
    this.stopping = true;
    try {
      void this.sentinel?.stdin.end();
    } catch {
      /* gone */
    }
  }
}

function readPids(path: string): number[] {
  try {
    return readFileSync(path, "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
