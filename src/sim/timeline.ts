/**
 * The replay's future: each job's arrival, its next step (the next resize point of a job with
 * outer iterations, else its end, at its current size), the kill at its limit, the commit of its
 * resize, and the periodic tick. A job's step and commit carry its `version`, its limit kill its
 * `limitVersion`: rescheduling bumps them, so older events of the job go stale.
 */
import { EventQueue, type Event } from "./heap.ts";
import type { SimJob } from "./job.ts";
import { workTime, type JobRun } from "./job-run.ts";

export class Timeline {
  private readonly q = new EventQueue();
  /** When the armed tick fires; NaN: none armed. */
  private tickAt = Number.NaN;

  get size(): number {
    return this.q.size;
  }

  peek(): Event | undefined {
    return this.q.peek();
  }

  pop(): Event | undefined {
    const ev = this.q.pop();
    if (ev?.kind === "tick") this.tickAt = Number.NaN;
    return ev;
  }

  arrival(job: SimJob): void {
    this.q.push({ time: job.submit, kind: "arrive", job: job.id, version: 0 });
  }

  /** Its next step from t: a resize point, or its end. */
  nextStep(r: JobRun, t: number): void {
    r.version++;
    const k = r.job.work.iterations;
    const left = (1 - r.done) * workTime(r, r.n);
    if (k) {
      const next = Math.floor(r.done * k + 1e-7) + 1;
      if (next < k) {
        this.q.push({ time: t + (next / k - r.done) * workTime(r, r.n), kind: "point", job: r.job.id, version: r.version });
        return;
      }
    }
    this.q.push({ time: t + left, kind: "end", job: r.job.id, version: r.version });
  }

  /** (Re)arms the kill at start + limit. */
  armLimit(r: JobRun): void {
    r.limitVersion++;
    this.q.push({ time: r.start + r.limit, kind: "limit", job: r.job.id, version: r.limitVersion });
  }

  /** Its resize commits at `at` (its next step waits for it). */
  commitAt(r: JobRun, at: number): void {
    r.version++;
    this.q.push({ time: at, kind: "commit", job: r.job.id, version: r.version });
  }

  /** A tick at `at`, unless one is armed already. */
  armTick(at: number): void {
    if (!Number.isNaN(this.tickAt)) return;
    this.tickAt = at;
    this.q.push({ time: at, kind: "tick", job: -1, version: 0 });
  }
}
