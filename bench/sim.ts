/**
 * bench sim: the issue's grid. On lublin_256.swf (256 nodes; arrival scales 1, 1.5, 3) and
 * hpc2n_excerpt.swf (240 nodes; arrival scales 1, 0.7, 0.5), malleable fractions 0.25, 0.5, 1.0,
 * seeds 1-5 (means), every policy with `--check`; each point's ratios to `easy` measured in the same
 * run. Prints the grid and the worst ratio of each kind:
 * - ebb mean turnaround / easy <= 1.0 at every point (<= 0.5 on Lublin, scale 1, 50%);
 * - ebb mean turnaround / best seed policy (reshape, apm-equi, apm-maxs, drms-rs) <= 1.0 (issue 35);
 * - ebb mean bounded slowdown / easy <= 1.0, and / the best seed policy's (the lowest) <= 1.0;
 * - no --check violation for ebb.
 * And a light machine of small jobs (`lublin_256 <=8`): lublin_256.swf's jobs of at most 8 processors
 * (6,139 jobs), 256 nodes, arrival scale 0.0823 (~45 % load), the same fractions and seeds, its rows
 * and ratios counted in the worst-ratio lines like the grid's. It is the arrival reserve's reason
 * (policies/reserve.ts): there EASY starts nearly every job at once, so a loan an arrival must wait
 * for puts ebb's bounded slowdown above EASY's; the grid's two traces are too heavily loaded to show
 * it, and a screen on them alone dropped the reserve once (main's ebb bsld/easy there: 1.00001 and
 * 0.99982 on seeds 1-2 at 50 %; without the reserve 1.0035 and 1.0024).
 * Quick mode (`--quick`): the first 1,500 jobs of each trace, seed 1, fraction 0.5 only.
 * EBB_SIM_JOBS=N and EBB_SIM_SEEDS=K shrink the full grid (prefix, seeds 1..K) when time is short.
 * Then bench fairshare's comparison (fairshare.ts): one heavy user with 30 % of the work, the other
 * users' mean wait under fair share / submit order (<= 0.5), --check under fair share, ebb/easy.
 */
import { readFileSync } from "node:fs";
import { table } from "../src/util/table.ts";
import type { PolicyName } from "../src/sched/config.ts";
import { availableParallelism } from "node:os";
import { ReplayThreads } from "../src/sim/threads.ts";
import { parseSwf, traceJobs } from "../src/sim/swf.ts";
import { fairShareFigures, fairShareRuns } from "./fairshare.ts";
import type { Bench, Figure } from "./lib.ts";

const SEEDS: PolicyName[] = ["reshape", "apm-equi", "apm-maxs", "drms-rs"];
const POLICIES: PolicyName[] = ["easy", "ebb", ...SEEDS];
const GRID: { file: string; nodes: number; scales: number[]; maxProcs?: number }[] = [
  { file: "lublin_256.swf", nodes: 256, scales: [1, 1.5, 3] },
  { file: "hpc2n_excerpt.swf", nodes: 240, scales: [1, 0.7, 0.5] },
  // The light machine of small jobs (see the file's comment).
  { file: "lublin_256.swf", nodes: 256, scales: [0.0823], maxProcs: 8 },
];

interface Point {
  trace: string;
  scale: number;
  fraction: number;
  taEasy: number;
  taBest: number;
  bsldEasy: number;
  bsldBest: number;
  bestBsld: string;
  violations: number;
  best: string;
}

const bench: Bench = {
  name: "sim",
  description: "ebb against easy and the seed policies over the issue's grid (2 traces x 3 loads x 3 malleable fractions, seeds 1-5) and a light machine of small jobs",
  async run({ quick }) {
    const envJobs = Number(process.env.EBB_SIM_JOBS) || undefined;
    const envSeeds = Number(process.env.EBB_SIM_SEEDS) || undefined;
    const prefix = quick ? 1500 : envJobs;
    const seeds = quick ? [1] : Array.from({ length: envSeeds ?? 5 }, (_, i) => i + 1);
    const fractions = quick ? [0.5] : [0.25, 0.5, 1];
    const points: Point[] = [];
    const rows: string[][] = [];
    // One set of threads for the whole grid: each keeps its compiled code from point to point.
    const pool = new ReplayThreads(availableParallelism());
    for (const g of GRID) {
      const parsed = traceJobs(parseSwf(readFileSync(new URL(`../../shared/workloads/${g.file}`, import.meta.url), "utf8"))).jobs;
      const all = g.maxProcs === undefined ? parsed : parsed.filter((j) => j.procs <= g.maxProcs!);
      const name = g.file.replace(".swf", "") + (g.maxProcs === undefined ? "" : ` <=${g.maxProcs}`);
      const trace = prefix ? all.slice(0, prefix) : all;
      for (const scale of quick ? [g.scales[0]!] : g.scales) {
        for (const fraction of fractions) {
          process.stderr.write(`  ${name} x${scale} ${fraction * 100}% malleable, seeds ${seeds.join(",")}\n`);
          const r = await pool.runSeeds({ trace, workload: { nodes: g.nodes, coresPerNode: 1, malleable: fraction, arrivalScale: scale }, seeds, policies: POLICIES, check: true });
          const by = new Map(r.results.map((x) => [x.policy, x]));
          const easy = by.get("easy")!.metrics;
          const ebb = by.get("ebb")!;
          const best = SEEDS.map((p) => by.get(p)!).reduce((a, b) => (b.metrics.meanTurnaround < a.metrics.meanTurnaround ? b : a));
          const bestB = SEEDS.map((p) => by.get(p)!).reduce((a, b) => (b.metrics.meanBoundedSlowdown < a.metrics.meanBoundedSlowdown ? b : a));
          const violations = ebb.perSeed.reduce((n, s) => n + s.run.violations.length, 0);
          const p: Point = { trace: name, scale, fraction, taEasy: ebb.metrics.meanTurnaround / easy.meanTurnaround, taBest: ebb.metrics.meanTurnaround / best.metrics.meanTurnaround, bsldEasy: ebb.metrics.meanBoundedSlowdown / easy.meanBoundedSlowdown, bsldBest: ebb.metrics.meanBoundedSlowdown / bestB.metrics.meanBoundedSlowdown, bestBsld: bestB.policy, violations, best: best.policy };
          points.push(p);
          rows.push([
            name,
            String(scale),
            `${fraction * 100}%`,
            ...POLICIES.map((q) => (by.get(q)!.metrics.meanTurnaround / easy.meanTurnaround).toFixed(2)),
            `${p.taBest.toFixed(3)} (${p.best})`,
            p.bsldEasy.toFixed(3),
            `${p.bsldBest.toFixed(2)} (${p.bestBsld})`,
            `${(easy.utilization * 100).toFixed(1)} / ${(ebb.metrics.utilization * 100).toFixed(1)}`,
            String(violations),
          ]);
        }
      }
    }
    pool.close();
    process.stdout.write(`mean turnaround / easy (means over seeds ${seeds.join(",")}${prefix ? `, first ${prefix} jobs` : ""})\n`);
    process.stdout.write(table(["trace", "scale", "malleable", ...POLICIES.map((q) => `${q} TA`), "ebb TA/best seed", "ebb bsld/easy", "ebb bsld/best seed", "util easy/ebb %", "ebb check"], rows) + "\n");
    const worst = (f: (p: Point) => number) => points.reduce((a, b) => (f(b) > f(a) ? b : a));
    const w1 = worst((p) => p.taEasy);
    const w2 = worst((p) => p.taBest);
    const w3 = worst((p) => p.bsldEasy);
    const w4 = worst((p) => p.bsldBest);
    const at = (p: Point) => `${p.trace} x${p.scale} ${p.fraction * 100}%`;
    const figures: Figure[] = [
      { name: `worst ebb mean turnaround / easy (${at(w1)})`, value: w1.taEasy, unit: "x", better: "lower", goal: "<= 1.0", met: w1.taEasy <= 1 },
      { name: `worst ebb mean turnaround / best seed policy (${at(w2)}, ${w2.best})`, value: w2.taBest, unit: "x", better: "lower", goal: "<= 1.0", met: w2.taBest <= 1 },
      { name: `worst ebb mean bounded slowdown / easy (${at(w3)})`, value: w3.bsldEasy, unit: "x", better: "lower", goal: "<= 1.0", met: w3.bsldEasy <= 1 },
      { name: `worst ebb mean bounded slowdown / best seed policy's (${at(w4)}, ${w4.bestBsld})`, value: w4.bsldBest, unit: "x", better: "lower", goal: "<= 1.0", met: w4.bsldBest <= 1 },
      { name: "ebb --check violations, whole grid", value: points.reduce((n, p) => n + p.violations, 0), unit: "", better: "lower", goal: "0", met: points.every((p) => p.violations === 0) },
    ];
    const l = points.find((p) => p.trace === "lublin_256" && p.scale === 1 && p.fraction === 0.5);
    // The issue sets this goal on the whole trace; on a prefix the figure is shown but not judged.
    if (l) figures.push({ name: `ebb mean turnaround / easy, lublin x1 50%${prefix ? ` (first ${prefix} jobs)` : ""}`, value: l.taEasy, unit: "x", better: "lower", goal: prefix ? "<= 0.5 on the whole trace" : "<= 0.5", met: prefix ? undefined : l.taEasy <= 0.5 });
    figures.push(...fairShareFigures(fairShareRuns(prefix), prefix ? `, first ${prefix} jobs` : ""));
    return figures;
  },
};

export default bench;
