/**
 * Every process an agent starts, by job. Each runs in its own process group so that a signal
 * reaches the whole tree it forks. Group ids are written to a file so that an agent that was
 * killed can, when restarted, kill what its previous life left behind.
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { logger } from "../../util/log.ts";

const log = logger("agent");

interface GroupRecord {
  jobId: number;
  /** Leader start time (clock ticks since boot, /proc/PID/stat field 22): guards against pid reuse. */
  start: string;
}

function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

export class ProcessTable {
  private readonly live = new Map<number, Set<ChildProcess>>();
  private readonly groups = new Map<number, GroupRecord>();

  constructor(
    private readonly stateFile: string,
    /** A job's last process exited. */
    private readonly onJobEmpty: (jobId: number) => void,
  ) {}

  spawn(jobId: number, argv: readonly string[], opts: SpawnOptions): ChildProcess {
    const child = spawn(argv[0]!, argv.slice(1), { ...opts, detached: true });
    let set = this.live.get(jobId);
    if (!set) this.live.set(jobId, (set = new Set()));
    set.add(child);
    const pid = child.pid;
    if (pid !== undefined) {
      this.groups.set(pid, { jobId, start: startTimeOf(pid) ?? "" });
      // Written now, not later: an agent killed a moment after a spawn must still know the group.
      this.save();
    }
    const done = () => {
      if (!set!.delete(child)) return;
      if (set!.size === 0) {
        this.live.delete(jobId);
        this.onJobEmpty(jobId);
      }
    };
    child.once("exit", done);
    child.once("error", done);
    return child;
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
   */
  signal(jobId: number, signal: NodeJS.Signals): void {
    for (const [pgid, rec] of this.groups) {
      if (rec.jobId !== jobId) continue;
      try {
        process.kill(-pgid, signal);
      } catch {
        /* already gone */
      }
      if (signal === "SIGKILL") this.groups.delete(pgid);
    }
    if (signal === "SIGKILL") this.save();
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

  killAll(): void {
    for (const jobId of new Set([...this.groups.values()].map((g) => g.jobId))) this.signal(jobId, "SIGKILL");
  }

  /** Kill process groups a previous incarnation of this agent recorded and that still exist. */
  reapLeftovers(): number {
    if (!existsSync(this.stateFile)) return 0;
    let reaped = 0;
    try {
      const recorded = JSON.parse(readFileSync(this.stateFile, "utf8")) as Record<string, GroupRecord>;
      for (const [pgidText, rec] of Object.entries(recorded)) {
        const pgid = Number(pgidText);
        if (!rec.start || startTimeOf(pgid) !== rec.start) continue;
        try {
          process.kill(-pgid, "SIGKILL");
          reaped++;
        } catch {
          /* gone */
        }
      }
    } catch (e) {
      log.warn("could not read the process record of a previous run", { file: this.stateFile, error: e });
    }
    writeFileSync(this.stateFile, "{}");
    if (reaped > 0) log.warn(`killed ${reaped} process groups left by a previous run of this agent`);
    return reaped;
  }

  private save(): void {
    try {
      writeFileSync(this.stateFile, JSON.stringify(Object.fromEntries(this.groups)));
    } catch (e) {
      log.warn("could not record process groups", { error: e });
    }
  }
}
