/**
 * squeue --start: when each pending job is expected to start, from one replay of the scheduler's
 * plans with every running job taken to run to its limit (sched/predict.ts replayAll), one step
 * (one plan) per turn of the event loop and at most MAX_PREDICT_STEPS job ends ahead, as
 * `--test-only`'s. One replay serves every caller for FRESH_MS: a lab's users polling
 * `ebb queue --start` together cost the controller one.
 */
import { replayAll } from "../../sched/predict.ts";
import type { SchedulerLoop } from "./scheduler.ts";
import { MAX_PREDICT_STEPS } from "./test-only.ts";
import { nextTurn } from "./turns.ts";

/** What GET /v1/starts answers (api/schemas.ts Estimates): the estimates, the soonest first. */
export interface Estimates {
  time: string;
  jobs: { id: number; start: string; nodes: string[] }[];
  /** False: the replay stopped at its horizon before every pending job had started (`message` says so). */
  complete: boolean;
  message: string | null;
}

/** How long (ms) one replay's estimates are served. */
export const FRESH_MS = 5000;

export class ExpectedStarts {
  private last?: { at: number; view: Promise<Estimates> };

  constructor(private readonly scheduler: SchedulerLoop) {}

  /** The estimates of every pending job the scheduler sees (the caller filters what a token may see). */
  get(now = Date.now()): Promise<Estimates> {
    if (this.last && now - this.last.at < FRESH_MS) return this.last.view;
    const view = this.replay(now);
    this.last = { at: now, view };
    // A replay that failed is not served again.
    view.catch(() => (this.last = undefined));
    return view;
  }

  private async replay(now: number): Promise<Estimates> {
    const snap = this.scheduler.snapshot(now);
    const starts = new Map<number, { start: number; nodes: string[] }>();
    const steps = replayAll(snap, starts);
    let complete = false;
    for (let n = 1; ; n++) {
      if (steps.next().done) {
        complete = true;
        break;
      }
      if (n >= MAX_PREDICT_STEPS) break;
      await nextTurn();
    }
    const jobs = [...starts].sort((a, b) => a[1].start - b[1].start || a[0] - b[0]).map(([id, s]) => ({ id, start: new Date(s.start).toISOString(), nodes: s.nodes }));
    return {
      time: new Date(now).toISOString(),
      jobs,
      complete,
      message: complete ? null : `the replay stopped ${MAX_PREDICT_STEPS} job ends ahead: ${snap.pending.length - jobs.length} of ${snap.pending.length} pending jobs start later than that (or never on the nodes up now)`,
    };
  }
}
