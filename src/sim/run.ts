/**
 * One `ebb sim` call: a trace, a cluster, a malleable fraction, several policies; the same
 * workload (same seed) for every policy. Used by the CLI and by bench/sim.ts.
 */
import { resolveConfig, type ErsConfig, type PolicyName } from "../sched/config.ts";
import type { PriorityConfig } from "../sched/priority.ts";
import { generateAvailability, type AvailabilityGen, type HostChange } from "./availability.ts";
import { simulate, type SimRun } from "./engine.ts";
import { metrics, type Metrics } from "./metrics.ts";
import type { TraceJob } from "./swf.ts";
import { buildWorkload, type WorkloadOptions } from "./workload.ts";

export interface SimRequest {
  trace: readonly TraceJob[];
  workload: WorkloadOptions;
  policies: readonly PolicyName[];
  /** Scheduler settings shared by all policies (the policy name is set per run). */
  config?: Partial<ErsConfig>;
  /** Hold every policy to EASY's promise (`SimRun.violations`). */
  check?: boolean;
  /** Multifactor priority (fair share by the trace's users); absent: submit order. */
  priority?: PriorityConfig;
  /** Node availability: the changes of a file, or a generator's settings (drawn with the workload's seed, owners back until the last submit). */
  availability?: { changes: readonly HostChange[] } | { gen: Omit<AvailabilityGen, "nodes" | "seed" | "until"> };
  /** Now and then: the fraction of the jobs done and the events handled so far in this policy's run (`label`: the policy). */
  onProgress?: (label: string, done: number, events: number) => void;
}

export interface PolicyResult {
  policy: PolicyName;
  metrics: Metrics;
  run: SimRun;
  /** Wall-clock milliseconds the simulation took. */
  wallMs: number;
}

export interface SimReport {
  results: PolicyResult[];
  /** Trace jobs left out (too large for the cluster). */
  skipped: { line: number; message: string }[];
  malleableJobs: number;
}

/** Metrics of several seeds, each field the mean over the seeds. */
export interface SeedsResult {
  policy: PolicyName;
  seeds: number[];
  /** Means over the seeds. */
  metrics: Metrics;
  /** Each seed's run, in `seeds` order. */
  perSeed: PolicyResult[];
  wallMs: number;
}

/** Several seeds of one request: the workload is drawn anew for each seed. */
export type SeedsRequest = Omit<SimRequest, "workload"> & { workload: Omit<WorkloadOptions, "seed">; seeds: readonly number[] };

export interface SeedsReport {
  results: SeedsResult[];
  skipped: SimReport["skipped"];
  /** Malleable jobs, the mean over the seeds. */
  malleableJobs: number;
}

/** `runPolicies` once per seed (the workload drawn anew for each), then the mean of every metric. */
export function runSeeds(req: SeedsRequest): SeedsReport {
  if (req.seeds.length === 0) throw new RangeError("seeds: at least one");
  return gatherSeeds(req, req.seeds.map((seed) => runPolicies({ ...req, workload: { ...req.workload, seed } })));
}

/** Each seed's report (in `req.seeds` order, results in `req.policies` order) folded into the means per policy. */
export function gatherSeeds(req: Pick<SeedsRequest, "seeds" | "policies">, per: readonly SimReport[]): SeedsReport {
  const results = req.policies.map((policy, i) => {
    const runs = per.map((r) => r.results[i]!);
    return { policy, seeds: [...req.seeds], metrics: meanMetrics(runs.map((r) => r.metrics)), perSeed: runs, wallMs: runs.reduce((a, r) => a + r.wallMs, 0) };
  });
  return { results, skipped: per[0]!.skipped, malleableJobs: per.reduce((a, r) => a + r.malleableJobs, 0) / per.length };
}

export function meanMetrics(ms: readonly Metrics[]): Metrics {
  const out = { ...ms[0]! };
  for (const k of Object.keys(out) as (keyof Metrics)[]) out[k] = ms.reduce((a, m) => a + (m[k] ?? 0), 0) / ms.length;
  return out;
}

export function runPolicies(req: SimRequest): SimReport {
  const built = buildWorkload(req.trace, req.workload);
  const av = req.availability;
  const until = built.jobs.reduce((t, j) => Math.max(t, j.submit), 0);
  const availability = !av ? undefined : "changes" in av ? av.changes : generateAvailability({ ...av.gen, nodes: req.workload.nodes, seed: req.workload.seed, until });
  const results: PolicyResult[] = [];
  for (const policy of req.policies) {
    const config = resolveConfig({ ...req.config, policy });
    const t0 = performance.now();
    const run = simulate(built.jobs, { nodes: req.workload.nodes, coresPerNode: req.workload.shared ? req.workload.coresPerNode : undefined, config, seed: req.workload.seed, check: req.check, priority: req.priority, availability, onProgress: req.onProgress && ((d, e) => req.onProgress!(policy, d, e)) });
    results.push({ policy, metrics: metrics(run), run, wallMs: performance.now() - t0 });
  }
  return { results, skipped: built.skipped, malleableJobs: built.jobs.filter((j) => j.malleable).length };
}
