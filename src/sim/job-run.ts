/**
 * One job's life in the replay: where it is (future, pending, running, done), how far its work has
 * come, the resize under way, its time limit and what it measured. Plain data and the arithmetic
 * on it; the event handlers (events.ts) and the plan applier (apply.ts) change it.
 */
import type { NodeShare } from "../domain/resources.ts";
import type { MtctSample } from "../model/spmd.ts";
import { limitRatio, rescaleLimit } from "../sched/limits.ts";
import { pendingView } from "../sched/pending.ts";
import type { PlanResize, SnapshotJob } from "../sched/plan.ts";
import type { PendingJob, ProfilePoint } from "../sched/types.ts";
import type { SimJob } from "./job.ts";
import { stream } from "./random.ts";

/** MTCT samples kept per job (the policies read the recent ones). */
const SAMPLE_CAP = 32;

export interface JobRun {
  job: SimJob;
  /** How the queue sees it while it waits (`sched/pending.ts`, as live). */
  pend: PendingJob;
  state: "future" | "pending" | "running" | "done";
  /** Nodes held now (during a grow: the new size; during a shrink: the old one). */
  n: number;
  /** Fraction of its work done as of `since` (s). */
  done: number;
  /** Its pace (0..1): its slowest node's, by the nodes' availability (hosts.ts); 1 without. */
  speed: number;
  since: number;
  adapting: boolean;
  adaptTo: number;
  adaptEnd: number;
  /** Bumped whenever its next step or commit is rescheduled: older events of the job go stale. */
  version: number;
  start: number;
  end: number;
  startNodes: number;
  peak: number;
  /** MTCT samples since its last adaptation. */
  samples: MtctSample[];
  /** Samples taken in all (bumped by each one and by the reset at a commit), and their mean as of `mtctKey`. */
  sampled: number;
  mtct?: { average: number; count: number };
  mtctKey: number;
  lastAdaptEnd?: number;
  costSum: number;
  costCount: number;
  profile: ProfilePoint[];
  /** The next measurement opens a new profile point (a new size). */
  profileOpen: boolean;
  /** At a resize point this instant (jobs with outer iterations). */
  atPoint: boolean;
  resizes: number;
  /** The trace's estimate over its true run time at the size it asked for. */
  estFactor: number;
  /** Time limit (s from its start), rescaled at each resize. */
  limit: number;
  limitVersion: number;
  killed: boolean;
  /** The resize under way: its limit ratio (from what the job showed when it was asked) and when it was asked. */
  limitRatio: number;
  adaptAt: number;
  adaptFrom: number;
  /** A move's grow back (sched/moves.ts), begun when its shrink under way commits. */
  moveBack?: PlanResize;
  /** Its nodes in rank order, and those a shrink under way gives back when it commits. */
  names: string[];
  removing: string[];
  /** Shared nodes: its share of each of `names`. */
  shares?: NodeShare[];
  /** The pass's view of it while it runs (view.ts), and the state it was built for. */
  view?: SnapshotJob & { expectedEnd: number; remaining: number };
  viewKey: number;
  viewLimitKey: number;
  /**
   * What of a resized job's view follows neither the clock nor its pace, worked out with the view
   * (view.ts): its limit's end (ms; rescaled as the adaptation under way commits) and its whole
   * work's time at its current size and at the size it is adapting to (s).
   */
  viewLimitEnd: number;
  viewWorkNow: number;
  viewWorkAt: number;
  /** The instant (s) its clock-dependent part (`expectedEnd`, `remaining`, `mtct`) was worked out for; NaN: none. */
  viewAt: number;
}

export function newJobRun(job: SimJob): JobRun {
  const ref = job.work.time(job.nodes);
  return {
    job,
    pend: pendingView({ id: job.id, nodes: job.nodes, minNodes: job.minNodes, maxNodes: job.maxNodes, elastic: job.malleable, timeLimit: job.estimate, submitTime: job.submit * 1000, sizes: job.sizes, model: job.model, resources: job.request }),
    state: "future",
    n: 0,
    done: 0,
    speed: 1,
    since: 0,
    adapting: false,
    adaptTo: 0,
    adaptEnd: 0,
    version: 0,
    start: Number.NaN,
    end: Number.NaN,
    startNodes: 0,
    peak: 0,
    samples: [],
    sampled: 0,
    mtctKey: 0,
    costSum: 0,
    costCount: 0,
    profile: [],
    profileOpen: true,
    atPoint: false,
    resizes: 0,
    estFactor: ref > 0 ? job.estimate / ref : 1,
    limit: job.estimate,
    limitVersion: 0,
    killed: false,
    limitRatio: 1,
    adaptAt: 0,
    adaptFrom: 0,
    names: [],
    removing: [],
    viewKey: -1,
    viewLimitKey: -1,
    viewLimitEnd: Number.NaN,
    viewWorkNow: Number.NaN,
    viewWorkAt: Number.NaN,
    viewAt: Number.NaN,
  };
}

/** Run time of its whole work on p nodes. */
export function workTime(r: JobRun, p: number): number {
  return r.job.work.time(p);
}

/** Brings `done` up to t at its pace (no progress while it adapts). */
export function advance(r: JobRun, t: number): void {
  if (r.state === "running" && !r.adapting) r.done = Math.min(1, r.done + ((t - r.since) * r.speed) / workTime(r, r.n));
  r.since = t;
}

/** Whether a resize may happen now: jobs with outer iterations only at a resize point. */
export function atResizePoint(r: JobRun): boolean {
  return r.job.work.iterations ? r.atPoint : true;
}

/** The limit of a job started on `size` nodes: below the size it asked for, scaled as live. */
export function startLimit(j: SimJob, size: number): number {
  return j.malleable && size < j.nodes ? rescaleLimit({ startTime: 0, limit: j.estimate, original: j.estimate, at: 0, ratio: limitRatio({ nodes: j.nodes, model: j.model }, size).ratio, grow: false }) : j.estimate;
}

/** Its limit once the resize under way commits at `at` (s): rescaled as the live controller rescales it. */
export function limitAfterResize(r: JobRun, at: number): number {
  return rescaleLimit({ startTime: r.start * 1000, limit: r.limit, original: r.job.estimate, at: at * 1000, ratio: r.limitRatio, grow: r.adaptTo > r.adaptFrom, adaptation: at - r.adaptAt });
}

/** What a job's SPMD-phase samples read: its true MTCT with seeded relative noise (±noise). */
export function mtctNoise(seed: number, noise: number): (mtct: number) => number {
  const rng = stream(seed, "mtct-noise");
  return (m) => (noise > 0 && Number.isFinite(m) ? m * (1 + noise * (2 * rng.next() - 1)) : m);
}

/** A measurement at t: an MTCT sample, and its iteration time at its current size in its profile. */
export function measure(r: JobRun, t: number, noisy: (mtct: number) => number): void {
  const k = r.job.work.iterations ?? 1;
  const mtct = noisy(r.job.work.mtct(r.n));
  const iterTime = workTime(r, r.n) / k;
  const s = r.samples;
  if (s.length < SAMPLE_CAP) s.push({ time: t * 1000, mtct });
  else {
    // The oldest goes, moved over in place (Array#shift here was ~1.3 % of ebb's profile on 4,096 nodes).
    for (let i = 1; i < s.length; i++) s[i - 1] = s[i]!;
    s[s.length - 1] = { time: t * 1000, mtct };
  }
  r.sampled++;
  const last = r.profile[r.profile.length - 1];
  if (r.profileOpen || !last) {
    r.profile.push({ nodes: r.n, iterTime });
    r.profileOpen = false;
  } else last.iterTime = iterTime;
}
