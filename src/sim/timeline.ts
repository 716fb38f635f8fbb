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
  /**
   * Arrivals given in time order before any other event, kept out of the heap (it then holds only
   * the running jobs' events, a few per job): they would be the first pushed, so at one time they
   * pop first, as from the heap.
   */
  private readonly arrivals: Event[] = [];
  private arrived = 0;
  /** When the armed tick fires; NaN: none armed. Kept beside the queue: an instant handles its tick after its events anyway. */
  private tickAt = Number.NaN;

  /** When the next event or tick is, if any. */
  next(): number | undefined {
    const ev = this.peek();
    if (!ev) return Number.isNaN(this.tickAt) ? undefined : this.tickAt;
    return Number.isNaN(this.tickAt) || ev.time <= this.tickAt ? ev.time : this.tickAt;
  }

  /** The next event at t, if any (ticks are not events: see `tickAt`). */
  popAt(t: number): Event | undefined {
    const a = this.arrivals[this.arrived];
    if (a && a.time === t) {
      this.arrived++;
      return a;
    }
    const ev = this.q.peek();
    return ev && ev.time === t ? this.q.pop() : undefined;
  }

  private peek(): Event | undefined {
    const a = this.arrivals[this.arrived];
    const ev = this.q.peek();
    return a && (!ev || a.time <= ev.time) ? a : ev;
  }

  /** Whether the tick fires at t (it is then no longer armed). */
  ticksAt(t: number): boolean {
    if (this.tickAt !== t) return false;
    this.tickAt = Number.NaN;
    return true;
  }

  arrival(job: SimJob): void {
    const last = this.arrivals[this.arrivals.length - 1];
    if (this.q.size > 0 || this.arrived > 0 || (last && last.time > job.submit)) this.q.push({ time: job.submit, kind: "arrive", job: job.id, version: 0 });
    else this.arrivals.push({ time: job.submit, seq: this.arrivals.length, kind: "arrive", job: job.id, version: 0 });
  }

  /** Availability change `index` (hosts.ts) at `at`. */
  hostChange(at: number, index: number): void {
    this.q.push({ time: at, kind: "host", job: index, version: 0 });
  }

  /** Its next step from t: a resize point, or its end, at its pace (none at pace 0: its limit ends it). */
  nextStep(r: JobRun, t: number): void {
    r.version++;
    if (r.speed <= 0) return;
    const k = r.job.work.iterations;
    const left = ((1 - r.done) * workTime(r, r.n)) / r.speed;
    if (k) {
      const next = Math.floor(r.done * k + 1e-7) + 1;
      if (next < k) {
        this.q.push({ time: t + ((next / k - r.done) * workTime(r, r.n)) / r.speed, kind: "point", job: r.job.id, version: r.version });
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
    if (Number.isNaN(this.tickAt)) this.tickAt = at;
  }
}
