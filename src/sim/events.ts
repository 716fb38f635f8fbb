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

/** Any event but a tick, at t. */
export function handleEvent(ev: Event, t: number, x: Replay): void {
  const r = x.cluster.jobs.get(ev.job);
  if (!r) return;
  if (ev.kind === "arrive") {
    r.state = "pending";
    x.cluster.pending.push(r);
    return;
  }
  if (ev.kind === "limit") {
    if (ev.version === r.limitVersion && r.state === "running") atLimit(r, t, x);
    return;
  }
  if (ev.version !== r.version) return;
  if (ev.kind === "end") {
    advance(r, t);
    r.done = 1;
    complete(r, t, x);
  } else if (ev.kind === "commit") commitResize(r, t, x);
  else if (ev.kind === "point") resizePoint(r, t, x);
}

/** A tick at t: every running malleable job without resize points takes a sample. */
export function sampleOnTick(t: number, x: Replay): void {
  for (const r of x.cluster.running) if (r.job.malleable && !r.adapting && !r.job.work.iterations) measure(r, t, x.noisy);
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
  x.cluster.release(r.names, r.job.id);
  x.cluster.running.delete(r);
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
