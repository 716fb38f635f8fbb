/**
 * How the scheduler sees a simulated job: a running job of the pass's snapshot (`SnapshotJob`, as
 * the controller builds it from its own state) and a job as `checkPlan` re-checks it.
 */
import { spmdPhase } from "../model/spmd.ts";
import type { PlanJobState, SnapshotJob } from "../sched/plan.ts";
import { atResizePoint, limitAfterResize, workTime, type JobRun } from "./job-run.ts";

/**
 * A running job at `now` (s). The view is kept on the job and rebuilt only when the job changed
 * (its step, resize or limit was rescheduled, or it reached or left a resize point); between
 * those, only its predicted end and remaining time follow the clock, worked out once per instant.
 * A pass must not keep a view past itself (none does: the controller builds new ones for every
 * pass).
 */
export function runningView(r: JobRun, now: number): SnapshotJob {
  const key = r.version * 2 + (r.atPoint ? 1 : 0);
  let v = r.view;
  if (!v || r.viewKey !== key || r.viewLimitKey !== r.limitVersion) {
    v = r.view = freshView(r);
    r.viewKey = key;
    r.viewLimitKey = r.limitVersion;
    if (r.resizes > 0) {
      // (An adaptation under way rescales the limit when it commits.)
      r.viewLimitEnd = (r.start + (r.adapting ? limitAfterResize(r, r.adaptEnd) : r.limit)) * 1000;
      r.viewWorkNow = workTime(r, r.n);
      r.viewWorkAt = r.adapting ? workTime(r, r.adaptTo) : r.viewWorkNow;
    }
  } else if (r.viewAt === now && r.mtctKey === r.sampled) {
    // A pass again at this instant (the last one changed something) on a job it did not change: the view reads the same.
    return v;
  }
  r.viewAt = now;
  const nowMs = now * 1000;
  if (r.mtctKey !== r.sampled) {
    // The samples' mean, as spmdPhase reads it (every sample is in the past), once per new sample.
    const phase = spmdPhase(r.samples, nowMs, 1);
    r.mtct = phase ? { average: phase.average, count: phase.count } : undefined;
    r.mtctKey = r.sampled;
  }
  v.mtct = r.mtct;
  if (r.resizes === 0) {
    // Never resized: what a rigid scheduler knows, start + its limit (the requested time, scaled
    // when it started below the size it asked for), whatever the true run time.
    v.expectedEnd = (r.start + r.limit) * 1000;
    v.remaining = Math.max(0, v.expectedEnd - nowMs) / 1000;
  } else {
    // Resized: its progress at the trace's estimate ratio (at least 1, an estimate is an upper
    // bound), and never past its limit, where it is killed.
    // (Its limit's end and work times are the view's, above: they change only with the job.)
    const adaptLeft = r.adapting ? Math.max(0, r.adaptEnd - now) : 0;
    // Its progress as of now, not stored (`done` is brought up to date at its own events only).
    const done = r.adapting ? r.done : Math.min(1, r.done + ((now - r.since) * r.speed) / r.viewWorkNow);
    // Slowed by its nodes' availability (hosts.ts), as the pass reads their states.
    const f = Math.max(1, r.estFactor) / Math.max(r.speed, 1e-9);
    const limitEnd = r.viewLimitEnd;
    v.remaining = Math.min((1 - done) * r.viewWorkNow * f, Math.max(0, limitEnd - nowMs) / 1000);
    v.expectedEnd = Math.min(limitEnd, nowMs + (adaptLeft + (1 - done) * r.viewWorkAt * f) * 1000);
  }
  return v;
}

/** What of a running job's view does not follow the clock. */
function freshView(r: JobRun): SnapshotJob & { expectedEnd: number; remaining: number } {
  return {
    id: r.job.id,
    nodes: r.n,
    nodeNames: r.names,
    minNodes: r.job.minNodes,
    maxNodes: r.job.maxNodes,
    preferredNodes: r.job.nodes,
    elastic: r.job.malleable,
    submitTime: r.pend.submitTime,
    startTime: r.start * 1000,
    timeLimit: r.limit,
    expectedEnd: 0,
    remaining: 0,
    samples: r.samples,
    adapting: r.adapting,
    resizingTo: r.adapting ? r.adaptTo : undefined,
    lastAdaptEnd: r.lastAdaptEnd === undefined ? undefined : r.lastAdaptEnd * 1000,
    adaptCost: r.costCount > 0 ? r.costSum / r.costCount : undefined,
    adaptCostModel: r.job.costModel,
    adaptEnd: r.adapting ? r.adaptEnd * 1000 : undefined,
    profile: r.profile,
    sizes: r.job.sizes,
    model: r.job.model,
    atResizePoint: atResizePoint(r),
    ...(r.shares ? { shares: r.shares } : {}),
    ...(r.job.request ? { resources: r.job.request } : {}),
  };
}

/** A job as the plan's re-check sees it. */
export function planJobState(r: JobRun): PlanJobState {
  const state = r.state === "running" && r.adapting ? "adapting" : r.state;
  return { state, nodes: r.names, minNodes: r.job.minNodes, maxNodes: r.job.maxNodes, sizes: r.job.sizes, resizable: r.job.malleable, atResizePoint: atResizePoint(r), ...(r.job.request ? { resources: r.job.request } : {}) };
}
