/**
 * One scheduling pass, one plan, one re-check (README: "One plan"). `makePlan` turns a snapshot
 * of the cluster (nodes by name, the queue, the running jobs with their models, the spawn
 * requests, the clock) into a `Plan` whose items name their nodes; `checkPlan` holds each item
 * against the state as it is when the plan is carried out and rejects, with a reason, what no
 * longer fits (Nomad's plan applier, `nomad/plan_apply.go`). The live controller and the
 * simulator both call these two; neither has another path that hands out nodes. Pure.
 */
import type { NodeResources, NodeShare, ResourceRequest } from "../domain/resources.ts";
import type { PolicyName } from "./config.ts";
import { compareNames, planBatch, unfitNow } from "./batch.ts";
import { expectedEnd } from "./elastic.ts";
import { keptLimit, limitRatio, type LimitRatio } from "./limits.ts";
import { planPass } from "./policies/index.ts";
import { Pool } from "./pool.ts";
import { planMoves } from "./moves.ts";
import { remap } from "./remap.ts";
import { excludedBy, makeResourcePlan, resizeOn, resourceMode } from "./resource-plan.ts";
import { isValidSize } from "./sizes.ts";
import { jobsById } from "./jobs-by-id.ts";
import type { ClusterNode, CountStart, JobState, Note, PassInput, PendingJob, Reservation, Resize, ResizeRule } from "./types.ts";
import type { AdminLimits, ErsConfig } from "./config.ts";
import { takesNewWork } from "../domain/host-state.ts";

/** A running job as a snapshot holds it: the policies' view plus where its ranks are. */
export interface SnapshotJob extends JobState {
  /** Its nodes in rank order (`nodes` is their count). */
  nodeNames: readonly string[];
  /** Ranks per node, aligned with `nodeNames` (default one per node). */
  tasks?: readonly number[];
  /** Nodes it may never grow onto (sbatch --exclude). */
  exclude?: readonly string[];
  /** What it holds on each node, aligned with `nodeNames` (resource mode). Absent: its nodes whole. */
  shares?: readonly NodeShare[];
  /** Its request (resource mode): a grow of a job with a per-node shape takes that shape on each new node. */
  resources?: ResourceRequest;
}

/** A running job asking for new nodes for `tasks` processes (PMI spawn). */
export interface SpawnRequest {
  /** The request's own id (the grant names it). */
  id: number;
  jobId: number;
  tasks: number;
}

export interface Snapshot {
  now: number;
  /** Every node: up (schedulable), the job holding it, its cpus (spawn grants fill them; default 1). */
  nodes: readonly ClusterNode[];
  /** `nodes` is already in name order (node2 before node10): skips a sort. */
  namesSorted?: boolean;
  /**
   * Whole-node mode, when the caller keeps them (the simulator): the up nodes no job holds, in name
   * order, and how many nodes are up. A pass then reads no other node (no scan of every node).
   */
  idle?: { nodes: readonly ClusterNode[]; up: number };
  pending: readonly PendingJob[];
  /** `pending` is already in queue order. */
  sorted?: boolean;
  running: readonly SnapshotJob[];
  /** Oldest first. */
  spawns?: readonly SpawnRequest[];
  /** Memory per core for a request that names none (MiB; `--def-mem-per-cpu`); else each node's memory / cores. */
  defMemPerCpu?: number;
  config: ErsConfig;
  limits?: AdminLimits;
  /** Say why every pending job the plan does not start waits (the controller's periodic pass). */
  reasons?: boolean;
  /**
   * False: plan no resizes (`--test-only` replays starts only). Otherwise every pass plans them,
   * live and simulated alike: there is no cadence of its own to keep (README: "One cadence").
   */
  resizes?: boolean;
}

export interface PlanStart {
  jobId: number;
  nodes: string[];
  reason: string;
  /** Resource mode: its share of each node, aligned with `nodes`. */
  shares?: NodeShare[];
  /** Resource mode: its tasks on each node, aligned with `nodes`. */
  tasks?: number[];
}

/** A resize's rank mapping as the plan made it: it travels with the adaptation (realloc, adapt.done). */
export interface RankRemap {
  staying: number;
  leaving: number;
  joining: number;
  /** Ranks per node of the world after it, in the allocation's order. */
  tasks: number[];
}

export interface PlanResize {
  jobId: number;
  from: number;
  to: number;
  rule: ResizeRule;
  reason: string;
  /** Nodes a grow takes (appended to the allocation) and nodes a shrink gives back (its last ones). */
  added: string[];
  removed: string[];
  /** Resource mode: a grow's share of each added node, aligned with `added`. */
  shares?: NodeShare[];
  /** Ranks that stay, leave and join, and ranks per node afterwards (remap.ts). */
  remap: RankRemap;
  /** What the rest of its time limit is multiplied by when the resize commits (limits.ts). */
  limit: LimitRatio;
  /**
   * A move's second half (moves.ts, rule `move`): the grow back to the same size onto the
   * destinations, carried out once this shrink commits.
   */
  then?: PlanResize;
}

export interface SpawnGrant {
  /** The request it grants. */
  id: number;
  jobId: number;
  tasks: number;
  nodes: string[];
  reason: string;
  /** Resource mode: the granted nodes whole, aligned with `nodes`. */
  shares?: NodeShare[];
}

export interface Plan {
  now: number;
  policy: PolicyName;
  spawns: SpawnGrant[];
  starts: PlanStart[];
  resizes: PlanResize[];
  reservations: Reservation[];
  notes: Note[];
  /** Why each pending job the plan does not start waits (only with `Snapshot.reasons`). */
  waiting: [number, string][];
  /** Moves weighed and not made (moves.ts): the job, its size, the nodes it stays on and why, with the numbers. */
  declined?: DeclinedMove[];
  /** The policy's pass left work undone: plan again once this plan is carried out (`PassPlan.again`). */
  again?: boolean;
}

export interface DeclinedMove {
  jobId: number;
  nodes: number;
  /** The nodes it should leave and stays on. */
  stays: string[];
  reason: string;
}

/**
 * A resize with its node names (a grow takes the first idle nodes it does not exclude, taken out of
 * `free`), the rank remap (remap.ts: computed here once, carried to the launcher and back) and the
 * time limit's ratio; or why it cannot be.
 */
function nameResize(job: SnapshotJob, r: Omit<PlanResize, "added" | "removed" | "remap" | "limit">, free: string[]): PlanResize | string {
  // remap copies what it keeps of these: neither the job's names nor its tasks need a copy here.
  const tasks = job.tasks ?? job.nodeNames.map(() => 1);
  let added: string[] = [];
  if (r.to > job.nodeNames.length) {
    const want = r.to - job.nodeNames.length;
    const excluded = job.exclude && job.exclude.length > 0 ? new Set(job.exclude) : undefined;
    added = !excluded ? free.slice(0, want) : free.filter((n) => !excluded.has(n)).slice(0, want);
    if (added.length < want) return `growing job ${r.jobId} needs ${want} idle node${want === 1 ? "" : "s"}; ${added.length} ${added.length === 1 ? "is" : "are"} idle${excluded ? " and not excluded by it" : ""}`;
    if (!excluded) free.splice(0, want);
    else for (const n of added) free.splice(free.indexOf(n), 1);
  }
  const m = remap({ nodes: job.nodeNames, tasks }, r.to, added, tasks[0]);
  return { ...r, added, removed: m.removed, remap: { staying: m.staying, leaving: m.leaving, joining: m.joining, tasks: m.after.tasks }, limit: limitRatio(job, r.to) };
}

/**
 * A resize a user asked for (the API's), planned as a pass plans its own: against the snapshot's
 * idle nodes, with its remap and limit ratio (with `keepLimit`, one that does not raise the limit:
 * limits.ts keptLimit); or why it cannot be. The caller has checked that the job may be resized
 * to `to` (elastic, running, in its range).
 */
export function requestedResize(s: Snapshot, jobId: number, to: number, reason: string, keepLimit = false): PlanResize | string {
  const job = s.running.find((j) => j.id === jobId);
  if (!job) return `job ${jobId} is not running`;
  let planned: PlanResize | string;
  if (resourceMode(s.nodes)) planned = resizeOn(Pool.of(s.namesSorted ? s.nodes : [...s.nodes].sort((a, b) => compareNames(a.name, b.name)), s.running, s.defMemPerCpu), job, { jobId, to, rule: "requested", reason });
  else {
    const free = s.nodes.filter((n) => n.up && n.jobId === undefined).map((n) => n.name);
    if (!s.namesSorted) free.sort(compareNames);
    planned = nameResize(job, { jobId, from: job.nodeNames.length, to, rule: "requested", reason }, free);
  }
  return keepLimit && typeof planned !== "string" ? { ...planned, limit: keptLimit(job, to) } : planned;
}

/**
 * The snapshot's plan: spawn grants first, then the configured policy's starts and resizes, all
 * with node names; then the moves off nodes whose jobs should leave (moves.ts). A node whose host
 * state is not free takes no new work: the pass sees it as not up.
 */
export function makePlan(s: Snapshot): Plan {
  // The simulator's snapshot (`idle` kept by the caller: the free nodes that take new work) scans
  // every node only when some node does not take new work (its availability replay, sim/hosts.ts).
  if (s.idle) return s.idle.up < s.nodes.length ? planMoves(s, planOn(s, true)) : planOn(s, false);
  const closed = s.nodes.some((n) => !takesNewWork(n.host));
  const open = closed ? { ...s, nodes: s.nodes.map((n) => (n.up && !takesNewWork(n.host) ? { ...n, up: false } : n)) } : s;
  return planMoves(s, planOn(open, closed));
}

/**
 * The running jobs, each with how many of its nodes take no new work (`kept`): their host state is
 * not free, so the job's end does not give them back, and reservations must not count on them.
 * (In resource mode the pool has no such node: what a job gives back on one counts for nothing.)
 */
function withKeptNodes(s: Snapshot): readonly SnapshotJob[] {
  const kept = new Map<number, number>();
  for (const n of s.nodes) if (n.jobId !== undefined && !takesNewWork(n.host)) kept.set(n.jobId, (kept.get(n.jobId) ?? 0) + 1);
  return kept.size === 0 ? s.running : s.running.map((j) => (kept.has(j.id) ? { ...j, kept: kept.get(j.id) } : j));
}

/** The plan on the nodes that take new work; `closed`: some node does not (makePlan knows). */
function planOn(s: Snapshot, closed: boolean): Plan {
  if (!s.idle && resourceMode(s.nodes)) return makeResourcePlan(s);
  let idle: readonly ClusterNode[];
  if (s.idle) idle = s.idle.nodes;
  else {
    const found = s.nodes.filter((n) => n.up && n.jobId === undefined);
    if (!s.namesSorted) found.sort((a, b) => compareNames(a.name, b.name));
    idle = found;
  }

  // 1. Running jobs asking for nodes come before the queue, oldest first.
  const spawns: SpawnGrant[] = [];
  const granted = new Map<string, number>();
  for (const req of s.spawns ?? []) {
    const nodes: string[] = [];
    let cpus = 0;
    // Never a node the job excludes (its own --exclude, the nodes outside its partition).
    const excluded = excludedBy(s, req.jobId);
    for (const n of idle) {
      if (cpus >= req.tasks) break;
      if (granted.has(n.name) || excluded?.has(n.name)) continue;
      nodes.push(n.name);
      cpus += n.cpus ?? 1;
    }
    if (cpus < req.tasks) break;
    for (const n of nodes) granted.set(n, req.jobId);
    spawns.push({ id: req.id, jobId: req.jobId, tasks: req.tasks, nodes, reason: `spawn of ${req.tasks} processes: ${nodes.length} idle node${nodes.length === 1 ? "" : "s"} with ${cpus} cpus` });
  }
  const nodes = granted.size === 0 ? s.nodes : s.nodes.map((n) => (granted.has(n.name) ? { ...n, jobId: granted.get(n.name) } : n));
  if (granted.size > 0) idle = idle.filter((n) => !granted.has(n.name));

  // 2. Jobs bound to node names the idle nodes cannot satisfy now wait outside the pass.
  const unfit = new Map<number, string>();
  for (const job of s.pending) if (job.exclude || job.nodelist) {
    const why = unfitNow(nodes, job);
    if (why) unfit.set(job.id, why);
  }
  const pending = unfit.size > 0 ? s.pending.filter((j) => !unfit.has(j.id)) : s.pending;

  // 3. The policy, on counts.
  let up = s.idle?.up ?? 0;
  if (!s.idle) for (const n of s.nodes) if (n.up) up++;
  const input: PassInput = { now: s.now, upNodes: up, idleNodes: idle.length, running: closed ? withKeptNodes(s) : s.running, pending, sorted: s.sorted, config: s.config, limits: s.limits };
  const pass = planPass(input);

  // 4. Node names: starts (bound jobs choose first), then grows, from the idle nodes in name order.
  const starts: PlanStart[] = [];
  const resizes: PlanResize[] = [];
  const sized = s.resizes === false ? [] : pass.resizes.filter((r) => r.to !== r.from);
  if (pass.starts.length > 0 || sized.length > 0) {
    const byId = jobsById(s.running, sized.map((r) => r.jobId));
    const bound = new Map<number, PendingJob>();
    for (const j of pending) if (j.exclude || j.nodelist) bound.set(j.id, j);
    const free = freeNames(idle, pass.starts, sized, bound, byId);
    starts.push(...nameStarts(free, pass.starts, bound));
    for (const r of sized) {
      const job = byId.get(r.jobId);
      if (!job) throw new RangeError(`job ${r.jobId} resized, it is not running`);
      const planned = nameResize(job, r, free);
      if (typeof planned === "string") throw new RangeError(planned);
      resizes.push(planned);
    }
  }

  // 5. Why the others wait: FCFS + EASY's account.
  const waiting: [number, string][] = [];
  if (s.reasons) {
    const started = new Set(starts.map((x) => x.jobId));
    const running = s.running.map((j) => ({ id: j.id, nodes: [...j.nodeNames], expectedEnd: expectedEnd(j) }));
    const why = planBatch({ now: s.now, nodes: [...nodes], running, pending: [...pending], reasons: true, backfill: s.config.policy !== "fcfs" }).waiting;
    for (const [id, text] of unfit) why.set(id, text);
    for (const [id, text] of why) if (!started.has(id)) waiting.push([id, text]);
  }
  return { now: s.now, policy: s.config.policy, spawns, starts, resizes, reservations: pass.reservations, notes: pass.notes, waiting, ...(pass.again ? { again: true } : {}) };
}

/**
 * The idle nodes' names a plan's starts and grows are named from, in name order: they take them from
 * the front, so only as many as they take unless a job is bound to names or excludes some (a pass
 * on a large idle machine then names no node it does not use).
 */
function freeNames(idle: readonly ClusterNode[], starts: readonly CountStart[], resizes: readonly Resize[], bound: ReadonlyMap<number, PendingJob>, byId: ReadonlyMap<number, SnapshotJob>): string[] {
  let need = 0;
  for (const st of starts) {
    if (bound.has(st.jobId)) return idle.map((n) => n.name);
    need += st.nodes;
  }
  for (const r of resizes) {
    const job = byId.get(r.jobId);
    if (job?.exclude && job.exclude.length > 0) return idle.map((n) => n.name);
    if (job) need += Math.max(0, r.to - job.nodeNames.length);
  }
  const free: string[] = [];
  for (let i = 0; i < Math.min(need, idle.length); i++) free.push(idle[i]!.name);
  return free;
}

/** Count starts named from `free` (in order; taken names are removed from it). Bound jobs (by id: those bound to names or excluding some) choose first. */
function nameStarts(free: string[], starts: readonly { jobId: number; nodes: number; reason: string }[], bound: ReadonlyMap<number, PendingJob>): PlanStart[] {
  const named = new Map<number, string[]>();
  for (const st of starts) {
    const job = bound.get(st.jobId);
    if (!job) continue;
    const want = job.nodelist ?? [];
    if (want.some((n) => !free.includes(n))) continue;
    const excluded = new Set(job.exclude ?? []);
    const picked = [...want];
    for (const n of free) {
      if (picked.length >= st.nodes) break;
      if (!excluded.has(n) && !want.includes(n)) picked.push(n);
    }
    if (picked.length < st.nodes) continue;
    for (const n of picked) free.splice(free.indexOf(n), 1);
    named.set(st.jobId, picked);
  }
  const out: PlanStart[] = [];
  for (const st of starts) {
    if (bound.has(st.jobId)) {
      const picked = named.get(st.jobId);
      if (picked) out.push({ jobId: st.jobId, nodes: picked, reason: st.reason });
      continue;
    }
    if (st.nodes > free.length) throw new RangeError(`job ${st.jobId} started on ${st.nodes} nodes, ${free.length} are idle`);
    out.push({ jobId: st.jobId, nodes: free.splice(0, st.nodes), reason: st.reason });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The re-check.

export interface PlanNodeState {
  /** Schedulable now (live: UP, not drained, its agent connected, not completing a job). */
  up: boolean;
  /** False when its host state is not free (domain/host-state.ts): it takes no new start, grow or move. */
  takesWork?: boolean;
  /** Whole-node mode: the job holding it. */
  jobId?: number;
  /** Resource mode: its cores, memory and GPUs, and the share each job on it holds now (by job id). */
  resources?: NodeResources;
  shares?: ReadonlyMap<number, NodeShare>;
}

export interface PlanJobState {
  /** "pending" (eligible, not held), "running", "adapting", or anything else (held, ended...). */
  state: string;
  /** Its nodes in rank order. */
  nodes: readonly string[];
  minNodes: number;
  maxNodes: number;
  sizes?: readonly number[];
  /** Can be resized now (live: elastic, its elastic step's launcher attached). */
  resizable: boolean;
  /** False while it is between resize points (default true). */
  atResizePoint?: boolean;
  exclude?: readonly string[];
  nodelist?: readonly string[];
  /** Its request (resource mode): a job that names no node count may start on any number of nodes. */
  resources?: ResourceRequest;
}

/** The state a plan is carried out against, as it is now. */
export interface PlanState {
  node(name: string): PlanNodeState | undefined;
  job(id: number): PlanJobState | undefined;
}

export type Rejection =
  | { kind: "spawn"; jobId: number; reason: string; item: SpawnGrant }
  | { kind: "start"; jobId: number; reason: string; item: PlanStart }
  | { kind: "resize"; jobId: number; reason: string; item: PlanResize };

/**
 * Every item of `plan` against `state` and the nodes the items accepted before it claim: spawn
 * grants, then starts, then resizes. What still fits is accepted, the rest rejected with a reason.
 * An item with shares (resource mode) takes exactly them: each core and GPU must exist on the node
 * and be held by no job and no earlier item, and the memory must fit beside the node's shares and
 * the earlier items' (no node is ever over-allocated); an item without shares takes its nodes whole
 * and needs them idle.
 */
export function checkPlan(plan: Plan, state: PlanState): { accepted: Plan; rejected: Rejection[] } {
  if (plan.spawns.length === 0 && plan.starts.length === 0 && plan.resizes.length === 0) return { accepted: plan, rejected: [] };
  const claims = new Claims(state);
  const rejected: Rejection[] = [];
  const touched = new Set<number>();
  const usable = (nodes: readonly string[], excluded?: readonly string[], shares?: readonly NodeShare[]): string | undefined => {
    const why = unusable(nodes, excluded, shares);
    // A node named twice is the reason whatever else is wrong; only a list that fails is searched for one (Claims marks the names of one that passes).
    return why && namedTwice(nodes) ? NAMED_TWICE : why;
  };
  const unusable = (nodes: readonly string[], excluded?: readonly string[], shares?: readonly NodeShare[]): string | undefined => {
    if (shares && shares.length !== nodes.length) return `${shares.length} shares for ${nodes.length} nodes`;
    claims.nextItem();
    for (let i = 0; i < nodes.length; i++) {
      const name = nodes[i]!;
      const n = state.node(name);
      if (!n) return `node ${name} does not exist`;
      if (!n.up) return `node ${name} is not up`;
      if (n.takesWork === false) return `node ${name} takes no new work (its host state is not free)`;
      const why = shares ? claims.fits(name, n, shares[i]!) : claims.idle(name, n);
      if (why) return why;
      if (excluded?.includes(name)) return `node ${name} is excluded by the job`;
    }
    return undefined;
  };
  const claim = (nodes: readonly string[], shares?: readonly NodeShare[]) => {
    for (let i = 0; i < nodes.length; i++) claims.claim(nodes[i]!, shares?.[i]);
  };
  const sizeWhy = (j: PlanJobState, n: number): string | undefined =>
    n < j.minNodes || n > j.maxNodes ? `${n} nodes is outside its range ${j.minNodes}-${j.maxNodes}` : !isValidSize(j.sizes, n) ? `${n} nodes is not one of its sizes ${j.sizes!.join(",")}` : undefined;

  const spawns = plan.spawns.filter((g) => {
    const j = state.job(g.jobId);
    const why = !j ? "the job is gone" : j.state !== "running" && j.state !== "adapting" ? `the job is ${j.state}` : g.nodes.length === 0 ? "no nodes" : usable(g.nodes, undefined, g.shares);
    if (why) rejected.push({ kind: "spawn", jobId: g.jobId, reason: `spawn grant of ${g.nodes.join(",")}: ${why}`, item: g });
    else claim(g.nodes, g.shares);
    return !why;
  });
  const starts = plan.starts.filter((st) => {
    const j = state.job(st.jobId);
    // A request that names no node count (tasks packed onto nodes) may start on any number of them.
    const anyCount = st.shares !== undefined && j?.resources !== undefined && j.resources.nodes === undefined && !(j.minNodes < j.maxNodes);
    let why = !j ? "the job is gone" : touched.has(st.jobId) ? "started twice in one plan" : j.state !== "pending" ? `the job is ${j.state}` : st.nodes.length === 0 ? "no nodes" : (anyCount ? undefined : sizeWhy(j, st.nodes.length)) ?? usable(st.nodes, j.exclude, st.shares);
    if (!why && j!.nodelist) {
      const missing = j!.nodelist.find((n) => !st.nodes.includes(n));
      if (missing) why = `node ${missing} of its nodelist is not among them`;
    }
    touched.add(st.jobId);
    if (why) rejected.push({ kind: "start", jobId: st.jobId, reason: `start on ${st.nodes.length} nodes: ${why}`, item: st });
    else claim(st.nodes, st.shares);
    return !why;
  });
  const resizes = plan.resizes.filter((r) => {
    const j = state.job(r.jobId);
    const why = !j ? "the job is gone" : touched.has(r.jobId) ? "two items for one job in one plan" : resizeWhy(j, r) ?? sizeWhy(j, r.to) ?? (r.added.length > 0 ? usable(r.added, j.exclude, r.shares) : undefined) ?? (r.then ? thenWhy(j, r, r.then) ?? usable(movedTo(j, r.then), j.exclude) : undefined);
    touched.add(r.jobId);
    if (why) rejected.push({ kind: "resize", jobId: r.jobId, reason: `${r.rule} ${r.from} -> ${r.to} nodes: ${why}`, item: r });
    else claim([...r.added, ...(r.then ? movedTo(j!, r.then) : [])], r.shares);
    return !why;
  });
  return { accepted: { ...plan, spawns, starts, resizes }, rejected };
}

const NAMED_TWICE = "a node is named twice";
/** A whole node an accepted item of the plan holds (`Claims.named`). */
const TAKEN = -1;

/** Whether a name appears twice (only in a list that failed: a short list needs no Set). */
function namedTwice(names: readonly string[]): boolean {
  if (names.length > 16) return new Set(names).size !== names.length;
  for (let i = 1; i < names.length; i++) for (let k = 0; k < i; k++) if (names[i] === names[k]) return true;
  return false;
}

/** What the nodes hold now and what the plan's accepted items have claimed on them so far. */
class Claims {
  /** Nodes with resources or shares (resource mode): what they hold and what items claimed on them. */
  private readonly used = new Map<string, { cores: Map<number, number | undefined>; gpus: Map<number, number | undefined>; memMiB: number; shares: number; whole: boolean; item: number }>();
  /** Whole nodes (no resources, no shares) the items named: the last item that named one, or TAKEN once an accepted item holds it. */
  private readonly named = new Map<string, number>();
  /** The item whose nodes are being checked: a node it names twice is found when it is marked twice. */
  private item = 0;

  constructor(private readonly state: PlanState) {}

  /** The next item's nodes are checked now. */
  nextItem(): void {
    this.item++;
  }

  /** Why the node cannot be the current item's: it named it before. Marks it. */
  private again(u: { item: number }): string | undefined {
    if (u.item === this.item) return NAMED_TWICE;
    u.item = this.item;
    return undefined;
  }

  private of(name: string, n: PlanNodeState) {
    let u = this.used.get(name);
    if (!u) {
      u = { cores: new Map(), gpus: new Map(), memMiB: 0, shares: 0, whole: n.jobId !== undefined, item: 0 };
      for (const [jobId, s] of n.shares ?? []) {
        for (const c of s.cores) u.cores.set(c, jobId);
        for (const g of s.gpus) u.gpus.set(g, jobId);
        u.memMiB += s.memMiB;
        u.shares++;
      }
      this.used.set(name, u);
    }
    return u;
  }

  /** Why the node cannot be taken whole, or undefined. */
  idle(name: string, n: PlanNodeState): string | undefined {
    if (n.jobId !== undefined) return `node ${name} is held by job ${n.jobId}`;
    if (n.resources === undefined && n.shares === undefined) {
      // No share can be on it (`fits` refuses a node without resources): one number says all.
      const m = this.named.get(name);
      if (m === TAKEN) return `node ${name} is taken by an earlier item of the plan`;
      if (m === this.item) return NAMED_TWICE;
      this.named.set(name, this.item);
      return undefined;
    }
    const u = this.of(name, n);
    if (u.whole) return `node ${name} is taken by an earlier item of the plan`;
    if (u.shares > 0) return `node ${name} is not idle: ${u.cores.size} of its cores are held`;
    return this.again(u);
  }

  /** Why `share` does not fit on the node beside what it holds and what earlier items claimed, or undefined. */
  fits(name: string, n: PlanNodeState, share: NodeShare): string | undefined {
    if (share.node !== name) return `the share for node ${name} names node ${share.node}`;
    const total = n.resources;
    if (!total) return `node ${name} reports no cores, memory or GPUs to share`;
    if (n.jobId !== undefined) return `node ${name} is held by job ${n.jobId}`;
    const u = this.of(name, n);
    if (u.whole) return `node ${name} is taken by an earlier item of the plan`;
    if (share.cores.length === 0) return `no cores on node ${name}`;
    for (const c of share.cores) {
      if (!Number.isInteger(c) || c < 0 || c >= total.cores) return `node ${name} has no core ${c} (it has ${total.cores})`;
      if (u.cores.has(c)) return `core ${c} of node ${name} is ${heldBy(u.cores.get(c))}`;
    }
    if (new Set(share.cores).size !== share.cores.length) return `a core of node ${name} is named twice`;
    for (const g of share.gpus) {
      if (!Number.isInteger(g) || g < 0 || g >= total.gpus.length) return `node ${name} has no GPU ${g} (it has ${total.gpus.length})`;
      if (u.gpus.has(g)) return `GPU ${g} of node ${name} is ${heldBy(u.gpus.get(g))}`;
    }
    if (new Set(share.gpus).size !== share.gpus.length) return `a GPU of node ${name} is named twice`;
    if (!(share.memMiB >= 0) || u.memMiB + share.memMiB > total.memMiB) return `node ${name} has ${Math.max(0, total.memMiB - u.memMiB)} MiB of memory free, the share takes ${share.memMiB}`;
    return this.again(u);
  }

  claim(name: string, share: NodeShare | undefined): void {
    // A whole node `idle` passed (every node of an accepted item was checked first).
    if (!share && this.named.has(name)) {
      this.named.set(name, TAKEN);
      return;
    }
    const n = this.state.node(name);
    if (!n) return;
    const u = this.of(name, n);
    if (!share) {
      u.whole = true;
      return;
    }
    for (const c of share.cores) u.cores.set(c, undefined);
    for (const g of share.gpus) u.gpus.set(g, undefined);
    u.memMiB += share.memMiB;
    u.shares++;
  }
}

const heldBy = (jobId: number | undefined): string => (jobId === undefined ? "taken by an earlier item of the plan" : `held by job ${jobId}`);

/** Why a swap (a move in one adaptation) does not fit: its removed nodes are the allocation's last, as many as it adds. */
function swapWhy(j: PlanJobState, r: PlanResize): string | undefined {
  const last = j.nodes.slice(j.nodes.length - r.removed.length);
  if (r.removed.length === 0 || r.removed.length !== r.added.length || r.removed.some((n, i) => n !== last[i])) return `a swap gives back the last nodes of the allocation and adds as many, the plan names -${r.removed.join(",")} +${r.added.join(",")}`;
  if (r.then) return "a swap has no second half";
  return undefined;
}

/** The nodes a move's grow back takes that the job does not hold now. */
function movedTo(j: PlanJobState, then: PlanResize): string[] {
  return then.added.filter((n) => !j.nodes.includes(n));
}

/** Why a move's grow back does not follow its shrink: back to the size it began with, onto what the shrink gave back that may stay and idle nodes. */
function thenWhy(j: PlanJobState, r: PlanResize, then: PlanResize): string | undefined {
  if (r.to >= r.from || then.from !== r.to || then.to !== r.from) return `a move is a shrink and a grow back to ${r.from} nodes, the plan says ${r.from} -> ${r.to} -> ${then.to}`;
  if (then.added.length !== then.to - then.from || then.removed.length > 0) return `its grow back by ${then.to - then.from} names ${then.added.length} added nodes`;
  const back = then.added.filter((n) => j.nodes.includes(n));
  if (back.some((n) => !r.removed.includes(n))) return "its grow back names a node the job keeps";
  return undefined;
}

function resizeWhy(j: PlanJobState, r: PlanResize): string | undefined {
  if (j.state !== "running") return `the job is ${j.state}`;
  if (!j.resizable) return "the job cannot be resized now";
  if (j.atResizePoint === false) return "the job is between resize points";
  if (j.nodes.length !== r.from) return `it holds ${j.nodes.length} nodes, the plan says ${r.from}`;
  if (r.to === r.from) return r.rule === "move" && r.added.length > 0 ? swapWhy(j, r) : "no change";
  if (r.to > r.from) return r.added.length === r.to - r.from && r.removed.length === 0 ? undefined : `a grow by ${r.to - r.from} names ${r.added.length} added nodes`;
  const last = j.nodes.slice(r.to);
  if (r.added.length > 0 || r.removed.length !== last.length || r.removed.some((n, i) => n !== last[i])) return `a shrink gives back the last ${r.from - r.to} nodes of the allocation (${last.join(",")}), the plan names ${r.removed.join(",")}`;
  return undefined;
}
