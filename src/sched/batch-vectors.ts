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
import { preferredSize, scaledLimit } from "./batch.ts";
import { Pool, WHOLE, type Placement } from "./pool.ts";
import { sizeAtMost, withinSizes } from "./sizes.ts";
import type { PendingJob, Reservation } from "./types.ts";

/** Shares a running job gives back at `end` (epoch ms). */
export interface Ending {
  shares: readonly NodeShare[];
  end: number;
}

export interface VectorBatchInput {
  now: number;
  /** Free now; the pass takes its starts from it and sets the reservation's budget on it. */
  pool: Pool;
  /** The up nodes empty: what a job that never fits is told against. */
  empty: () => Pool;
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
  exclude?: ReadonlySet<string>;
  nodelist?: readonly string[];
  /** Equal for jobs that fit or not alike. */
  key: string;
}

const reqKeys = new WeakMap<ResourceRequest, string>();

export function demandOf(job: PendingJob): Demand {
  const req = job.resources ?? WHOLE;
  const counted = !job.resources || req.nodes !== undefined || job.elastic === true || job.moldable === true || (req.exclusive && req.tasks === undefined);
  const perNode = req.tasksPerNode ?? (req.tasks !== undefined && counted ? Math.ceil(req.tasks / Math.max(1, job.minNodes)) : 1);
  let rk = reqKeys.get(req);
  if (rk === undefined) {
    rk = [req.exclusive ? "x" : "s", req.tasks, req.nodes, req.tasksPerNode, req.cpusPerTask, req.memPerNodeMiB, req.memPerCpuMiB, req.gpus, req.gpusPerNode, req.gpusPerTask, req.gpuType, req.constraint?.join("&")].join(",");
    reqKeys.set(req, rk);
  }
  let key = counted ? `${rk}|${job.minNodes}` : rk;
  if (job.exclude) key += `|-${job.exclude.join(",")}`;
  if (job.nodelist) key += `|+${job.nodelist.join(",")}`;
  return { req, counted, perNode, exclude: job.exclude && new Set(job.exclude), nodelist: job.nodelist, key };
}

const defaultStartSize = (job: PendingJob, free: number): number => Math.min(preferredSize(job), free);

/** Where `job` goes now (within the reservations' budgets when `past`), or undefined. */
export function placeJob(pool: Pool, job: PendingJob, d: Demand, past: boolean, startSize: (job: PendingJob, free: number) => number = defaultStartSize): Placement | undefined {
  if (!d.counted) return pool.place(d.req, { past, exclude: d.exclude, nodelist: d.nodelist });
  const fitting = d.req === WHOLE && !d.exclude && !past ? pool.idle : pool.countFitting(d.req, d.perNode, job.minNodes, past, d.exclude);
  if (fitting < job.minNodes) return undefined;
  const k = sizeAtMost(job.sizes, Math.min(job.maxNodes, startSize(job, fitting), fitting)) ?? 0;
  if (k < job.minNodes) return undefined;
  const opts = { past, exclude: d.exclude, nodelist: d.nodelist };
  return pool.place(d.req, { ...opts, nodes: k }) ?? (k > job.minNodes ? pool.place(d.req, { ...opts, nodes: job.minNodes }) : undefined);
}

/**
 * When and where `job` would start if nothing else started: the earliest end (of `endings`,
 * released in order, same-time ends together) after which it fits, at its smallest size; the pool
 * as it is then. Undefined if it never fits.
 */
export function shadowOf(pool: Pool, endings: readonly Ending[], job: PendingJob, d: Demand, now: number): { time: number; placement: Placement; then: Pool } | undefined {
  const then = pool.clone();
  const min = { ...job, maxNodes: job.minNodes, preferredNodes: job.minNodes };
  const byEnd = [...endings].sort((a, b) => a.end - b.end);
  const cores = d.counted ? job.minNodes * d.perNode * d.req.cpusPerTask : (d.req.tasks ?? 1) * d.req.cpusPerTask;
  for (let i = 0; i < byEnd.length; ) {
    const t = byEnd[i]!.end;
    for (; i < byEnd.length && byEnd[i]!.end === t; i++) then.give(byEnd[i]!.shares);
    // Cheap first: enough free cores and idle nodes in all before a placement is tried.
    if (then.freeCores < cores || (d.req.exclusive && then.idle < (d.counted ? job.minNodes : 1))) continue;
    const placement = placeJob(then, min, d, false);
    if (placement) return { time: Math.max(now, t), placement, then };
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
  const never = new Map<string, boolean>();
  const neverFits = (job: PendingJob, d: Demand): boolean => {
    let v = never.get(d.key);
    if (v === undefined) never.set(d.key, (v = placeJob(input.empty(), job, d, false) === undefined));
    return v;
  };
  let reservation: Reservation | undefined;
  const queue = input.pending.map(withinSizes);
  let i = 0;
  for (; i < queue.length && !reservation; i++) {
    const job = queue[i]!;
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
    const shadow = shadowOf(pool, [...input.endings, ...started], job, d, now);
    if (!shadow) {
      if (reasons) waiting.set(job.id, "resources: first in line, waits for nodes to come up");
      continue;
    }
    reservation = { jobId: job.id, start: shadow.time, nodes: shadow.placement.nodes.length, shares: shadow.placement.shares };
    pool.reserve(shadow.placement.shares, shadow.then);
    if (reasons) waiting.set(job.id, "resources: first in line, nodes reserved");
  }
  if (!reservation) return { starts, waiting };
  let rest = queue.slice(i);
  if (!backfill) {
    if (reasons) for (const job of rest) waiting.set(job.id, "priority: FCFS, an earlier job waits");
    return { starts, reservation, waiting };
  }
  if (input.shortestFirst) rest = [...rest].sort((x, y) => x.timeLimit - y.timeLimit || x.submitTime - y.submitTime || x.id - y.id);
  const res = reservation;
  const noFitNow = new Set<string>();
  const noFitPast = new Set<string>();
  for (const job of rest) {
    if (!reasons && pool.freeCores === 0) break;
    const d = demandOf(job);
    if (noFitNow.has(d.key)) {
      if (reasons) waiting.set(job.id, "resources");
      continue;
    }
    if (neverFits(job, d)) {
      if (reasons) waiting.set(job.id, "resources: no up node set can ever hold it");
      continue;
    }
    const p = placeJob(pool, job, d, false, chosen);
    if (!p) {
      noFitNow.add(d.key);
      if (reasons) waiting.set(job.id, "resources");
      continue;
    }
    if (now + limitAt(job, p.nodes.length) * 1000 <= res.start) {
      pool.take(p.shares);
      starts.push({ jobId: job.id, reason: "backfill", ...p });
      continue;
    }
    // It would run past the reservation's start: only in what the reservation leaves over.
    const q = noFitPast.has(d.key) ? undefined : placeJob(pool, job, d, true, chosen);
    if (!q) {
      noFitPast.add(d.key);
      if (reasons) waiting.set(job.id, `priority: would delay job ${res.jobId}`);
      continue;
    }
    pool.take(q.shares, true);
    starts.push({ jobId: job.id, reason: "backfill", ...q });
  }
  return { starts, reservation, waiting };
}
