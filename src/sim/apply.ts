/**
 * Carries out a plan `checkPlan` accepted on the virtual cluster, item by item as the controller
 * carries it out: starts (the job takes the plan's nodes, its limit scaled to its start size),
 * then resizes. A resize costs `job.resizeCost(from, to)` seconds in which the job makes no
 * progress; a grow takes its new nodes at once, a shrink gives back the nodes the plan names when
 * it commits, and the commit rescales the job's limit (`sched/limits.ts`). A move (sched/moves.ts)
 * is carried out as live: its shrink first; when that commits, its grow back is re-checked against
 * the cluster as it is then and begun, or refused (the job stays smaller until a pass grows it).
 */
import { checkPlan, type Plan, type PlanResize, type PlanStart } from "../sched/plan.ts";
import { advance, limitAfterResize, startLimit, type JobRun } from "./job-run.ts";
import type { Replay } from "./replay.ts";

/** Whether the plan changed anything. */
export function applyPlan(plan: Plan, x: Replay): boolean {
  let changed = false;
  let started = false;
  for (const s of plan.starts) {
    start(s, x);
    started = changed = true;
  }
  if (started) x.cluster.started();
  for (const z of plan.resizes) {
    beginResize(z, x);
    changed = true;
  }
  return changed;
}

function start(s: PlanStart, x: Replay): void {
  const now = x.now;
  const r = x.cluster.jobs.get(s.jobId)!;
  const size = s.nodes.length;
  x.cluster.take(s.nodes, r.job.id, s.shares);
  r.names = [...s.nodes];
  r.shares = s.shares ? [...s.shares] : undefined;
  r.state = "running";
  r.n = size;
  r.start = now;
  x.check?.started(r.job.id, now);
  r.since = now;
  r.startNodes = size;
  r.peak = size;
  r.limit = startLimit(r.job, size);
  r.speed = x.cluster.pace(r.names);
  x.cluster.priority?.started(r, now);
  x.cluster.running.add(r);
  if (r.job.malleable) x.cluster.malleable.add(r);
  x.timeline.nextStep(r, now);
  x.timeline.armLimit(r);
}

function beginResize(z: PlanResize, x: Replay): void {
  const now = x.now;
  const r = x.cluster.jobs.get(z.jobId)!;
  x.cluster.priority?.chargeTo(r, now);
  // A grow (and a move's swap: the same size, its last nodes for others) holds the added nodes from
  // now; what a shrink or a swap gives back stays the job's until the commit.
  if (z.added.length > 0) {
    x.cluster.take(z.added, r.job.id, z.shares);
    r.names = [...r.names, ...z.added];
    if (r.shares && z.shares) r.shares = [...r.shares, ...z.shares];
  }
  if (z.removed.length > 0) r.removing = z.removed;
  r.limitRatio = z.limit.ratio;
  r.adaptAt = now;
  r.adaptFrom = r.n;
  advance(r, now);
  const cost = Math.max(0, r.job.resizeCost(r.n, z.to));
  r.resizes++;
  x.tally.resizes++;
  r.costSum += cost;
  r.costCount++;
  r.peak = Math.max(r.peak, z.to);
  r.adaptTo = z.to;
  // A move's first step (its shrink, or its swap) counts it; its grow back does not.
  if (z.rule === "move" && z.to <= r.n && x.hosts) x.hosts.moves++;
  if (z.then) r.moveBack = z.then;
  if (cost === 0) {
    commitResize(r, now, x);
    return;
  }
  // Grows hold the new nodes from now; shrinks keep theirs until the commit.
  if (z.to > r.n) r.n = z.to;
  r.adapting = true;
  r.adaptEnd = now + cost;
  x.timeline.commitAt(r, now + cost);
}

/** The resize under way commits at t: a shrink gives its nodes back, the limit follows the new size; a move's grow back follows. */
export function commitResize(r: JobRun, t: number, x: Replay): void {
  advance(r, t);
  x.cluster.priority?.chargeTo(r, t);
  // The limit follows the new size, as the live controller rescales it when the adaptation commits.
  r.limit = limitAfterResize(r, t);
  x.timeline.armLimit(r);
  if (r.removing.length > 0) {
    if (x.cluster.release(r.removing, r.job.id)) x.check?.voidPromise();
    const gone = new Set(r.removing);
    const kept = r.names.map((n) => !gone.has(n));
    r.names = r.names.filter((_, i) => kept[i]);
    r.shares = r.shares?.filter((_, i) => kept[i]);
    r.removing = [];
  }
  r.n = r.adaptTo;
  r.adapting = false;
  r.speed = x.cluster.pace(r.names);
  r.lastAdaptEnd = t;
  r.samples = [];
  r.sampled++;
  r.profileOpen = true;
  x.timeline.nextStep(r, t);
  const back = r.moveBack;
  if (!back) return;
  r.moveBack = undefined;
  // A plan of one item, re-checked as plan-apply.ts moveBack does (checkPlan reads only the items).
  const plan: Plan = { now: t * 1000, policy: "ebb", spawns: [], starts: [], resizes: [back], reservations: [], notes: [], waiting: [] };
  if (checkPlan(plan, x.cluster).rejected.length > 0) {
    if (x.hosts) x.hosts.growBacksRefused++;
    return;
  }
  beginResize(back, x);
}
