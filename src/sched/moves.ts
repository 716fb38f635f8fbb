/**
 * Moves off nodes whose jobs should leave (issue 34: a host `overloaded`, or `owner` — its owner
 * wants it back). After the policy's plan, each running job on such a node is weighed:
 *
 * - a rigid job stays where it is, and the plan says so (`Plan.declined`, as every move not made);
 * - an elastic or checkpoint-restart job is moved when the gain pays for the move (HPCM's missing
 *   check): gain = remaining time × (1 − its speed now / its speed after the move), against the
 *   move's cost (its adaptations × its measured adaptation cost: `JobState.adaptCost`, a
 *   checkpoint-restart job's restart estimate, else `config.defaultAdaptCost`).
 *
 * An adaptation gives back only the last nodes of an allocation (docs/adaptation.md §7.10, §8).
 * When the loaded nodes are its last, a move is one adaptation, a swap: they leave and the
 * destinations join in one window, at the same size. Otherwise it is a pair: a shrink to the nodes
 * before the first loaded one, then, once it commits, a grow back to the same size onto the nodes it
 * gave back that may stay and the destinations (`PlanResize.then`). With too few destinations it is
 * the shrink alone, and the policy's grows bring the job back later. A job whose first node is loaded, or whose shrink would
 * go below its minimum or off its sizes, cannot move: the plan says why.
 *
 * Speeds: a bulk-synchronous job runs at its slowest node's pace. Its pace on an overloaded node is
 * measured when it can be (`measuredSpeed`: its iterations per window since the node's state changed
 * against before); otherwise, and for the speed after the move, a node's speed is what its host
 * state's inputs leave a job (1 − `cpu.other`, the share of CPU others take); an `owner` node's is
 * 0 (its owner takes it back); an `overloaded` one without that input counts as 0.5. Destinations
 * are the idle nodes that take new work, best score first: predicted speed, then cpus, then name.
 * Pure.
 */
import { shouldVacate, takesNewWork, type HostState } from "../domain/host-state.ts";
import { compareNames } from "./batch.ts";
import { remainingTime } from "./elastic.ts";
import { limitRatio } from "./limits.ts";
import { remap, swap } from "./remap.ts";
import { isValidSize } from "./sizes.ts";
import type { ClusterNode } from "./types.ts";
import type { DeclinedMove, Plan, PlanResize, Snapshot, SnapshotJob } from "./plan.ts";

/** What a job keeps of its pace on a node (0..1), from the node's host state. */
export function hostSpeed(h: HostState | undefined): number {
  if (!h) return 1;
  if (h.state === "owner") return 0;
  const other = h.inputs["cpu.other"];
  if (other !== undefined && Number.isFinite(other)) return Math.min(1, Math.max(0, 1 - other));
  return h.state === "overloaded" ? 0.5 : 1;
}

/**
 * The job's own pace since `since` (a node's state changed) against its pace before, from its
 * samples' iterations per window (at least 2 windows on each side), or undefined. The samples are
 * those since its last adaptation, at one size: the ratio is its speed now relative to unloaded.
 */
export function measuredSpeed(samples: readonly { time: number; iterations?: number }[], since: number): number | undefined {
  const before: number[] = [];
  const after: number[] = [];
  for (const x of samples) if (x.iterations !== undefined) (x.time < since ? before : after).push(x.iterations);
  if (before.length < 2 || after.length < 2) return undefined;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const b = mean(before);
  return b > 0 ? Math.min(1, Math.max(0, mean(after) / b)) : undefined;
}

/** A time limit neither raised nor lowered: a move ends at the size it began with. */
const SAME_LIMIT = { ratio: 1, source: "a move: the same size after it" };

const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2));
const stateOf = (n: ClusterNode | undefined) => (n?.host ? `${n.host.state}${n.host.rule ? `: ${n.host.rule}` : ""}` : "free");

/** The plan with moves for the jobs on nodes that should be left, and notes for those that stay. */
export function planMoves(s: Snapshot, plan: Plan): Plan {
  if (s.resizes === false || !s.nodes.some((n) => shouldVacate(n.host))) return plan;
  const byName = new Map<string, ClusterNode>();
  const vacate = new Set<string>();
  for (const n of s.nodes) {
    byName.set(n.name, n);
    if (shouldVacate(n.host)) vacate.add(n.name);
  }

  // Nodes this plan gives out already, and the nodes any running job holds.
  const taken = new Set<string>();
  for (const x of plan.starts) for (const n of x.nodes) taken.add(n);
  for (const x of plan.spawns) for (const n of x.nodes) taken.add(n);
  for (const x of plan.resizes) for (const n of x.added) taken.add(n);
  for (const j of s.running) for (const n of j.nodeNames) taken.add(n);
  const planned = new Set(plan.resizes.map((r) => r.jobId));
  const free = s.nodes
    .filter((n) => n.up && n.jobId === undefined && takesNewWork(n.host) && !taken.has(n.name))
    .sort((a, b) => hostSpeed(b.host) - hostSpeed(a.host) || (b.cpus ?? 1) - (a.cpus ?? 1) || compareNames(a.name, b.name));

  const resizes: PlanResize[] = [];
  const declined: DeclinedMove[] = [];
  for (const job of s.running) {
    const loaded = job.nodeNames.filter((n) => vacate.has(n));
    if (loaded.length === 0) continue;
    const where = loaded.map((n) => `${n} (${stateOf(byName.get(n))})`).join(", ");
    if (job.adapting) continue; // it decides again once its adaptation commits
    if (!job.elastic) {
      declined.push({ jobId: job.id, nodes: job.nodes, stays: loaded, reason: `stays on ${where}: a rigid job cannot move (only elastic and checkpoint-restart jobs do)` });
      continue;
    }
    if (planned.has(job.id)) continue; // the policy resizes it in this plan; the move is weighed in the next
    const decided = weigh(s, job, loaded, free, byName);
    if (typeof decided === "string") {
      declined.push({ jobId: job.id, nodes: job.nodes, stays: loaded, reason: `stays on ${where}: ${decided}` });
      continue;
    }
    for (const n of [...decided.added, ...(decided.then?.added ?? [])]) {
      const i = free.findIndex((f) => f.name === n);
      if (i >= 0) free.splice(i, 1);
    }
    resizes.push({ ...decided, reason: `move off ${where}: ${decided.reason}` });
  }
  if (resizes.length === 0 && declined.length === 0) return plan;
  return { ...plan, resizes: [...plan.resizes, ...resizes], ...(declined.length > 0 ? { declined } : {}) };
}

/** The move of `job` off its `loaded` nodes, or why it is not made. `free` is in score order. */
function weigh(s: Snapshot, job: SnapshotJob, loaded: readonly string[], free: readonly ClusterNode[], byName: ReadonlyMap<string, ClusterNode>): Omit<PlanResize, "reason"> & { reason: string } | string {
  const names = job.nodeNames;
  const n = names.length;
  const first = names.findIndex((x) => loaded.includes(x));
  if (first === 0) return `its first node (rank 0's) is one of them, and a resize gives back only the last nodes of an allocation`;
  if (first < job.minNodes || !isValidSize(job.sizes, first)) return `leaving it means shrinking to ${first} node${first === 1 ? "" : "s"} first (a resize gives back only the last nodes), ${first < job.minNodes ? `below its minimum ${job.minNodes}` : `not one of its sizes ${job.sizes!.join(",")}`}`;
  const keep = names.slice(0, first);
  const back = names.slice(first).filter((x) => !loaded.includes(x));
  const excluded = new Set(job.exclude ?? []);
  const dests = free.filter((f) => !excluded.has(f.name)).slice(0, loaded.length);
  const speed = (xs: readonly string[]) => Math.min(...xs.map((x) => hostSpeed(byName.get(x)?.host)));
  // Its own measured pace when it ran long enough on each side of the load (never for an owner's node: it goes).
  const since = Math.max(...loaded.map((x) => byName.get(x)?.host?.since ?? 0));
  const owner = loaded.some((x) => byName.get(x)?.host?.state === "owner");
  const measured = owner ? undefined : measuredSpeed(job.samples, since);
  const now = measured ?? speed(names);
  const nowWhat = measured !== undefined ? "measured " : "";
  const remaining = remainingTime(job, s.now);
  const perAdapt = job.adaptCost ?? s.config.defaultAdaptCost;
  const tasks = job.tasks ? [...job.tasks] : names.map(() => 1);
  const shrink = remap({ nodes: [...names], tasks }, first);
  const shrinkStep = { jobId: job.id, from: n, to: first, rule: "move" as const, added: [], removed: shrink.removed, remap: { staying: shrink.staying, leaving: shrink.leaving, joining: shrink.joining, tasks: shrink.after.tasks }, limit: SAME_LIMIT };
  const costWhat = `${job.adaptCost !== undefined ? "measured" : "default"} ${fmt(perAdapt)} s per adaptation`;

  if (dests.length === loaded.length && back.length === 0) {
    // The loaded nodes are the allocation's last: one adaptation swaps them for the destinations.
    const to = dests.map((d) => d.name);
    const later = speed([...keep, ...to]);
    const gain = later > 0 ? remaining * (1 - now / later) : 0;
    const numbers = `remaining ${fmt(remaining)} s × (1 − ${nowWhat}speed ${fmt(now)} / ${fmt(later)}) = ${fmt(gain)} s gained ${gain > perAdapt ? ">" : "≤"} cost 1 × ${costWhat} = ${fmt(perAdapt)} s`;
    if (!(gain > perAdapt)) return `the move would cost more than it gains: ${numbers}`;
    const m = swap({ nodes: [...names], tasks }, first, to, tasks[0]);
    const scores = dests.map((d) => `${d.name} (speed ${fmt(hostSpeed(d.host))}, ${d.cpus ?? 1} cpus)`).join(", ");
    return { jobId: job.id, from: n, to: n, rule: "move", reason: `to ${scores}; ${numbers}; one swap at ${n} nodes`, added: to, removed: m.removed, remap: { staying: m.staying, leaving: m.leaving, joining: m.joining, tasks: m.after.tasks }, limit: SAME_LIMIT };
  }
  if (dests.length === loaded.length) {
    const after = [...keep, ...back, ...dests.map((d) => d.name)];
    const later = speed(after);
    const gain = later > 0 ? remaining * (1 - now / later) : 0;
    const cost = 2 * perAdapt;
    const numbers = `remaining ${fmt(remaining)} s × (1 − ${nowWhat}speed ${fmt(now)} / ${fmt(later)}) = ${fmt(gain)} s gained ${gain > cost ? ">" : "≤"} cost 2 × ${costWhat} = ${fmt(cost)} s`;
    if (!(gain > cost)) return `the move would cost more than it gains: ${numbers}`;
    const added = [...back, ...dests.map((d) => d.name)];
    const grow = remap({ nodes: keep, tasks: tasks.slice(0, first) }, n, added, tasks[0]);
    const scores = dests.map((d) => `${d.name} (speed ${fmt(hostSpeed(d.host))}, ${d.cpus ?? 1} cpus)`).join(", ");
    const reason = `to ${scores}; ${numbers}; shrink ${n} -> ${first}, then grow ${first} -> ${n} onto ${added.join(",")}`;
    const then: PlanResize = { jobId: job.id, from: first, to: n, rule: "move", reason: `second half of a move: ${reason}`, added, removed: [], remap: { staying: grow.staying, leaving: grow.leaving, joining: grow.joining, tasks: grow.after.tasks }, limit: SAME_LIMIT };
    return { ...shrinkStep, reason, then };
  }
  // Too few nodes to go to: the shrink alone, the policy grows it back later.
  const later = speed(keep) * (first / n);
  const gain = later > 0 ? remaining * (1 - now / later) : 0;
  const cost = perAdapt;
  const numbers = `no node to go to (${free.length} free, ${loaded.length} needed); shrinking to ${first}: remaining ${fmt(remaining)} s × (1 − ${nowWhat}speed ${fmt(now)} / ${fmt(later)} at ${first}/${n} of the nodes) = ${fmt(gain)} s gained ${gain > cost ? ">" : "≤"} cost ${costWhat} = ${fmt(cost)} s`;
  if (!(gain > cost)) return `the move would cost more than it gains: ${numbers}`;
  // It runs smaller until the policy grows it back: its limit follows, as after any shrink of the scheduler's.
  return { ...shrinkStep, reason: `${numbers}; grows back when nodes are free`, limit: limitRatio(job, first) };
}
