/** What the policies share: queue order, the batch pass on counts, running jobs as endings. */
import { inQueueOrder, planBatchCounts, preferredSize, type BatchCountsPlan, type EndColumns, type Ending } from "../batch.ts";
import { expectedEnd } from "../elastic.ts";
import { withPriority } from "../priority.ts";
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
  const out: Ending[] = [];
  eachEnding(input, (nodes, expectedEnd) => out.push({ nodes, expectedEnd }));
  return out;
}

function eachEnding(input: PassInput, f: (nodes: number, expectedEnd: number) => void): void {
  for (const j of input.running) {
    const kept = j.kept ?? 0;
    if (j.adapting && j.resizingTo !== undefined && j.resizingTo < j.nodes) {
      f(j.nodes - j.resizingTo - Math.max(0, kept - j.resizingTo), j.adaptEnd ?? input.now + (j.adaptCost ?? input.config.defaultAdaptCost) * 1000);
      f(Math.max(0, j.resizingTo - kept), expectedEnd(j));
    } else f(j.nodes - kept, expectedEnd(j));
  }
}

interface PassEndings {
  now: number;
  /** The running list's length when worked out (a list that grew in place is worked out anew). */
  count: number;
  defaultAdaptCost: number;
  /** `endings` in expected-end order, those at one time as one (the shadow time counts them together anyway). */
  byEnd: EndColumns;
}

/** The running jobs' endings in expected-end order (cached per pass, as the batch pass sees them). */
export function sortedEndings(input: PassInput): EndColumns {
  return passEndings(input).byEnd;
}

const endingsOf = new WeakMap<readonly JobState[], PassEndings>();

/**
 * The endings in end order, worked out once per running list and clock: a pass runs the batch pass
 * several times on the same running jobs. (A pass's running list is not changed in place: a new
 * pass has a new list; predict.ts grows its own between passes, and the length is checked.) Sorted
 * and kept as two typed arrays (`EndColumns`), without a comparator or an object per job.
 */
function passEndings(input: PassInput): PassEndings {
  const cached = endingsOf.get(input.running);
  if (cached && cached.now === input.now && cached.count === input.running.length && cached.defaultAdaptCost === input.config.defaultAdaptCost) return cached;
  const ends = new Float64Array(2 * input.running.length);
  const nodes = new Float64Array(ends.length);
  let m = 0;
  // `eachEnding` without a closure: this runs on every pass with a reservation.
  for (const j of input.running) {
    const kept = j.kept ?? 0;
    if (j.adapting && j.resizingTo !== undefined && j.resizingTo < j.nodes) {
      nodes[m] = j.nodes - j.resizingTo - Math.max(0, kept - j.resizingTo);
      ends[m++] = j.adaptEnd ?? input.now + (j.adaptCost ?? input.config.defaultAdaptCost) * 1000;
      nodes[m] = Math.max(0, j.resizingTo - kept);
    } else nodes[m] = j.nodes - kept;
    ends[m++] = expectedEnd(j);
  }
  let nan = false;
  for (let i = 0; i < m; i++) nan ||= Number.isNaN(ends[i]!);
  let length = 0;
  if (nan) {
    // The comparator's order as before (none is expected), nothing merged.
    for (const e of endings(input).sort((a, b) => a.expectedEnd - b.expectedEnd)) {
      nodes[length] = e.nodes;
      ends[length++] = e.expectedEnd;
    }
  } else {
    sortPairs(ends, nodes, 0, m);
    for (let i = 0; i < m; i++) {
      if (i > 0 && ends[i] === ends[length - 1]) nodes[length - 1] = nodes[length - 1]! + nodes[i]!;
      else {
        nodes[length] = nodes[i]!;
        ends[length++] = ends[i]!;
      }
    }
  }
  const e = { now: input.now, count: input.running.length, defaultAdaptCost: input.config.defaultAdaptCost, byEnd: { length, ends, nodes } };
  endingsOf.set(input.running, e);
  return e;
}

/** Sorts keys[lo, hi) ascending, moving values[i] with keys[i] (quicksort, insertion sort below 16). */
export function sortPairs(keys: Float64Array, values: Float64Array, lo: number, hi: number): void {
  const swap = (i: number, j: number) => {
    const k = keys[i]!;
    keys[i] = keys[j]!;
    keys[j] = k;
    const v = values[i]!;
    values[i] = values[j]!;
    values[j] = v;
  };
  while (hi - lo > 16) {
    const a = keys[lo]!;
    const b = keys[(lo + hi) >> 1]!;
    const c = keys[hi - 1]!;
    const pivot = a < b ? (b < c ? b : a < c ? c : a) : a < c ? a : b < c ? c : b;
    let i = lo;
    let j = hi - 1;
    while (i <= j) {
      while (keys[i]! < pivot) i++;
      while (keys[j]! > pivot) j--;
      if (i <= j) swap(i++, j--);
    }
    // The smaller side by recursion, the larger by the loop.
    if (j + 1 - lo < hi - i) {
      sortPairs(keys, values, lo, j + 1);
      lo = i;
    } else {
      sortPairs(keys, values, i, hi);
      hi = j + 1;
    }
  }
  for (let i = lo + 1; i < hi; i++) {
    const k = keys[i]!;
    const v = values[i]!;
    let j = i - 1;
    while (j >= lo && keys[j]! > k) {
      keys[j + 1] = keys[j]!;
      values[j + 1] = values[j]!;
      j--;
    }
    keys[j + 1] = k;
    values[j + 1] = v;
  }
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
  return withPriority(v, job);
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
    running: [],
    // Read only for a reservation: a pass whose queue all starts (or is empty) sorts no ending.
    get runningByEnd() {
      return passEndings(input).byEnd;
    },
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

const NO_IDS: ReadonlySet<number> = new Set();

/** The job ids of a plan's items: most passes start and resize nothing, and share one empty set. */
export function idsOf(items: readonly { jobId: number }[]): ReadonlySet<number> {
  if (items.length === 0) return NO_IDS;
  const ids = new Set<number>();
  for (const s of items) ids.add(s.jobId);
  return ids;
}

/** The first `k` jobs of the queue this pass does not start (that could ever fit). */
export function firstWaiting(input: PassInput, q: readonly PendingJob[], starts: readonly { jobId: number }[], k: number): PendingJob[] {
  const started = idsOf(starts);
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
