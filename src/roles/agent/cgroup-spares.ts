/**
 * Empty v1 cgroups of jobs that left, kept for the next jobs of one hierarchy: a job's cgroup
 * with no task left is renamed `spare-N`, and a later job's cgroup is one of them renamed to its
 * name (`job-N`), where a mkdir and an rmdir cost several times that in system time (a v1 memory
 * cgroup's ~60-80 µs, a cpuset's ~75 with its first writes; two renames ~6-12, on an idle
 * machine), and what was written to it (a cpuset's CPUs, a memory cgroup's limit) need not be
 * written again if it is the same: a spare that has the value wanted is taken first. Under load
 * each system call costs several times more, and a memory cgroup's checks (below) are as many
 * calls as its mkdir, rmdir and limits were: the agent's thread spent ~8 % less CPU in its
 * cgroup code a null job, ~820 µs where it spent ~850 (4 agents, load 26-30, 4 ABBA rounds).
 *
 * Nothing of one job's passes to the next: a spare is kept only with no task in it, and none can
 * enter it after (only a task inside, or root, moves one in: the agent moves tasks only into its
 * jobs' cgroups, by their names); `fresh` says whether one is as a new cgroup would be for the
 * next job, counters included (a memory cgroup: at most a page charged to it, its peak
 * reset, cgroup-limits.ts); while none is, jobs get new cgroups.
 */
import { renameSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { readKernelRecord } from "../../util/kernel-file.ts";

/** At most this many spares a hierarchy. */
const MAX_SPARES = 16;

export class SpareCgroups {
  /** Each with the value last written to it; first, the one kept or looked at longest ago. */
  private readonly spares: { dir: string; value: string }[] = [];
  private next = 0;

  /** `base`: the agent's directory in the hierarchy; `fresh(dir)`: whether a spare may be the next job's now (making it so, if need be). */
  constructor(
    private readonly base: string,
    private readonly fresh: (dir: string) => boolean = () => true,
  ) {}

  /**
   * Keeps the job cgroup `dir`, which has `value` written, as a spare if no task is in it (the
   * oldest spare removed if there are as many as are kept); true if it did.
   */
  keep(dir: string, value: string): boolean {
    if (!noTasks(dir)) return false;
    const spare = join(this.base, `spare-${this.next++}`);
    try {
      renameSync(dir, spare);
    } catch {
      return false;
    }
    if (this.spares.length >= MAX_SPARES) remove(this.spares.shift()!.dir);
    this.spares.push({ dir: spare, value });
    return true;
  }

  /**
   * A spare renamed to `dir` (the first with `want` written, else the first), if it is fresh:
   * the value it has; else undefined, and the caller makes `dir` anew. One that is not fresh goes
   * last: the first is the one that has waited longest since it was kept or looked at, the
   * likeliest to be fresh (of memory cgroups whose last job had ended within 5 ms, 1 % were;
   * within 20-100 ms, half: 840 looked at under 4 agents' null jobs), and one that never becomes fresh is removed when it is first in
   * a full set.
   */
  take(dir: string, want: string): string | undefined {
    const i = Math.max(0, this.spares.findIndex((s) => s.value === want));
    const spare = this.spares[i];
    if (!spare) return undefined;
    this.spares.splice(i, 1);
    if (!this.fresh(spare.dir)) {
      this.spares.push(spare);
      return undefined;
    }
    try {
      renameSync(spare.dir, dir);
      return spare.value;
    } catch {
      remove(spare.dir);
      return undefined;
    }
  }
}

function remove(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    /* gone; or busy, which a spare never is: the agent's stop removes it */
  }
}

/** Whether no task is in the v1 cgroup `dir` (a file of many records, but only whether it is empty matters: kernel-file.ts). */
function noTasks(dir: string): boolean {
  try {
    return readKernelRecord(join(dir, "tasks")) === "";
  } catch {
    return false;
  }
}
