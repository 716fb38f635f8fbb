/**
 * Which pending jobs a scheduling pass may consider: jobs that are held, wait on a dependency or a
 * begin time, or whose array is at its `%N` limit are left out of the pass (their scheduler view is
 * cleared) and wait with Slurm's reason. Evaluated before every pass and when a job is submitted,
 * held or released; only jobs that have such a condition are looked at. A job submitted with
 * --kill-on-invalid-dep=yes whose dependency can never be met is cancelled before the next pass.
 */
import { dependencyStatus, ineligible, type Ineligible, type JobFacts } from "../../sched/eligibility.ts";
import type { JobStore } from "../../store/jobs.ts";
import { isActive } from "../../domain/job.ts";
import type { ClusterState, JobRuntime } from "./state.ts";

const hasConditions = (job: JobRuntime) => job.row.held || job.row.dependency !== null || job.row.beginTime !== null || job.row.arrayLimit !== null;

export class Eligibility {
  private readonly watched = new Set<number>();
  /** Ended jobs' outcomes, which never change again. */
  private readonly ended = new Map<number, JobFacts>();
  /** Jobs to cancel, each with why, found since the last pass. */
  private readonly invalid = new Map<number, string>();

  constructor(
    private readonly state: ClusterState,
    private readonly store: JobStore,
    /** Cancels a job whose dependency can never be met, saying why (set once the job table exists). */
    public cancelInvalid: (jobId: number, reason: string) => void = () => {},
  ) {}

  /** Evaluate pending jobs now (an array's tasks together), and again before every pass while they have conditions. */
  watch(jobs: readonly JobRuntime[], now: number): void {
    const some = jobs.filter((j) => hasConditions(j) || j.blocked);
    if (some.length === 0) return;
    for (const j of some) this.watched.add(j.row.id);
    this.evaluate(some, now);
  }

  /** Re-evaluate every watched job; jobs that became eligible get their scheduler view back. */
  refresh(now: number): void {
    this.cancelFound();
    if (this.watched.size === 0) return;
    const jobs: JobRuntime[] = [];
    for (const id of this.watched) {
      const job = this.state.jobs.get(id);
      if (job && job.row.state === "PENDING") jobs.push(job);
      else this.watched.delete(id);
    }
    this.evaluate(jobs, now);
    this.cancelFound();
  }

  private cancelFound(): void {
    for (const [id, reason] of this.invalid) {
      this.invalid.delete(id);
      if (this.state.jobs.get(id)?.row.state === "PENDING") this.cancelInvalid(id, reason);
    }
  }

  private evaluate(jobs: readonly JobRuntime[], now: number): void {
    let running: Map<number, number> | undefined;
    let byName: Map<string, JobRuntime[]> | undefined;
    for (const job of jobs) {
      const r = job.row;
      let array: { running: number; limit: number } | undefined;
      if (r.arrayLimit !== null && r.arrayJobId !== null) {
        running ??= this.runningTasks();
        array = { running: running.get(r.arrayJobId) ?? 0, limit: r.arrayLimit };
      }
      let blocker: number | undefined;
      if (r.dependency?.terms.some((t) => t.type === "singleton")) {
        byName ??= this.activeByName();
        blocker = byName.get(`${r.name}\0${r.user}`)?.find((o) => o !== job && (o.row.state !== "PENDING" || o.row.id < r.id))?.row.id;
      }
      const dependency = r.dependency ? dependencyStatus(r.dependency, (id) => this.facts(id), blocker) : undefined;
      const why = ineligible({ held: r.held, beginTime: r.beginTime, dependency, array }, now);
      // The first tasks of an array in line take the free places of its limit.
      if (!why && array && running) running.set(r.arrayJobId!, array.running + 1);
      this.set(job, why, now);
      if (why?.reason === "DependencyNeverSatisfied" && r.dependency?.kill) this.invalid.set(r.id, `DependencyNeverSatisfied: ${why.detail} (--kill-on-invalid-dep)`);
      if (!hasConditions(job)) this.watched.delete(r.id);
    }
  }

  private set(job: JobRuntime, why: Ineligible | undefined, now: number): void {
    const before = job.blocked;
    if (before?.reason === why?.reason && before?.detail === why?.detail) return;
    this.state.block(job, why);
    // What people look for in `ebb show`: which job broke a dependency, when a hold came or went.
    if (why && why.reason !== before?.reason && why.reason !== "JobHeldUser" && why.reason !== "JobArrayTaskLimit") this.store.addEvent(job.row.id, now, "waiting", `${why.reason}: ${why.detail}`);
  }

  private facts(id: number): JobFacts | undefined {
    const live = this.state.jobs.get(id);
    if (live) return { state: live.row.state, exitCode: live.row.exitCode };
    let f = this.ended.get(id);
    if (!f) {
      const row = this.store.outcomeOf(id);
      if (!row) return undefined;
      f = { state: row.state, exitCode: row.exitCode };
      if (!isActive(row.state)) this.ended.set(id, f);
    }
    return f;
  }

  private runningTasks(): Map<number, number> {
    const out = new Map<number, number>();
    for (const j of this.state.jobs.values()) if (j.row.arrayJobId !== null && j.row.state !== "PENDING") out.set(j.row.arrayJobId, (out.get(j.row.arrayJobId) ?? 0) + 1);
    return out;
  }

  private activeByName(): Map<string, JobRuntime[]> {
    const out = new Map<string, JobRuntime[]>();
    for (const j of this.state.jobs.values()) {
      const key = `${j.row.name}\0${j.row.user}`;
      const list = out.get(key) ?? [];
      list.push(j);
      out.set(key, list);
    }
    return out;
  }
}
