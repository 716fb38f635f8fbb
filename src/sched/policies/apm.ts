/**
 * APM (Hungershöfer, Streit & Wierum) on a cluster. The APM had no queue: every job ran at once on
 * one SMP. Here jobs are admitted in FCFS order while the minimum sizes of all admitted jobs fit
 * (rigid jobs at their size), and the nodes not held by rigid or adapting jobs are split among
 * the elastic ones after every event:
 * - apm-equi: equipartition, floor(P/N) each, one more for the oldest P mod N (within [min, max]);
 * - apm-maxs: everyone at its minimum, then one node at a time to the job whose speedup grows most
 *   by it (differential speedup under its runtime model; linear when it has none), stopping when
 *   no job gains.
 * Shrinks are planned at once; starts and grows take only nodes idle now (the rest follows when
 * the shrinks commit and the next pass runs).
 */
import { differentialSpeedup, type RuntimeModel } from "../../model/amdahl.ts";
import type { CountStart, PassInput, PassPlan, PendingJob, Reservation, Resize } from "../types.ts";
import { incomingNodes, movable, queue, rigid } from "./common.ts";
import { Heap } from "../../util/heap.ts";

interface Share {
  id: number;
  age: number;
  min: number;
  max: number;
  model?: RuntimeModel;
  /** Running size, or undefined for a job being admitted. */
  nodes?: number;
}

export function planApm(input: PassInput, kind: "equi" | "maxs"): PassPlan {
  let fixed = 0;
  const shares: Share[] = [];
  for (const j of input.running) {
    if (movable(j, input)) shares.push({ id: j.id, age: j.submitTime, min: j.minNodes, max: j.maxNodes, model: j.model, nodes: j.nodes });
    else fixed += j.adapting && j.resizingTo !== undefined ? Math.max(j.nodes, j.resizingTo) : j.nodes;
  }
  // Admission, FCFS.
  let minSum = fixed;
  for (const s of shares) minSum += s.min;
  const admitted: PendingJob[] = [];
  for (const w of queue(input)) {
    const job = w.elastic ? w : rigid(w);
    if (minSum + job.minNodes > input.upNodes) break;
    minSum += job.minNodes;
    admitted.push(job);
    if (w.elastic) shares.push({ id: w.id, age: w.submitTime, min: w.minNodes, max: w.maxNodes, model: w.model });
    else fixed += job.minNodes;
  }
  const pool = input.upNodes - fixed;
  const target = kind === "equi" ? equipartition(shares, pool) : maxSpeedup(shares, pool);

  const resizes: Resize[] = [];
  const grows: { s: Share; to: number }[] = [];
  shares.forEach((s, i) => {
    const to = target[i]!;
    if (s.nodes === undefined || to === s.nodes) return;
    if (to < s.nodes) resizes.push({ jobId: s.id, from: s.nodes, to, rule: kind, reason: reasonFor(kind, to, shares.length, pool) });
    else grows.push({ s, to });
  });
  let idle = input.idleNodes;
  const starts: CountStart[] = [];
  const reservations: Reservation[] = [];
  const byId = new Map(shares.map((s, i) => [s.id, target[i]!]));
  for (const w of admitted) {
    const want = w.elastic ? byId.get(w.id)! : w.minNodes;
    const size = Math.min(want, idle);
    if (size >= w.minNodes && size > 0) {
      starts.push({ jobId: w.id, nodes: size, reason: `apm-${kind}: admitted` });
      idle -= size;
    } else reservations.push({ jobId: w.id, start: input.now, nodes: w.minNodes, reason: `apm-${kind}: admitted, waits for ${incomingNodes(input) > 0 ? "shrinks under way" : "the shrinks planned now"}` });
  }
  grows.sort((a, b) => a.s.age - b.s.age || a.s.id - b.s.id);
  for (const { s, to } of grows) {
    const add = Math.min(idle, to - s.nodes!);
    if (add <= 0) continue;
    idle -= add;
    resizes.push({ jobId: s.id, from: s.nodes!, to: s.nodes! + add, rule: kind, reason: reasonFor(kind, to, shares.length, pool) });
  }
  return { starts, resizes, reservations, notes: [] };
}

function reasonFor(kind: "equi" | "maxs", to: number, n: number, pool: number): string {
  return kind === "equi" ? `equipartition: ${pool} nodes over ${n} elastic jobs, share ${to}` : `max accumulated speedup: ${pool} nodes over ${n} elastic jobs, share ${to}`;
}

/** Equal shares within [min, max]; the oldest jobs get the nodes that do not divide evenly. */
export function equipartition(jobs: readonly { min: number; max: number; age: number; id: number }[], pool: number): number[] {
  if (jobs.length === 0) return [];
  const at = (level: number) => jobs.reduce((acc, j) => acc + Math.max(j.min, Math.min(j.max, level)), 0);
  let lo = 0;
  let hi = Math.max(...jobs.map((j) => j.max));
  if (at(hi) <= pool) return jobs.map((j) => j.max);
  // Largest level L with at(L) <= pool.
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (at(mid) <= pool) lo = mid;
    else hi = mid - 1;
  }
  const out = jobs.map((j) => Math.max(j.min, Math.min(j.max, lo)));
  let left = pool - out.reduce((a, b) => a + b, 0);
  const order = jobs.map((_, i) => i).sort((a, b) => jobs[a]!.age - jobs[b]!.age || jobs[a]!.id - jobs[b]!.id);
  for (const i of order) {
    if (left <= 0) break;
    if (out[i]! === lo && lo < jobs[i]!.max && lo >= jobs[i]!.min) {
      out[i] = lo + 1;
      left--;
    }
  }
  return out;
}

/** APM's greedy: all at their minimum, then each node to the largest differential speedup. */
export function maxSpeedup(jobs: readonly Share[], pool: number): number[] {
  const out = jobs.map((j) => j.min);
  let left = pool - out.reduce((a, b) => a + b, 0);
  const ds = (i: number) => {
    const m = jobs[i]!.model;
    return m ? differentialSpeedup(m, out[i]! + 1) : 1;
  };
  // Max-heap of (ds, -age, -id) over job indices that can still grow.
  const key = jobs.map((_, i) => ds(i));
  const heap = new Heap<number>((a, b) => key[a]! > key[b]! || (key[a] === key[b] && (jobs[a]!.age < jobs[b]!.age || (jobs[a]!.age === jobs[b]!.age && jobs[a]!.id < jobs[b]!.id))));
  jobs.forEach((j, i) => {
    if (out[i]! < j.max) heap.push(i);
  });
  while (left > 0 && heap.size > 0) {
    const i = heap.pop()!;
    if (key[i]! <= 0) break;
    out[i]!++;
    left--;
    if (out[i]! < jobs[i]!.max) {
      key[i] = ds(i);
      heap.push(i);
    }
  }
  return out;
}
