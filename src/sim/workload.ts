/**
 * From trace jobs to simulated ones. A fraction of the jobs, chosen by seed, is malleable:
 * - speedup: Amdahl's law; the serial fraction is drawn per job so that the job's parallel
 *   efficiency at the size it asked for is uniform in [effLo, effHi) (default [0.5, 1.0)), i.e.
 *   users ask for sizes at which their code is still reasonably efficient: s = (1/E - 1) / (q - 1)
 *   with q = max(size, 2) (a one-node job draws its efficiency on two nodes);
 * - the trace's run time is its time at the size it asked for, so T1 = runtime / (s + (1-s)/size);
 * - range [ceil(size / shrink), min(cluster, size * grow)], default shrink 4, grow 2;
 * - a resize costs fixed + perNode * |nodes added or removed| seconds (default 5 + 0.2).
 * Rigid jobs run at their trace size for their trace time. The malleable set for a larger fraction
 * contains the set for a smaller one (same seed): one uniform draw per job, compared to the fraction.
 *
 * Shared nodes (`shared`, `ebb sim --cores-per-node K`): a rigid job asks for its processors as
 * tasks of one core each on nodes that jobs share (Slurm's `-n P`), and runs for its trace time
 * however they are spread; a malleable job keeps whole nodes, ceil(P / K) of them and its range.
 */
import type { TraceJob } from "./swf.ts";
import { amdahlWork, fixedWork, type SimJob } from "./job.ts";
import { stream } from "./random.ts";

export interface WorkloadOptions {
  /** Nodes in the cluster. */
  nodes: number;
  /** Processors per node: a job with P processors asks for ceil(P / coresPerNode) nodes. */
  coresPerNode: number;
  /** Rigid jobs ask for their processors as one-core tasks on shared nodes (resource mode). */
  shared?: boolean;
  /** Fraction of jobs that are malleable, 0..1. */
  malleable: number;
  seed: number;
  /** Every submit time is multiplied by this (default 1; below 1: denser arrivals, higher load). */
  arrivalScale?: number;
  efficiency?: readonly [number, number];
  shrink?: number;
  grow?: number;
  cost?: { fixed: number; perNode: number };
}

export const WORKLOAD_DEFAULTS = { efficiency: [0.5, 1.0] as const, shrink: 4, grow: 2, cost: { fixed: 5, perNode: 0.2 } };

export interface Built {
  jobs: SimJob[];
  /** Trace jobs left out (too large for the cluster). */
  skipped: { line: number; message: string }[];
}

export function buildWorkload(trace: readonly TraceJob[], opts: WorkloadOptions): Built {
  const [effLo, effHi] = opts.efficiency ?? WORKLOAD_DEFAULTS.efficiency;
  const shrink = opts.shrink ?? WORKLOAD_DEFAULTS.shrink;
  const grow = opts.grow ?? WORKLOAD_DEFAULTS.grow;
  const cost = opts.cost ?? WORKLOAD_DEFAULTS.cost;
  const scale = opts.arrivalScale ?? 1;
  if (!(scale > 0) || !Number.isFinite(scale)) throw new RangeError(`arrivalScale ${scale}: must be a positive number`);
  const pick = stream(opts.seed, "malleable");
  const eff = stream(opts.seed, "efficiency");
  const jobs: SimJob[] = [];
  const skipped: Built["skipped"] = [];
  const resizeCost = (from: number, to: number) => cost.fixed + cost.perNode * Math.abs(to - from);
  for (const t of trace) {
    // Draw for every job so each job's draws do not depend on the others' sizes.
    const u = pick.next();
    const e = eff.uniform(effLo, effHi);
    const size = Math.ceil(t.procs / opts.coresPerNode);
    if (size > opts.nodes) {
      skipped.push({ line: t.line, message: `job ${t.id}: needs ${size} nodes, the cluster has ${opts.nodes}` });
      continue;
    }
    const malleable = u < opts.malleable;
    const q = Math.max(size, 2);
    const s = Math.min(1, Math.max(0, (1 / e - 1) / (q - 1)));
    const t1 = t.runtime / (s + (1 - s) / size);
    const shared = opts.shared === true && !malleable;
    const job: SimJob = {
      id: t.id,
      submit: t.submit * scale,
      nodes: size,
      minNodes: malleable ? Math.max(1, Math.ceil(size / shrink)) : size,
      maxNodes: malleable ? Math.min(opts.nodes, size * grow) : size,
      malleable,
      estimate: t.estimate,
      // A job on shared nodes runs for its trace time however its tasks are spread.
      work: shared ? fixedWork(t.runtime) : amdahlWork(t1, s),
      resizeCost,
      costModel: cost,
      ...(shared ? { request: { tasks: t.procs, cpusPerTask: 1, exclusive: false } } : {}),
      ...(opts.shared ? { cores: shared ? t.procs : size * opts.coresPerNode } : {}),
    };
    jobs.push(job);
  }
  return { jobs, skipped };
}
