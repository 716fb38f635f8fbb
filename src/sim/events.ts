/**
 * What each event does to the virtual cluster: an arrival joins the queue; an end, or the kill at
 * a job's limit, completes it and frees its nodes; a commit finishes a resize (apply.ts); a resize
 * point (jobs with outer iterations) measures the job and lets it be resized this instant; a tick
 * measures the running malleable jobs without resize points.
 */
import type { Event } from "./heap.ts";
import { commitResize } from "./apply.ts";
import { advance, measure, type JobRun } from "./job-run.ts";
import type { Replay } from "./replay.ts";

/** Any event but a tick, at t. Whether it changed anything (a stale one, of a job rescheduled since, does not). */
export function handleEvent(ev: Event, t: number, x: Replay): boolean {
  if (ev.kind === "host") {
    x.hosts!.apply(ev.job, t, x);
    return true;
  }
  const r = x.cluster.jobs.get(ev.job);
  if (!r) return false;
  if (ev.kind === "arrive") {
    x.cluster.arrive(r);
    return true;
  }
  if (ev.kind === "limit") {
    if (ev.version !== r.limitVersion || r.state !== "running") return false;
    atLimit(r, t, x);
    return true;
  }
  if (ev.version !== r.version) return false;
  if (ev.kind === "end") {
    advance(r, t);
    r.done = 1;
    complete(r, t, x);
  } else if (ev.kind === "commit") commitResize(r, t, x);
  else if (ev.kind === "point") resizePoint(r, t, x);
  return true;
}

/** A current commit of a grow: it gives no node back and no move's grow back follows it. */
export function growCommit(ev: Event, x: Replay): boolean {
  if (ev.kind !== "commit") return false;
  const r = x.cluster.jobs.get(ev.job);
  return r !== undefined && ev.version === r.version && r.adaptTo > r.adaptFrom && r.removing.length === 0 && r.moveBack === undefined;
}

/**
 * A tick at t: every running malleable job without resize points takes a sample. Whether what a
 * policy can know of a job changed class since `since` (s): a job took its first sample at a new
 * size (a profile point) or its `minSamples`-th one (its speed is known), or its settle time ran out.
 */
export function sampleOnTick(t: number, x: Replay, since: number, minSamples: number, settle: number): boolean {
  let changed = false;
  // Only a malleable job adapts (has a settle time) or samples.
  for (const r of x.cluster.malleable) {
    if (r.lastAdaptEnd !== undefined && r.lastAdaptEnd + settle > since && r.lastAdaptEnd + settle <= t) changed = true;
    if (r.adapting || r.job.work.iterations) continue;
    measure(r, t, x.noisy);
    if (r.samples.length === 1 || r.samples.length === minSamples) changed = true;
  }
  return changed;
}

/** A job whose work is done at this very instant ends; any other is killed, as live. */
function atLimit(r: JobRun, t: number, x: Replay): void {
  advance(r, t);
  if (!r.adapting && r.done >= 1 - 1e-9) r.done = 1;
  else {
    r.killed = true;
    x.tally.killed++;
  }
  r.version++;
  r.adapting = false;
  complete(r, t, x);
}

function complete(r: JobRun, t: number, x: Replay): void {
  r.state = "done";
  r.end = t;
  x.cluster.priority?.chargeTo(r, t, true);
  // A reservation counted on its nodes coming back; one that does not (not free) voids it (check.ts).
  if (x.cluster.release(r.names, r.job.id)) x.check?.voidPromise();
  x.cluster.running.delete(r);
  x.cluster.malleable.delete(r);
  x.tally.finished++;
}

function resizePoint(r: JobRun, t: number, x: Replay): void {
  advance(r, t);
  const k = r.job.work.iterations!;
  r.done = Math.round(r.done * k) / k;
  measure(r, t, x.noisy);
  r.atPoint = true;
  x.cluster.atPoint.push(r);
  x.timeline.nextStep(r, t);
}
