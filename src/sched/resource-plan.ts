/**
 * `makePlan` in resource mode (the nodes report cores, memory and GPUs): the same steps as on
 * counts, with the pool (pool.ts) as the nodes' state.
 *
 * 1. spawn grants: idle nodes (no share on them) whole, in name order, oldest request first;
 * 2. the configured policy on counts, as always, with `PassInput.vectors` (`ResourcePass`): its
 *    batch pass (FCFS + EASY) is the one on resource vectors (batch-vectors.ts), and the counts it
 *    sees are nodes no job holds anything on. A waiting job without a node count (tasks packed
 *    onto nodes) is seen as the nodes of the largest kind it needs; one that no set of up nodes
 *    could ever hold as a job larger than the cluster, which every policy leaves aside;
 * 3. names and shares: the batch's starts keep their placement; any other start (a moldable start
 *    of a malleable job, a seed policy's own) and every grow are placed on what is left, within
 *    the reservation's budget where they fit there, else anywhere; a grow of a job with a per-node
 *    shape takes that shape on each new node, of any other job whole idle nodes. An item that
 *    cannot be placed is left out with a note;
 * 4. why the others wait: the resource batch's reasons.
 */
import { type NodeShare, type ResourceRequest } from "../domain/resources.ts";
import { compareNames, type BatchCountsPlan } from "./batch.ts";
import { byEndTime, demandOf, NeverFits, placeJob, planBatchVectors, type Demand, type Ending, type VectorBatchPlan } from "./batch-vectors.ts";
import { expectedEnd } from "./elastic.ts";
import { limitRatio } from "./limits.ts";
import { planPass } from "./policies/index.ts";
import { withPriority } from "./priority.ts";
import type { Plan, PlanResize, PlanStart, RankRemap, Snapshot, SnapshotJob, SpawnGrant } from "./plan.ts";
import { Pool, WHOLE, type Placement } from "./pool.ts";
import { remap } from "./remap.ts";
import type { BatchOptions, ClusterNode, Note, PassInput, PendingJob, Resize, VectorBatch } from "./types.ts";

/** The nodes running job `jobId` may not be given (undefined: none). */
export function excludedBy(s: Pick<Snapshot, "running">, jobId: number): ReadonlySet<string> | undefined {
  const ex = s.running.find((j) => j.id === jobId)?.exclude;
  return ex && ex.length > 0 ? new Set(ex) : undefined;
}

/** Whether the snapshot's nodes report resources. */
export function resourceMode(nodes: readonly ClusterNode[]): boolean {
  for (const n of nodes) if (n.resources) return true;
  return false;
}

/** The shares each running job gives back, and when (a shrink under way gives its last nodes back when it commits). */
export function endingsOf(s: Pick<Snapshot, "now" | "running" | "config">, pool: Pool): Ending[] {
  const out: Ending[] = [];
  for (const j of s.running) {
    const shares = j.shares ?? pool.wholeShares(j.nodeNames);
    if (j.adapting && j.resizingTo !== undefined && j.resizingTo < j.nodeNames.length) {
      out.push({ shares: shares.slice(j.resizingTo), end: j.adaptEnd ?? s.now + (j.adaptCost ?? s.config.defaultAdaptCost) * 1000 });
      out.push({ shares: shares.slice(0, j.resizingTo), end: expectedEnd(j) });
    } else out.push({ shares, end: expectedEnd(j) });
  }
  return out;
}

/** The batch pass on resources for the policies (`PassInput.vectors`); it keeps the last run for naming. */
export class ResourcePass implements VectorBatch {
  last?: { plan: VectorBatchPlan; pool: Pool };
  /** In order of end, sorted once for every run of the pass (each finds a shadow time on them). */
  private readonly endings: readonly Ending[];

  constructor(
    readonly base: Pool,
    readonly never: NeverFits,
    endings: readonly Ending[],
    private readonly reasons: boolean,
    private readonly running: ReadonlyMap<number, SnapshotJob>,
  ) {
    this.endings = [...endings].sort(byEndTime);
  }

  run(now: number, pending: readonly PendingJob[], opts: BatchOptions, reasons: boolean): { plan: VectorBatchPlan; pool: Pool } {
    const pool = this.base.clone();
    const plan = planBatchVectors({ now, pool, never: (job, d) => this.never.never(job, d), endings: this.endings, pending, backfill: opts.backfill, shortestFirst: opts.shortestFirst, startSize: opts.startSize, scaleLimits: opts.scaleLimits, reasons });
    return { plan, pool };
  }

  batch(input: PassInput, pending: readonly PendingJob[], opts: BatchOptions): BatchCountsPlan {
    const last = (this.last = this.run(input.now, pending, opts, this.reasons));
    const { plan, pool } = last;
    let extra = 0;
    for (const n of pool.nodes) if (n.holders === 0 && !n.budget) extra++;
    return { starts: plan.starts.map((s) => ({ jobId: s.jobId, nodes: s.nodes.length, reason: s.reason })), reservation: plan.reservation, extra: plan.reservation ? extra : pool.idle, free: pool.idle, waiting: plan.waiting };
  }

  growable(jobId: number): number {
    const job = this.running.get(jobId);
    if (!job) return 0;
    const pool = this.last?.pool ?? this.base;
    const shape = growShape(job);
    return pool.countFitting(shape, shape.tasksPerNode ?? 1, 1, false, new Set([...job.nodeNames, ...(job.exclude ?? [])]));
  }
}

/** One more node of a running elastic job: its per-node shape when it is a shared-node job, else a whole node. */
export function growShape(job: { resources?: ResourceRequest }): ResourceRequest {
  const r = job.resources;
  if (!r || r.exclusive) return WHOLE;
  return { exclusive: false, cpusPerTask: r.cpusPerTask, tasksPerNode: r.tasksPerNode ?? 1, memPerNodeMiB: r.memPerNodeMiB, memPerCpuMiB: r.memPerCpuMiB, gpusPerNode: r.gpusPerNode ?? (r.gpusPerTask !== undefined ? r.gpusPerTask * (r.tasksPerNode ?? 1) : undefined), gpuType: r.gpuType, constraint: r.constraint };
}

/**
 * How the policies see a waiting job: packed tasks as the nodes of the largest kind they need; a
 * job no up nodes could hold as one larger than the cluster. Kept on its demand while the cluster's
 * largest node and up count stay (a pass asks about every waiting job), and the same view object
 * while its count does (see `rigid`).
 */
function countView(job: PendingJob, d: Demand, never: boolean, largest: { cores: number; gpus: number }, up: number): PendingJob {
  const c = d.count;
  if (c && c.never === never && c.up === up && c.cores === largest.cores && c.gpus === largest.gpus) return withPriority(c.view, job);
  const n = never ? up + 1 : d.counted ? undefined : packedNodes(d.req, largest);
  const same = n === undefined || (n === job.minNodes && n === job.maxNodes && job.preferredNodes === undefined);
  const view = same ? job : c && c.view !== job && c.view.minNodes === n ? c.view : { ...job, minNodes: n, maxNodes: n, preferredNodes: undefined };
  d.count = { never, up, cores: largest.cores, gpus: largest.gpus, view };
  return withPriority(view, job);
}

/** The nodes of the largest kind packed tasks need. */
function packedNodes(r: ResourceRequest, largest: { cores: number; gpus: number }): number {
  const tasks = r.tasks ?? 1;
  const gpus = r.gpus ?? (r.gpusPerTask ?? 0) * tasks;
  return Math.max(1, Math.ceil((tasks * r.cpusPerTask) / Math.max(1, largest.cores)), gpus > 0 && largest.gpus > 0 ? Math.ceil(gpus / largest.gpus) : 1);
}

export function makeResourcePlan(s: Snapshot): Plan {
  const nodes = s.namesSorted ? s.nodes : [...s.nodes].sort((a, b) => compareNames(a.name, b.name));
  const base = Pool.of(nodes, s.running, s.defMemPerCpu);
  const notes: Note[] = [];

  // 1. Spawn grants: idle nodes whole, in name order.
  const spawns: SpawnGrant[] = [];
  for (const req of s.spawns ?? []) {
    const picked: Placement = { nodes: [], shares: [], tasks: [] };
    let cores = 0;
    const excluded = excludedBy(s, req.jobId);
    for (const n of base.nodes) {
      if (cores >= req.tasks) break;
      if (n.holders > 0 || excluded?.has(n.name)) continue;
      picked.nodes.push(n.name);
      picked.shares.push(...base.wholeShares([n.name]));
      cores += n.total.cores;
    }
    if (cores < req.tasks) break;
    base.take(picked.shares);
    spawns.push({ id: req.id, jobId: req.jobId, tasks: req.tasks, nodes: picked.nodes, shares: picked.shares, reason: `spawn of ${req.tasks} processes: ${picked.nodes.length} idle node${picked.nodes.length === 1 ? "" : "s"} with ${cores} cores` });
  }

  // 2. The policy on counts, its batch on resources.
  const running = new Map(s.running.map((j) => [j.id, j]));
  const ctx = new ResourcePass(base, NeverFits.of(nodes, s.defMemPerCpu), endingsOf(s, base), s.reasons === true, running);
  const largest = { cores: 1, gpus: 0 };
  for (const n of base.nodes) {
    largest.cores = Math.max(largest.cores, n.total.cores);
    largest.gpus = Math.max(largest.gpus, n.total.gpus.length);
  }
  const up = base.nodes.length;
  const pending = s.pending.map((job) => {
    const d = demandOf(job);
    return countView(job, d, ctx.never.never(job, d), largest, up);
  });
  const input: PassInput = { now: s.now, upNodes: up, idleNodes: base.idle, running: s.running, pending, sorted: s.sorted, config: s.config, limits: s.limits, vectors: ctx };
  const pass = planPass(input);

  // 3. Names and shares.
  const last = ctx.last;
  const after = last ? last.pool : base.clone();
  const placed = new Map((last?.plan.starts ?? []).map((v) => [v.jobId, v]));
  const kept = new Set(pass.starts.map((st) => st.jobId));
  for (const v of placed.values()) if (!kept.has(v.jobId)) after.give(v.shares);
  let byId: Map<number, PendingJob> | undefined;
  const head = last?.plan.reservation?.jobId;
  const starts: PlanStart[] = [];
  for (const st of pass.starts) {
    const v = placed.get(st.jobId);
    if (v && v.nodes.length === st.nodes) {
      starts.push({ jobId: st.jobId, nodes: v.nodes, reason: st.reason, shares: v.shares, tasks: v.tasks });
      continue;
    }
    if (v) after.give(v.shares);
    byId ??= new Map(s.pending.map((j) => [j.id, j]));
    const job = byId.get(st.jobId);
    if (!job) throw new RangeError(`job ${st.jobId} started, it is not pending`);
    const d = demandOf(job);
    const sized = d.counted ? { ...job, minNodes: st.nodes, maxNodes: st.nodes, preferredNodes: st.nodes, sizes: undefined } : job;
    // Within the reservation's budget where it fits there (the head itself owns the reservation).
    const past = job.id !== head ? placeJob(after, sized, d, true) : undefined;
    const p = past ?? placeJob(after, sized, d, false);
    if (!p) {
      notes.push({ jobId: st.jobId, text: `not started on ${st.nodes} node(s): its request does not fit on what is free now` });
      continue;
    }
    after.take(p.shares, past !== undefined);
    starts.push({ jobId: st.jobId, nodes: p.nodes, reason: st.reason, shares: p.shares, tasks: p.tasks });
  }
  const resizes: PlanResize[] = [];
  for (const r of s.resizes === false ? [] : pass.resizes) {
    if (r.to === r.from) continue;
    const job = running.get(r.jobId);
    if (!job) throw new RangeError(`job ${r.jobId} resized, it is not running`);
    const planned = resizeOn(after, job, r);
    if (typeof planned === "string") notes.push({ jobId: r.jobId, text: planned });
    else resizes.push(planned);
  }

  // 4. Why the others wait.
  const waiting: [number, string][] = [];
  if (s.reasons) {
    const why = last?.plan.waiting ?? ctx.run(s.now, pending, { backfill: s.config.policy !== "fcfs" }, true).plan.waiting;
    const started = new Set(starts.map((x) => x.jobId));
    for (const [id, text] of why) if (!started.has(id)) waiting.push([id, text]);
  }
  return { now: s.now, policy: s.config.policy, spawns, starts, resizes, reservations: pass.reservations, notes: [...pass.notes, ...notes], waiting };
}

/**
 * A resize with its nodes and shares: a grow takes new nodes of the job's shape from `pool` (within
 * a reservation's budget where they fit there), a shrink gives back its last nodes; or why not.
 */
export function resizeOn(pool: Pool, job: SnapshotJob, r: Omit<Resize, "from"> & { from?: number }): PlanResize | string {
  const tasks = job.tasks ? [...job.tasks] : job.nodeNames.map(() => 1);
  const from = job.nodeNames.length;
  let added: string[] = [];
  let shares: NodeShare[] | undefined;
  let perNode = tasks[0];
  if (r.to > from) {
    const want = r.to - from;
    const shape = growShape(job);
    const exclude = new Set([...job.nodeNames, ...(job.exclude ?? [])]);
    const past = pool.place(shape, { nodes: want, past: true, exclude });
    const p = past ?? pool.place(shape, { nodes: want, exclude });
    if (!p) return `growing job ${r.jobId} needs ${want} more node${want === 1 ? "" : "s"} of its shape (${shape === WHOLE ? "whole nodes" : `${shape.tasksPerNode} task(s) of ${shape.cpusPerTask} core(s)`}); fewer are free`;
    pool.take(p.shares, past !== undefined);
    added = p.nodes;
    shares = p.shares;
    if (shape !== WHOLE) perNode = shape.tasksPerNode;
  }
  const m = remap({ nodes: [...job.nodeNames], tasks }, r.to, added, perNode);
  const rm: RankRemap = { staying: m.staying, leaving: m.leaving, joining: m.joining, tasks: m.after.tasks };
  return { jobId: r.jobId, from, to: r.to, rule: r.rule, reason: r.reason, added, removed: m.removed, ...(shares ? { shares } : {}), remap: rm, limit: limitRatio(job, r.to) };
}
