/**
 * The figures a run is judged by. Times in seconds.
 * - makespan: last end - first submit;
 * - wait: start - submit (mean, 95th percentile);
 * - turnaround: end - submit (mean);
 * - bounded slowdown: max(1, turnaround / max(reference, tau)), tau = 10 s, with the job's run time
 *   at the size it asked for as reference (so a job slowed by shrinking counts as slowed);
 * - utilization: node-seconds held by jobs / (nodes * makespan); on shared nodes core-seconds /
 *   (cores * makespan);
 * - work utilization: the trace's work (each job's node-seconds at the size it asked for) /
 *   (nodes * makespan): how much capacity turned into the trace's work. Equal to utilization for
 *   rigid jobs; higher when jobs ran at more efficient sizes. Informative only. On shared nodes in
 *   core-seconds (a job of whole nodes counts all their cores).
 * - resizes: adaptations carried out.
 * With availability (hosts.ts): moves made (a move's shrink begun; it counts as two resizes too),
 * jobs a move was declined for at least once, and node-hours the nodes' owners held.
 */
import type { SimRun } from "./engine.ts";

export interface Metrics {
  jobs: number;
  makespan: number;
  meanWait: number;
  p95Wait: number;
  meanTurnaround: number;
  meanBoundedSlowdown: number;
  utilization: number;
  workUtilization: number;
  resizes: number;
  moves?: number;
  movesDeclined?: number;
  ownerNodeHours?: number;
}

export const TAU = 10;

export function metrics(run: SimRun, tau = TAU): Metrics {
  const jobs = run.jobs;
  if (jobs.length === 0) return { jobs: 0, makespan: 0, meanWait: 0, p95Wait: 0, meanTurnaround: 0, meanBoundedSlowdown: 0, utilization: 0, workUtilization: 0, resizes: 0 };
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  let wait = 0;
  let turn = 0;
  let bsld = 0;
  let work = 0;
  const waits: number[] = [];
  for (const j of jobs) {
    first = Math.min(first, j.submit);
    last = Math.max(last, j.end);
    const w = j.start - j.submit;
    const ta = j.end - j.submit;
    waits.push(w);
    wait += w;
    turn += ta;
    bsld += Math.max(1, ta / Math.max(j.reference, tau));
    work += j.reference * (j.cores ?? j.nodes);
  }
  const makespan = last - first;
  return {
    jobs: jobs.length,
    makespan,
    meanWait: wait / jobs.length,
    p95Wait: percentile(waits, 95),
    meanTurnaround: turn / jobs.length,
    meanBoundedSlowdown: bsld / jobs.length,
    utilization: makespan > 0 ? run.busyArea / (run.capacity * makespan) : 0,
    workUtilization: makespan > 0 ? work / (run.capacity * makespan) : 0,
    resizes: run.resizes,
    ...(run.hosts ? { moves: run.hosts.moves, movesDeclined: run.hosts.declined, ownerNodeHours: run.hosts.nodeHours.owner } : {}),
  };
}

/** Nearest-rank percentile. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return 0;
  const s = Float64Array.from(xs).sort();
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
