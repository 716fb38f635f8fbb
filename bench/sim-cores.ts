/**
 * bench sim-cores: the issue's goals for shared nodes, on lublin_256.swf (256 processors) and
 * hpc2n_excerpt.swf (240) replayed at core granularity on nodes of 8 and 32 cores (as many nodes as
 * hold the trace's processors), every run with `--check`, every ratio from runs of this one call:
 * - mean wait, EASY with shared nodes / EASY with whole nodes on the same machine (all jobs rigid):
 *   <= 0.5 where the whole-node mean wait exceeds 10 minutes, never above 1 elsewhere;
 * - EASY's utilization with shared nodes against a perfectly packed core pool (EASY on one pool of
 *   N x K one-core nodes: the bound no node layout beats): within 2 points;
 * - ebb's mean turnaround / EASY's with shared nodes, half the jobs malleable (whole nodes, ceil(P/K)):
 *   <= 1.0 at every point;
 * - no --check violation: no first-in-line job of easy or ebb starts after its reservation, and no
 *   node is ever over-allocated.
 * Quick mode (`--quick`): the first 1,500 jobs of each trace. EBB_SIM_JOBS=N takes the first N.
 */
import { readFileSync } from "node:fs";
import type { PolicyName } from "../src/sched/config.ts";
import { runPolicies } from "../src/sim/run.ts";
import { parseSwf, traceJobs } from "../src/sim/swf.ts";
import type { WorkloadOptions } from "../src/sim/workload.ts";
import { table } from "../src/util/table.ts";
import type { Bench, Figure } from "./lib.ts";

const TRACES = [
  { file: "lublin_256.swf", procs: 256 },
  { file: "hpc2n_excerpt.swf", procs: 240 },
];
const CORES = [8, 32];

interface Point {
  at: string;
  wholeWait: number;
  sharedWait: number;
  packedWait: number;
  waitRatio: number;
  waitGoal: number;
  util: number;
  packedUtil: number;
  taRatio: number;
  violations: number;
  overAllocated: number;
}

const bench: Bench = {
  name: "sim-cores",
  description: "shared nodes (--cores-per-node 8, 32) on lublin_256 and hpc2n_excerpt: mean wait against whole nodes, utilization against a packed core pool, ebb against easy, --check",
  async run({ quick }) {
    const prefix = quick ? 1500 : Number(process.env.EBB_SIM_JOBS) || undefined;
    const points: Point[] = [];
    for (const t of TRACES) {
      const all = traceJobs(parseSwf(readFileSync(new URL(`../../shared/workloads/${t.file}`, import.meta.url), "utf8"))).jobs;
      const trace = prefix ? all.slice(0, prefix) : all;
      for (const k of CORES) {
        const nodes = Math.ceil(t.procs / k);
        const at = `${t.file.replace(".swf", "")} ${k} cores x ${nodes}`;
        const run = (workload: Omit<WorkloadOptions, "seed">, policies: PolicyName[]) => runPolicies({ trace, workload: { ...workload, seed: 1 }, policies, check: true }).results;
        process.stderr.write(`  ${at}: whole nodes, shared, packed pool, then ebb and easy with half the jobs malleable\n`);
        const [whole] = run({ nodes, coresPerNode: k, malleable: 0 }, ["easy"]);
        const [shared] = run({ nodes, coresPerNode: k, shared: true, malleable: 0 }, ["easy"]);
        const [packed] = run({ nodes: nodes * k, coresPerNode: 1, malleable: 0 }, ["easy"]);
        const [easy, ebb] = run({ nodes, coresPerNode: k, shared: true, malleable: 0.5 }, ["easy", "ebb"]);
        const wholeWait = whole!.metrics.meanWait;
        points.push({
          at,
          wholeWait,
          sharedWait: shared!.metrics.meanWait,
          packedWait: packed!.metrics.meanWait,
          waitRatio: wholeWait > 0 ? shared!.metrics.meanWait / wholeWait : shared!.metrics.meanWait > 0 ? Number.POSITIVE_INFINITY : 1,
          waitGoal: wholeWait > 600 ? 0.5 : 1,
          util: shared!.metrics.utilization,
          packedUtil: packed!.metrics.utilization,
          taRatio: ebb!.metrics.meanTurnaround / easy!.metrics.meanTurnaround,
          violations: whole!.run.violations.length + shared!.run.violations.length + packed!.run.violations.length + easy!.run.violations.length + ebb!.run.violations.length,
          overAllocated: [whole, shared, packed, easy, ebb].reduce((n, r) => n + r!.run.overAllocated.length, 0),
        });
      }
    }
    const h = (s: number) => `${(s / 3600).toFixed(2)} h`;
    process.stdout.write(`shared nodes (${prefix ? `first ${prefix} jobs` : "whole traces"}, seed 1)\n`);
    process.stdout.write(
      table(
        ["trace, machine", "easy wait whole", "easy wait shared", "shared/whole", "goal", "packed pool wait", "easy util shared", "packed pool", "ebb TA / easy (50% malleable)", "violations", "over-allocated"],
        points.map((p) => [p.at, h(p.wholeWait), h(p.sharedWait), p.waitRatio.toFixed(3), `<= ${p.waitGoal}`, h(p.packedWait), `${(p.util * 100).toFixed(1)}%`, `${(p.packedUtil * 100).toFixed(1)}%`, p.taRatio.toFixed(3), String(p.violations), String(p.overAllocated)]),
      ) + "\n",
    );
    const worst = (f: (p: Point) => number) => points.reduce((a, b) => (f(b) > f(a) ? b : a));
    const w1 = worst((p) => p.waitRatio / p.waitGoal);
    const w2 = worst((p) => Math.abs(p.packedUtil - p.util));
    const w3 = worst((p) => p.taRatio);
    return [
      { name: `worst mean wait, shared / whole nodes, EASY (${w1.at}; whole ${h(w1.wholeWait)})`, value: w1.waitRatio, unit: "x", better: "lower", goal: `<= ${w1.waitGoal}`, met: points.every((p) => p.waitRatio <= p.waitGoal) },
      { name: `mean wait there: EASY on shared nodes against the packed core pool (the bound of any node layout)`, value: w1.sharedWait / 3600, unit: "h", baseline: { name: "EASY on one pool of N x K cores", value: w1.packedWait / 3600 }, better: "lower" },
      { name: `worst EASY utilization, shared nodes, against a packed core pool (${w2.at})`, value: w2.util * 100, unit: "%", baseline: { name: "EASY on one pool of N x K cores", value: w2.packedUtil * 100 }, better: "higher", goal: "within 2 points", met: points.every((p) => Math.abs(p.packedUtil - p.util) <= 0.02) },
      { name: `worst ebb mean turnaround / easy, shared nodes, 50% malleable (${w3.at})`, value: w3.taRatio, unit: "x", better: "lower", goal: "<= 1.0", met: points.every((p) => p.taRatio <= 1) },
      { name: "--check violations and over-allocations, every run", value: points.reduce((n, p) => n + p.violations + p.overAllocated, 0), unit: "", better: "lower", goal: "0", met: points.every((p) => p.violations + p.overAllocated === 0) },
    ] satisfies Figure[];
  },
};

export default bench;
