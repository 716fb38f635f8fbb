/** What the policies share: queue order, the batch pass on counts, running jobs as endings. */
import { inQueueOrder, planBatchCounts, preferredSize, type BatchCountsPlan, type Ending } from "../batch.ts";
import { expectedEnd } from "../elastic.ts";
import { sizeAtMost } from "../sizes.ts";
import type { BatchOptions, CountStart, JobState, PassInput, PendingJob } from "../types.ts";

export type { BatchOptions } from "../types.ts";

export function queue(input: PassInput): readonly PendingJob[] {
  return inQueueOrder(input.pending, input.sorted);
}

/**
 * Running jobs as the batch pass sees them. A shrink under way frees its nodes when it commits:
 * counted as ending after the job's adaptation cost. Nodes that take no new work (`kept`: busy,
 * overloaded, the owner's) come back to nobody: counted out, the last to end first.
 */
export function endings(input: PassInput): Ending[] {
  return [...passEndings(input).list];
}

interface PassEndings {
  now: number;
  defaultAdaptCost: number;
  list: readonly Ending[];
  /** `list` in expected-end order. */
  byEnd: readonly Ending[];
}

const endingsOf = new WeakMap<readonly JobState[], PassEndings>();

/**
 * `endings`, worked out once per running list and clock: a pass runs the batch pass several times
 * on the same running jobs. (Running lists are never changed in place: a new pass has a new list.)
 */
function passEndings(input: PassInput): PassEndings {
  const cached = endingsOf.get(input.running);
  if (cached && cached.now === input.now && cached.defaultAdaptCost === input.config.defaultAdaptCost) return cached;
  const list = endingsNow(input);
  const e = { now: input.now, defaultAdaptCost: input.config.defaultAdaptCost, list, byEnd: byEndTime(list) };
  endingsOf.set(input.running, e);
  return e;
}

/**
 * Endings in expected-end order. A long list: those at one time as one (the shadow time counts them
 * together anyway), the times sorted as numbers, several times faster than sorting the objects.
 */
function byEndTime(list: readonly Ending[]): Ending[] {
  if (list.length <= 32) return insertionByEnd(list);
  const ends = new Float64Array(list.length);
  const nodesAt = new Map<number, number>();
  for (let i = 0; i < list.length; i++) {
    const e = list[i]!;
    if (Number.isNaN(e.expectedEnd)) return [...list].sort((a, b) => a.expectedEnd - b.expectedEnd);
    ends[i] = e.expectedEnd;
    nodesAt.set(e.expectedEnd, (nodesAt.get(e.expectedEnd) ?? 0) + e.nodes);
  }
  ends.sort();
  const out: Ending[] = [];
  for (let i = 0; i < ends.length; i++) if (i === 0 || ends[i] !== ends[i - 1]) out.push({ nodes: nodesAt.get(ends[i]!)!, expectedEnd: ends[i]! });
  return out;
}

/** A short list sorted by insertion: no comparator calls, no map. */
function insertionByEnd(list: readonly Ending[]): Ending[] {
  const out = [...list];
  for (let i = 1; i < out.length; i++) {
    const e = out[i]!;
    let k = i - 1;
    while (k >= 0 && out[k]!.expectedEnd > e.expectedEnd) {
      out[k + 1] = out[k]!;
      k--;
    }
    out[k + 1] = e;
  }
  return out;
}

function endingsNow(input: PassInput): Ending[] {
  const out: Ending[] = [];
  for (const j of input.running) {
    const kept = j.kept ?? 0;
    if (j.adapting && j.resizingTo !== undefined && j.resizingTo < j.nodes) {
      const rest = Math.max(0, j.resizingTo - kept);
      out.push({ nodes: j.nodes - j.resizingTo - Math.max(0, kept - j.resizingTo), expectedEnd: j.adaptEnd ?? input.now + (j.adaptCost ?? input.config.defaultAdaptCost) * 1000 });
      out.push({ nodes: rest, expectedEnd: expectedEnd(j) });
    } else out.push({ nodes: j.nodes - kept, expectedEnd: expectedEnd(j) });
  }
  return out;
}

const rigidViews = new WeakMap<PendingJob, PendingJob>();

/**
 * A static policy runs every job rigid at the size the user asked for (unless it asked for any size
 * in a range). The view is kept per job object, so that what a pass works out per job (resource
 * mode: how it is placed) is not worked out again in the next pass.
 */
export function rigid(job: PendingJob): PendingJob {
  if (job.moldable) return job;
  const p = sizeAtMost(job.sizes, preferredSize(job)) ?? preferredSize(job);
  if (p === job.minNodes && p === job.maxNodes) return job;
  let v = rigidViews.get(job);
  if (!v) rigidViews.set(job, (v = { ...job, minNodes: p, maxNodes: p }));
  return v;
}

const rigidQueues = new WeakMap<readonly PendingJob[], readonly PendingJob[]>();

/**
 * The queue with every job rigid, kept per queue array: the simulator hands the same array to
 * every pass until the queue changes, so a pass where no job arrived or started maps nothing.
 * (Queues are never changed in place: a new queue is a new array.)
 */
function rigidQueue(q: readonly PendingJob[]): readonly PendingJob[] {
  let r = rigidQueues.get(q);
  if (!r) rigidQueues.set(q, (r = q.map(rigid)));
  return r;
}

/** The batch pass: on node counts, or on the nodes' resources in resource mode (`input.vectors`). */
export function batch(input: PassInput, q: readonly PendingJob[], opts: BatchOptions = {}): BatchCountsPlan {
  const pending = opts.rigid ? rigidQueue(q) : q;
  if (input.vectors) return input.vectors.batch(input, pending, opts);
  return planBatchCounts({
    now: input.now,
    upNodes: input.upNodes,
    freeNodes: input.idleNodes,
    running: passEndings(input).byEnd,
    runningSorted: true,
    pending,
    sorted: true,
    backfill: opts.backfill,
    startSize: opts.startSize,
    reasons: false,
    scaleLimits: opts.scaleLimits,
  });
}

export function countStarts(plan: BatchCountsPlan): CountStart[] {
  return plan.starts.map((s) => ({ jobId: s.jobId, nodes: s.nodes, reason: s.reason }));
}

/** The first `k` jobs of the queue this pass does not start (that could ever fit). */
export function firstWaiting(input: PassInput, q: readonly PendingJob[], starts: readonly { jobId: number }[], k: number): PendingJob[] {
  const started = new Set(starts.map((s) => s.jobId));
  const out: PendingJob[] = [];
  for (const j of q) {
    if (out.length >= k) break;
    if (!started.has(j.id) && j.minNodes <= input.upNodes) out.push(j);
  }
  return out;
}

/** A shrink under way hands its nodes back when it commits. */
export function incomingNodes(input: PassInput): number {
  let n = 0;
  for (const j of input.running) if (j.adapting && j.resizingTo !== undefined && j.resizingTo < j.nodes) n += j.nodes - j.resizingTo;
  return n;
}

/** Not adapting and past its settle time: may be resized now. */
export function movable(job: JobState, input: PassInput): boolean {
  if (job.adapting || !job.elastic || job.atResizePoint === false) return false;
  return job.lastAdaptEnd === undefined || input.now >= job.lastAdaptEnd + input.config.settle * 1000;
}

/** The next size above n a job may take: its next valid size, else n + ceil(n/2). */
export function nextSize(job: JobState, n: number): number {
  if (job.sizes && job.sizes.length > 0) {
    let best = Number.POSITIVE_INFINITY;
    for (const s of job.sizes) if (s > n && s < best) best = s;
    return best;
  }
  return n + Math.ceil(n / 2);
}
