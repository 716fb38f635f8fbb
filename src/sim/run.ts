/**
 * One `ebb sim` call: a trace, a cluster, a malleable fraction, several policies; the same
 * workload (same seed) for every policy. Used by the CLI and by bench/sim.ts.
 */
import { resolveConfig, type ErsConfig, type PolicyName } from "../sched/config.ts";
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
  onProgress?: (policy: PolicyName, done: number) => void;
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

export function runPolicies(req: SimRequest): SimReport {
  const built = buildWorkload(req.trace, req.workload);
  const results: PolicyResult[] = [];
  for (const policy of req.policies) {
    const config = resolveConfig({ ...req.config, policy });
    const t0 = performance.now();
    const run = simulate(built.jobs, { nodes: req.workload.nodes, config, seed: req.workload.seed, check: req.check, onProgress: req.onProgress && ((d) => req.onProgress!(policy, d)) });
    results.push({ policy, metrics: metrics(run), run, wallMs: performance.now() - t0 });
  }
  return { results, skipped: built.skipped, malleableJobs: built.jobs.filter((j) => j.malleable).length };
}
