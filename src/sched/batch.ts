/**
 * One batch scheduling pass: FCFS in queue order (priority, else submit time) with EASY backfilling (Lifka 1995; Mu'alem &
 * Feitelson 2001). Jobs start in queue order while they fit; the first that does not fit gets a
 * reservation at the earliest time enough nodes are sure to be free (the shadow time); a later job
 * may then start only if it ends before the shadow time or uses nodes the reservation leaves over.
 * Moldable jobs start at any size in [minNodes, maxNodes] (at most preferredNodes); the reservation
 * asks for minNodes. Pure: no clock, no I/O.
 *
 * `planBatchCounts` works on node counts (the simulator and every policy use it); `planBatch` wraps
 * it for the controller and hands out node names in name order.
 */
import { sizeAtMost, withinSizes } from "./sizes.ts";
import type { BatchInput, BatchPlan, ClusterNode, CountStart, PendingJob, Reservation, Start } from "./types.ts";

/** Queue order: a higher partition tier, then a higher priority, then earlier submitted, then the lower id (absent tier and priority: 0). */
export function queueOrder(a: PendingJob, b: PendingJob): number {
  return (b.tier ?? 0) - (a.tier ?? 0) || (b.priority ?? 0) - (a.priority ?? 0) || a.submitTime - b.submitTime || a.id - b.id;
}

/**
 * Backfill order behind the reservation with shortest-first: queue order between jobs of different
 * tiers or priorities, the shorter time limit first between jobs of equal ones (in submit order,
 * where no job has a priority: every job behind the head, shortest first).
 */
export function shortestFirstOrder(a: PendingJob, b: PendingJob): number {
  return (b.tier ?? 0) - (a.tier ?? 0) || (b.priority ?? 0) - (a.priority ?? 0) || a.timeLimit - b.timeLimit || a.submitTime - b.submitTime || a.id - b.id;
}

/**
 * The pending jobs in queue order. They usually arrive in it already (a controller keeps jobs in
 * id order, and ids follow submit times): one linear check then saves a sort per pass.
 */
export function inQueueOrder(pending: readonly PendingJob[], known = false): readonly PendingJob[] {
  if (known) return pending;
  for (let i = 1; i < pending.length; i++) if (queueOrder(pending[i - 1]!, pending[i]!) > 0) return [...pending].sort(queueOrder);
  return pending;
}

export interface Ending {
  nodes: number;
  /** When the nodes are free at the latest (epoch ms). */
  expectedEnd: number;
}

/**
 * Endings in expected-end order as two columns, those at one time as one (the shadow time counts
 * them together anyway): the first `length` of `ends` (epoch ms) and `nodes`. A pass's walks over
 * the running jobs' endings read a prefix of them, and build no object per job.
 */
export interface EndColumns {
  length: number;
  ends: Float64Array;
  nodes: Float64Array;
}

export interface BatchCountsInput {
  now: number;
  upNodes: number;
  freeNodes: number;
  running: readonly Ending[];
  /** `running` is already in expected-end order: the shadow time merges instead of sorting. */
  runningSorted?: boolean;
  /** The running jobs' endings as columns in end order (read instead of `running` when given). */
  runningByEnd?: EndColumns;
  pending: readonly PendingJob[];
  /** `pending` is already in queue order. */
  sorted?: boolean;
  /** EASY backfilling behind the reservation (default); false: plain FCFS, stop at the first blocked job. */
  backfill?: boolean;
  /** The size a job starts at with `free` nodes free, before the range check (default: preferred, capped by free). */
  startSize?: (job: PendingJob, free: number) => number;
  /** Fill `waiting` with a reason for every job left pending (default true); false lets a pass stop early. */
  reasons?: boolean;
  /**
   * A job started below its preferred size runs longer than its time limit says: scale the limit
   * linearly (limit * preferred / size) when judging whether it ends before the reservation.
   * Off by default: the controller's limits are hard bounds whatever the size.
   */
  scaleLimits?: boolean;
}

export interface BatchStart extends CountStart {
  reason: "fcfs" | "backfill";
}

export interface BatchCountsPlan {
  starts: BatchStart[];
  reservation?: Reservation;
  /** Nodes the reservation leaves over at its start (what long jobs may still backfill into). */
  extra: number;
  /** Free nodes left after the starts. */
  free: number;
  waiting: Map<number, string>;
}

export function preferredSize(job: PendingJob): number {
  return Math.max(job.minNodes, Math.min(job.maxNodes, job.preferredNodes ?? job.maxNodes));
}

const defaultStartSize = (job: PendingJob, free: number): number => Math.min(preferredSize(job), free);

/** A moldable job's time limit at `size` nodes, taken to scale linearly from its preferred size. */
export function scaledLimit(job: PendingJob, size: number): number {
  return (job.timeLimit * preferredSize(job)) / size;
}

export function planBatchCounts(input: BatchCountsInput): BatchCountsPlan {
  const queue = inQueueOrder(input.pending, input.sorted);
  const backfill = input.backfill ?? true;
  const reasons = input.reasons ?? true;
  const chosen = input.startSize ?? defaultStartSize;
  // Valid sizes: a job's range narrows to them, and its start rounds down to one (sizes.ts).
  const startSize = (job: PendingJob, free: number): number => sizeAtMost(job.sizes, Math.min(job.maxNodes, chosen(job, free), free)) ?? 0;
  const limitAt = (job: PendingJob, size: number): number => (input.scaleLimits && size < preferredSize(job) ? scaledLimit(job, size) : job.timeLimit);
  const starts: BatchStart[] = [];
  const waiting = new Map<number, string>();
  let reservation: Reservation | undefined;
  let extra = 0;
  let free = input.freeNodes;
  // Jobs started in this pass end by now + limit; they count toward the shadow time.
  const started: Ending[] = [];

  for (let i = 0; i < queue.length; i++) {
    const job = withinSizes(queue[i]!);
    if (job.minNodes > input.upNodes) {
      if (reasons) waiting.set(job.id, `needs ${job.minNodes} nodes, ${input.upNodes} are up`);
      continue;
    }
    if (!reservation) {
      const size = Math.min(job.maxNodes, startSize(job, free));
      if (size >= job.minNodes && size <= free) {
        free -= size;
        starts.push({ jobId: job.id, nodes: size, reason: "fcfs" });
        started.push({ nodes: size, expectedEnd: input.now + limitAt(job, size) * 1000 });
        continue;
      }
      const byEnd = free >= job.minNodes ? undefined : input.runningByEnd;
      const shadow = byEnd ? shadowColumns(byEnd, started, free, job.minNodes, input.now) : shadowCounts(input.running, started, free, job.minNodes, input.now, input.runningSorted);
      reservation = { jobId: job.id, start: shadow.time, nodes: job.minNodes };
      extra = shadow.extra;
      if (reasons) waiting.set(job.id, "resources: first in line, nodes reserved");
      if (!backfill || (!reasons && free === 0)) {
        if (reasons) for (let k = i + 1; k < queue.length; k++) waiting.set(queue[k]!.id, backfill ? "resources" : "priority: FCFS, an earlier job waits");
        break;
      }
      continue;
    }
    // EASY backfill behind the reservation.
    if (job.minNodes > free) {
      if (reasons) waiting.set(job.id, "resources");
      continue;
    }
    const want = Math.min(job.maxNodes, startSize(job, free), free);
    const endsInTime = input.now + limitAt(job, want) * 1000 <= reservation.start;
    const size = endsInTime ? want : (sizeAtMost(job.sizes, Math.min(want, extra)) ?? 0);
    if (size < job.minNodes) {
      if (reasons) waiting.set(job.id, `priority: would delay job ${reservation.jobId}`);
      continue;
    }
    free -= size;
    if (!endsInTime) extra -= size;
    starts.push({ jobId: job.id, nodes: size, reason: "backfill" });
    if (!reasons && free === 0) break;
  }
  return { starts, reservation, extra, free, waiting };
}

export function planBatch(input: BatchInput): BatchPlan {
  const { upNodes, idleNodes } = nodeCounts(input.nodes);
  // Jobs bound to node names that the idle nodes cannot satisfy now wait outside the count pass.
  const unfit = new Map<number, string>();
  for (const job of input.pending) if (job.exclude || job.nodelist) {
    const why = unfitNow(input.nodes, job);
    if (why) unfit.set(job.id, why);
  }
  const plan = planBatchCounts({
    now: input.now,
    upNodes,
    freeNodes: idleNodes,
    running: input.running.map((r) => ({ nodes: r.nodes.length, expectedEnd: r.expectedEnd })),
    pending: unfit.size > 0 ? input.pending.filter((j) => !unfit.has(j.id)) : input.pending,
    reasons: input.reasons,
    backfill: input.backfill,
  });
  const starts: Start[] = nameStarts(input.nodes, plan.starts, input.pending);
  if (input.reasons ?? true) for (const [id, why] of unfit) plan.waiting.set(id, why);
  return { starts, reservation: plan.reservation, waiting: plan.waiting };
}

/** Why a job bound to node names cannot start on the idle nodes now, or undefined if it can. */
export function unfitNow(nodes: readonly ClusterNode[], job: PendingJob): string | undefined {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  for (const name of job.nodelist ?? []) {
    const n = byName.get(name);
    if (!n || !n.up) return `ReqNodeNotAvail: ${name} is not up`;
    if (n.jobId !== undefined) return `Resources: ${name} (from its nodelist) is busy`;
  }
  const excluded = new Set(job.exclude ?? []);
  const usable = nodes.filter((n) => n.up && n.jobId === undefined && !excluded.has(n.name)).length;
  return usable < job.minNodes ? `Resources: ${usable} idle nodes outside its excluded ones, it needs ${job.minNodes}` : undefined;
}

/** `count` of the free names for a job bound to node names: its nodelist first, never an excluded one. */
function pickNames(free: readonly string[], count: number, job: PendingJob): string[] | undefined {
  const want = job.nodelist ?? [];
  if (want.some((n) => !free.includes(n))) return undefined;
  const excluded = new Set(job.exclude ?? []);
  const picked = [...want];
  for (const n of free) {
    if (picked.length >= count) break;
    if (!excluded.has(n) && !want.includes(n)) picked.push(n);
  }
  return picked.length >= count ? picked : undefined;
}

/** Up and idle node counts of a node list (what a `PassInput` wants). */
export function nodeCounts(nodes: readonly ClusterNode[]): { upNodes: number; idleNodes: number } {
  let up = 0;
  let idle = 0;
  for (const n of nodes) {
    if (!n.up) continue;
    up++;
    if (n.jobId === undefined) idle++;
  }
  return { upNodes: up, idleNodes: idle };
}

/**
 * Node names for count-based starts, handed out in name order from the idle up nodes. Jobs bound
 * to node names (`pending` says which) choose first; one whose names are not free is left out.
 */
export function nameStarts<S extends CountStart>(nodes: readonly ClusterNode[], starts: readonly S[], pending: readonly PendingJob[] = []): (Omit<S, "nodes"> & { nodes: string[] })[] {
  const free = nodes
    .filter((n) => n.up && n.jobId === undefined)
    .map((n) => n.name)
    .sort(compareNames);
  const bound = new Map<number, PendingJob>();
  for (const j of pending) if (j.exclude || j.nodelist) bound.set(j.id, j);
  const named = new Map<S, string[]>();
  for (const s of starts) {
    const job = bound.get(s.jobId);
    if (!job) continue;
    const picked = pickNames(free, s.nodes, job);
    if (!picked) continue;
    for (const n of picked) free.splice(free.indexOf(n), 1);
    named.set(s, picked);
  }
  const out: (Omit<S, "nodes"> & { nodes: string[] })[] = [];
  for (const s of starts) {
    if (bound.has(s.jobId)) {
      const picked = named.get(s);
      if (picked) out.push({ ...s, nodes: picked });
      continue;
    }
    if (s.nodes > free.length) throw new RangeError(`job ${s.jobId} starts on ${s.nodes} nodes, ${free.length} are idle`);
    out.push({ ...s, nodes: free.splice(0, s.nodes) });
  }
  return out;
}

/**
 * The earliest time `need` nodes are free, given `free` idle nodes now and running jobs releasing
 * theirs at their expected ends; `extra` is how many nodes beyond `need` are free at that time.
 */
export function shadowTime(running: readonly { nodes: readonly unknown[] | number; expectedEnd: number }[], free: number, need: number, now: number): { time: number; extra: number } {
  return shadowCounts(running.map((r) => ({ nodes: typeof r.nodes === "number" ? r.nodes : r.nodes.length, expectedEnd: r.expectedEnd })), [], free, need, now);
}

const byExpectedEnd = (a: Ending, b: Ending): number => a.expectedEnd - b.expectedEnd;

/**
 * The shadow time of `need` nodes. The order of endings at one time does not change it (all of them
 * count at that time), so running jobs already in end order are merged with the started ones.
 */
function shadowCounts(running: readonly Ending[], started: readonly Ending[], free: number, need: number, now: number, runningSorted = false): { time: number; extra: number } {
  if (free >= need) return { time: now, extra: free - need };
  let byEnd: readonly Ending[];
  if (!runningSorted) byEnd = (started.length > 0 ? [...running, ...started] : [...running]).sort(byExpectedEnd);
  else byEnd = started.length === 0 ? running : mergeByEnd(running, [...started].sort(byExpectedEnd));
  let avail = free;
  for (let i = 0; i < byEnd.length; i++) {
    avail += byEnd[i]!.nodes;
    if (avail < need) continue;
    // Every job ending at the shadow time frees its nodes then: all of them count as extra.
    const t = Math.max(now, byEnd[i]!.expectedEnd);
    for (let k = i + 1; k < byEnd.length && Math.max(now, byEnd[k]!.expectedEnd) === t; k++) avail += byEnd[k]!.nodes;
    return { time: t, extra: avail - need };
  }
  return { time: Number.POSITIVE_INFINITY, extra: 0 };
}

/**
 * `shadowCounts` on columns in end order, the jobs started in this pass merged in as `mergeByEnd`
 * merges them (a started job before a running one only if it ends strictly sooner).
 */
function shadowColumns(cols: EndColumns, started: readonly Ending[], free: number, need: number, now: number): { time: number; extra: number } {
  if (free >= need) return { time: now, extra: free - need };
  const s = started.length > 1 ? [...started].sort(byExpectedEnd) : started;
  const { ends, nodes, length: n } = cols;
  let i = 0;
  let k = 0;
  // The next ending of the merged order: from the started ones when `k` is taken, else column i.
  const startedNext = () => k < s.length && (i >= n || s[k]!.expectedEnd < ends[i]!);
  let avail = free;
  while (i < n || k < s.length) {
    const fromStarted = startedNext();
    const end = fromStarted ? s[k]!.expectedEnd : ends[i]!;
    avail += fromStarted ? s[k++]!.nodes : nodes[i++]!;
    if (avail < need) continue;
    // Every job ending at the shadow time frees its nodes then: all of them count as extra.
    const t = Math.max(now, end);
    while (i < n || k < s.length) {
      const next = startedNext();
      if (Math.max(now, next ? s[k]!.expectedEnd : ends[i]!) !== t) break;
      avail += next ? s[k++]!.nodes : nodes[i++]!;
    }
    return { time: t, extra: avail - need };
  }
  return { time: Number.POSITIVE_INFINITY, extra: 0 };
}

/** Two lists in expected-end order as one. */
function mergeByEnd(a: readonly Ending[], b: readonly Ending[]): Ending[] {
  const out: Ending[] = new Array(a.length + b.length);
  let i = 0;
  let k = 0;
  let o = 0;
  while (i < a.length && k < b.length) out[o++] = b[k]!.expectedEnd < a[i]!.expectedEnd ? b[k++]! : a[i++]!;
  while (i < a.length) out[o++] = a[i++]!;
  while (k < b.length) out[o++] = b[k++]!;
  return out;
}

/** node2 < node10: digits compare as numbers. */
export const compareNames: (a: string, b: string) => number = new Intl.Collator("en", { numeric: true }).compare;
