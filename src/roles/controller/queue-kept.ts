/**
 * The eligible waiting jobs, kept in queue order from pass to pass (issue 36): a pass over a
 * ~500-deep queue walked every waiting job, looked up its view and what its priority is made of,
 * and merged the users' runs again. Here each job's view and priority inputs (user, submit time,
 * tier) are made once, when it starts waiting or stops being blocked, and it is filed into its run
 * (its user and tier), kept in submit order: within a run that is queue order (sched/queue-runs.ts
 * says why). ClusterState tells which jobs changed (`watchQueue`: a submission, a start, an end, a
 * requeue, a hold or any other `blocked` change); only those are filed again.
 *
 * A pass still sets every waiting job's priority (the age factor moves with the clock and fair
 * share with usage: both exact, as `arrange` computes them) and merges the runs by it; with one
 * run (one user, one tier) the run is the queue. Used only where the queue's order is by runs:
 * no size factor and no limits (queue.ts `keeps`); the full `arrange` is the reference the
 * random test holds this to.
 */
import type { PriorityJob } from "../../sched/priority.ts";
import { runKey, submitOrder } from "../../sched/queue-runs.ts";
import type { PendingJob } from "../../sched/types.ts";
import type { ClusterState, JobRuntime } from "./state.ts";

interface Entry {
  job: JobRuntime;
  view: PendingJob;
  /** What its priority is made of (`size` 0: no size factor here). */
  pj: PriorityJob;
}

/** The waiting jobs of one user and one tier, in submit order. */
export interface Run {
  user: string;
  tier: number;
  entries: Entry[];
  /** Their views, aligned with `entries` (what a pass hands on, copied). */
  views: PendingJob[];
}

const entryOrder = (a: Entry, b: Entry): number => submitOrder(a.view, b.view);

export class KeptQueue {
  private readonly entries = new Map<number, Entry>();
  private readonly byRun = new Map<string, Run>();
  /** Jobs to file again before the next pass (undefined: every job, from the state). */
  private dirty: Set<number> | undefined;

  constructor(
    private readonly state: ClusterState,
    /** A waiting job's view and priority inputs. */
    private readonly make: (job: JobRuntime) => { view: PendingJob; pj: PriorityJob },
  ) {
    state.watchQueue((job) => this.dirty?.add(job.row.id));
  }

  /** Every job is filed again before the next pass (what the views are made of changed: the nodes). */
  resync(): void {
    this.dirty = undefined;
  }

  /** The runs, each in submit order, with every change since the last call filed. */
  runs(): Iterable<Run> {
    if (!this.dirty) this.refill();
    else if (this.dirty.size > 0) {
      for (const id of this.dirty) this.refile(id);
      this.dirty.clear();
    }
    return this.byRun.values();
  }

  private refill(): void {
    this.entries.clear();
    this.byRun.clear();
    this.dirty = new Set();
    for (const job of this.state.waiting()) if (!job.blocked) this.add(job, false);
    for (const run of this.byRun.values()) {
      run.entries.sort(entryOrder);
      run.views = run.entries.map((e) => e.view);
    }
  }

  private refile(id: number): void {
    const had = this.entries.get(id);
    const job = this.state.jobs.get(id);
    const waits = job !== undefined && job.row.state === "PENDING" && !job.blocked;
    // The same job with the view it had (scontrol update clears job.request: its view is made again).
    if (had && waits && had.job === job && job.request !== undefined) return;
    if (had) this.remove(had);
    if (waits) this.add(job, true);
  }

  private add(job: JobRuntime, inPlace: boolean): void {
    const { view, pj } = this.make(job);
    // A limit never holds a job back here (queue.ts keeps the queue only without limits).
    if (job.limited !== undefined) job.limited = undefined;
    const e: Entry = { job, view, pj };
    this.entries.set(view.id, e);
    const key = runKey(pj.user, pj.tier);
    let run = this.byRun.get(key);
    if (!run) this.byRun.set(key, (run = { user: pj.user, tier: pj.tier ?? 0, entries: [], views: [] }));
    const list = run.entries;
    if (!inPlace || list.length === 0 || entryOrder(list[list.length - 1]!, e) < 0) {
      list.push(e);
      run.views.push(view);
    } else {
      const i = upperBound(list, e);
      list.splice(i, 0, e);
      run.views.splice(i, 0, view);
    }
  }

  private remove(e: Entry): void {
    this.entries.delete(e.view.id);
    const key = runKey(e.pj.user, e.pj.tier);
    const run = this.byRun.get(key)!;
    const list = run.entries;
    // Mostly the head of its run starts: found from the front.
    const i = list[0] === e ? 0 : list.indexOf(e);
    list.splice(i, 1);
    run.views.splice(i, 1);
    if (list.length === 0) this.byRun.delete(key);
  }
}

/** Where `e` goes in `list` (in submit order): after every entry before it. */
function upperBound(list: readonly Entry[], e: Entry): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entryOrder(list[mid]!, e) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
