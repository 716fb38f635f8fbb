/**
 * EASY backfilling on resource vectors (resource mode): the batch pass of `batch.ts` with cores,
 * memory and GPUs per node instead of node counts. Jobs start in queue order while they fit (best
 * fit, `pool.ts`); the first that does not fit gets a reservation: the nodes and amounts it would
 * take at the shadow time, the earliest time it fits once the running jobs (and those started in
 * this pass) give back their shares at their expected ends. A later job may start only if it ends
 * before the shadow time, or fits, node by node, in what the reservation leaves over then (the
 * reservation's budget): backfill never delays it. Mixed shared and exclusive jobs alike; a job
 * without a request takes whole nodes.
 *
 * Free space only shrinks while the queue is walked, so a shape that did not fit does not fit later
 * in the pass: it is remembered and the jobs of that shape are not placed again. Pure.
 */
import type { NodeShare, ResourceRequest } from "../domain/resources.ts";
import { preferredSize, scaledLimit, shortestFirstOrder } from "./batch.ts";
import { Pool, WHOLE, type Placement, type PlaceOptions, type Profile } from "./pool.ts";
import { sizeAtMost, withinSizes } from "./sizes.ts";
import type { ClusterNode, PendingJob, Reservation } from "./types.ts";

/** Shares a running job gives back at `end` (epoch ms). */
export interface Ending {
  shares: readonly NodeShare[];
  end: number;
}

export interface VectorBatchInput {
  now: number;
  /** Free now; the pass takes its starts from it and sets the reservation's budget on it. */
  pool: Pool;
  /** Whether a job could never start on the up nodes, even all empty (`NeverFits`). */
  never: (job: PendingJob, d: Demand) => boolean;
  /** In order of end (a pass that runs the batch several times sorts them once: byEndTime). */
  endings: readonly Ending[];
  /** In queue order. */
  pending: readonly PendingJob[];
  /** EASY backfilling behind the reservation (default); false: FCFS. */
  backfill?: boolean;
  /** Behind the reservation, the shortest jobs (by time limit) first (ebb's order). */
  shortestFirst?: boolean;
  /** The size a job of a node range starts at with `free` nodes that hold its shape. */
  startSize?: (job: PendingJob, free: number) => number;
  scaleLimits?: boolean;
  /** Fill `waiting` (default true); false lets the pass stop once nothing is free. */
  reasons?: boolean;
}

export interface VectorStart extends Placement {
  jobId: number;
  reason: "fcfs" | "backfill";
}

export interface VectorBatchPlan {
  starts: VectorStart[];
  reservation?: Reservation;
  waiting: Map<number, string>;
}

/** How a job's request is placed. */
export interface Demand {
  req: ResourceRequest;
  /** A node count from its range (whole nodes, `-N`, an elastic job's per-node shape); else tasks packed. */
  counted: boolean;
  /** Tasks a node must hold to count toward a counted shape. */
  perNode: number;
  /** Whether the pool's capacities answer "does it fit" exactly (no node names, no GPUs per job, tasks spread evenly). */
  exact: boolean;
  exclude?: ReadonlySet<string>;
  nodelist?: readonly string[];
  /** Equal for jobs that fit or not alike. */
  key: string;
  /** Its profiles in the last pool asked (a pass asks about each job in its own pool, often twice). */
  at?: { pool: Pool; now?: Profile; past?: Profile };
  /** Whether it never fits, as the last `NeverFits` asked answered. */
  never?: { by: NeverFits; value: boolean };
  /** How the policies last saw it on counts (resource-plan.ts `countView`), and on what cluster. */
  count?: { never: boolean; up: number; cores: number; gpus: number; view: PendingJob };
}

const reqKeys = new WeakMap<ResourceRequest, string>();
/**
 * Where a job object keeps its demand: a property no copy of it (`{ ...job }`, a narrowed view)
 * and no JSON of it carries (not enumerable). A pass asks for every waiting job's demand, and a
 * WeakMap lookup per job was the larger part of that walk (issue 36). A job object that takes no
 * new property (frozen) keeps it in the WeakMap.
 */
const DEMAND = Symbol("demand");
const demands = new WeakMap<PendingJob, Demand>();

/** How `job` is placed (kept per job object: the controller and the simulator reuse them from pass to pass). */
export function demandOf(job: PendingJob): Demand {
  let d = (job as { [DEMAND]?: Demand })[DEMAND] ?? demands.get(job);
  if (d) return d;
  const req = job.resources ?? WHOLE;
  const counted = !job.resources || req.nodes !== undefined || job.elastic === true || job.moldable === true || (req.exclusive && req.tasks === undefined);
  const perNode = req.tasksPerNode ?? (req.tasks !== undefined && counted ? Math.ceil(req.tasks / Math.max(1, job.minNodes)) : 1);
  const even = !counted || req.tasksPerNode !== undefined || req.tasks === undefined || (job.minNodes === job.maxNodes && req.tasks % Math.max(1, job.minNodes) === 0);
  let rk = reqKeys.get(req);
  if (rk === undefined) {
    rk = `${req.exclusive ? "x" : "s"}${req.tasks},${req.nodes},${req.tasksPerNode},${req.cpusPerTask},${req.memPerNodeMiB},${req.memPerCpuMiB},${req.gpus},${req.gpusPerNode},${req.gpusPerTask},${req.gpuType},${req.constraint?.join("&")}`;
    reqKeys.set(req, rk);
  }
  let key = counted ? `${rk}|${job.minNodes}` : rk;
  if (job.exclude) key += `|-${job.exclude.join(",")}`;
  if (job.nodelist) key += `|+${job.nodelist.join(",")}`;
  d = { req, counted, perNode, exact: even && !job.exclude && !job.nodelist && req.gpus === undefined, exclude: job.exclude && new Set(job.exclude), nodelist: job.nodelist, key };
  if (Object.isExtensible(job)) Object.defineProperty(job, DEMAND, { value: d });
  else demands.set(job, d);
  return d;
}

const defaultStartSize = (job: PendingJob, free: number): number => Math.min(preferredSize(job), free);

/** Whether `job` fits now at its smallest size, from the pool's capacities alone; undefined when only a placement can tell. */
export function fits(pool: Pool, job: PendingJob, d: Demand, past: boolean): boolean | undefined {
  if (!d.exact) return undefined;
  if (!d.at) d.at = { pool };
  else if (d.at.pool !== pool) {
    d.at.pool = pool;
    d.at.now = d.at.past = undefined;
  }
  const p = past ? (d.at.past ??= pool.profile(d.req, job.minNodes, true)) : (d.at.now ??= pool.profile(d.req, job.minNodes, false));
  if (!d.counted) return p.sum >= (d.req.tasks ?? 1);
  return pool.atLeast(p, Math.max(1, d.perNode)) >= job.minNodes;
}

/**
 * Where `job` goes now, or undefined: within the reservation's budget when `past`; when `sparing`
 * (it ends before the reservation), on what the budget does not need first.
 */
export function placeJob(pool: Pool, job: PendingJob, d: Demand, past: boolean, startSize: (job: PendingJob, free: number) => number = defaultStartSize, sparing = false): Placement | undefined {
  if (fits(pool, job, d, past) === false) return undefined;
  const place = (o: PlaceOptions) => (sparing ? pool.placeSparing(d.req, o) : pool.place(d.req, o));
  if (!d.counted) return place({ past, exclude: d.exclude, nodelist: d.nodelist });
  const fitting = pool.countFitting(d.req, d.perNode, job.minNodes, past, d.exclude);
  if (fitting < job.minNodes) return undefined;
  const k = sizeAtMost(job.sizes, Math.min(job.maxNodes, startSize(job, fitting), fitting)) ?? 0;
  if (k < job.minNodes) return undefined;
  const opts = { past, exclude: d.exclude, nodelist: d.nodelist };
  return place({ ...opts, nodes: k }) ?? (k > job.minNodes ? place({ ...opts, nodes: job.minNodes }) : undefined);
}

/**
 * Whether a job could never start on the up nodes, even with nothing running: answered on the up
 * nodes empty and remembered per kind of request for as long as the up nodes stay the same (the
 * last set asked about is kept from pass to pass).
 */
export class NeverFits {
  private static last?: NeverFits;
  private readonly memo = new Map<string, boolean>();
  private readonly empty: Pool;

  private constructor(
    private readonly signature: string,
    nodes: readonly ClusterNode[],
    defMemPerCpu: number | undefined,
  ) {
    this.empty = Pool.of(nodes, [], defMemPerCpu);
  }

  static of(nodes: readonly ClusterNode[], defMemPerCpu: number | undefined): NeverFits {
    let sig = `${defMemPerCpu}`;
    for (const n of nodes) if (n.up) sig += n.resources ? `|${n.name}:${n.resources.cores}:${n.resources.memMiB}:${n.resources.gpus.join(",")}:${n.resources.features.join(",")}` : `|${n.name}:${n.cpus}`;
    if (NeverFits.last?.signature !== sig) NeverFits.last = new NeverFits(sig, nodes, defMemPerCpu);
    return NeverFits.last;
  }

  never(job: PendingJob, d: Demand): boolean {
    if (d.never?.by === this) return d.never.value;
    let v = this.memo.get(d.key);
    if (v === undefined) this.memo.set(d.key, (v = !(fits(this.empty, job, d, false) ?? placeJob(this.empty, job, d, false) !== undefined)));
    d.never = { by: this, value: v };
    return v;
  }
}

export const byEndTime = (a: Ending, b: Ending): number => a.end - b.end;

/** `a` and `b`, each in order of end, in order of end: the same list as a stable sort of `[...a, ...b]`. */
function mergeByEnd(a: readonly Ending[], b: readonly Ending[]): Ending[] {
  const out: Ending[] = [];
  let j = 0;
  for (const e of a) {
    while (j < b.length && b[j]!.end < e.end) out.push(b[j++]!);
    out.push(e);
  }
  while (j < b.length) out.push(b[j++]!);
  return out;
}

/**
 * When and where `job` would start if nothing else started: the earliest end (of `endings`,
 * released in order, same-time ends together) after which it fits, at its smallest size; the pool
 * as it is then. Undefined if it never fits. `sorted`: `endings` is already in order of end.
 */
export function shadowOf(pool: Pool, endings: readonly Ending[], job: PendingJob, d: Demand, now: number, sorted = false): { time: number; placement: Placement; then: Pool } | undefined {
  // Without the pool's profiles: the walk below asks for one or two of them.
  const then = pool.clone(false);
  const min = { ...job, maxNodes: job.minNodes, preferredNodes: job.minNodes };
  const byEnd = sorted ? endings : [...endings].sort(byEndTime);
  const cores = d.counted ? job.minNodes * d.perNode * d.req.cpusPerTask : (d.req.tasks ?? 1) * d.req.cpusPerTask;
  for (let i = 0; i < byEnd.length; ) {
    const t = byEnd[i]!.end;
    for (; i < byEnd.length && byEnd[i]!.end === t; i++) then.give(byEnd[i]!.shares);
    // Cheap first: enough free cores in all, and the capacities say it fits, before a placement is tried.
    if (then.freeCores < cores || fits(then, job, d, false) === false) continue;
    const fitted = placeJob(then, min, d, false);
    if (!fitted) continue;
    // It fits: on what the running jobs release by then first, leaving what is free now to backfill.
    const placement = (d.exact ? then.placeAhead(d.req, pool, d.counted ? { nodes: job.minNodes } : {}) : undefined) ?? fitted;
    return { time: Math.max(now, t), placement, then };
  }
  return undefined;
}

export function planBatchVectors(input: VectorBatchInput): VectorBatchPlan {
  const { now, pool } = input;
  const backfill = input.backfill ?? true;
  const reasons = input.reasons ?? true;
  const chosen = input.startSize ?? defaultStartSize;
  const limitAt = (job: PendingJob, size: number): number => (input.scaleLimits && size < preferredSize(job) ? scaledLimit(job, size) : job.timeLimit);
  const starts: VectorStart[] = [];
  const waiting = new Map<number, string>();
  const started: Ending[] = [];
  const neverFits = input.never;
  let reservation: Reservation | undefined;
  const queue = input.pending;
  let i = 0;
  for (; i < queue.length && !reservation; i++) {
    const job = withinSizes(queue[i]!);
    const d = demandOf(job);
    const p = placeJob(pool, job, d, false, chosen);
    if (p) {
      pool.take(p.shares);
      starts.push({ jobId: job.id, reason: "fcfs", ...p });
      started.push({ shares: p.shares, end: now + limitAt(job, p.nodes.length) * 1000 });
      continue;
    }
    if (neverFits(job, d)) {
      if (reasons) waiting.set(job.id, "resources: no up node set can ever hold it");
      continue;
    }
    const shadow = shadowOf(pool, mergeByEnd(input.endings, [...started].sort(byEndTime)), job, d, now, true);
    if (!shadow) {
      if (reasons) waiting.set(job.id, "resources: first in line, waits for nodes to come up");
      continue;
    }
    reservation = { jobId: job.id, start: shadow.time, nodes: shadow.placement.nodes.length, shares: shadow.placement.shares };
    pool.reserve(shadow.placement.shares, shadow.then);
    if (reasons) waiting.set(job.id, "resources: first in line, nodes reserved");
  }
  if (!reservation) return { starts, waiting };
  // Behind the reservation, each narrowed to its sizes. With no core free none fits, and without
  // reasons to give none needs looking at: a pass that fills the cluster walks the queue only up
  // to its reservation (each pass over a deep queue copied and narrowed all of it).
  let rest = !reasons && pool.freeCores === 0 ? [] : queue.slice(i).map(withinSizes);
  if (!backfill) {
    if (reasons) for (const job of rest) waiting.set(job.id, "priority: FCFS, an earlier job waits");
    return { starts, reservation, waiting };
  }
  const res = reservation;
  const delays = `priority: would delay job ${res.jobId}`;
  // Free space only shrinks from here on: a shape that did not fit does not fit later in the pass.
  const noFitNow = new Set<string>();
  const noFitPast = new Set<string>();
  const fitsNow = (job: PendingJob, d: Demand): boolean => {
    const exact = fits(pool, job, d, false);
    if (exact !== undefined) return exact;
    if (noFitNow.has(d.key)) return false;
    const f = placeJob(pool, job, d, false, chosen) !== undefined;
    if (!f) noFitNow.add(d.key);
    return f;
  };
  const wait = (job: PendingJob, d: Demand) => {
    if (reasons) waiting.set(job.id, neverFits(job, d) ? "resources: no up node set can ever hold it" : "resources");
  };
  if (input.shortestFirst) {
    // Only the jobs that fit now can start, and fewer fit as jobs start: only those are put in order.
    const could: PendingJob[] = [];
    for (const job of rest) {
      const d = demandOf(job);
      if (fitsNow(job, d)) could.push(job);
      else wait(job, d);
    }
    rest = could.sort(shortestFirstOrder);
  }
  for (const job of rest) {
    if (!reasons && pool.freeCores === 0) break;
    const d = demandOf(job);
    if (!fitsNow(job, d)) {
      wait(job, d);
      continue;
    }
    // A size that depends on what is free (a node range with scaled limits) is found first; any other job's end is known.
    const sized = input.scaleLimits && d.counted && job.minNodes < job.maxNodes ? placeJob(pool, job, d, false, chosen) : undefined;
    const inTime = now + (sized ? limitAt(job, sized.nodes.length) : job.timeLimit) * 1000 <= res.start;
    if (inTime) {
      const p = sized ?? placeJob(pool, job, d, false, chosen, true);
      if (!p) {
        noFitNow.add(d.key);
        if (reasons) waiting.set(job.id, "resources");
        continue;
      }
      pool.take(p.shares);
      starts.push({ jobId: job.id, reason: "backfill", ...p });
      continue;
    }
    // It would run past the reservation's start: only in what the reservation leaves over.
    const q = noFitPast.has(d.key) ? undefined : placeJob(pool, job, d, true, chosen);
    if (!q) {
      noFitPast.add(d.key);
      if (reasons) waiting.set(job.id, delays);
      continue;
    }
    pool.take(q.shares, true);
    starts.push({ jobId: job.id, reason: "backfill", ...q });
  }
  return { starts, reservation, waiting };
}
