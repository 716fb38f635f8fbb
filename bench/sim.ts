/**
 * bench sim: `ebb sim` on the reference trace (lublin_256.swf, 256 nodes, 10,000 jobs) with 0%,
 * 25%, 50% and 100% malleable jobs, every policy; prints the metrics tables, then figures with
 * each policy's ratio to `easy` on the same workload. Goal at 50% malleable: ebb's mean turnaround
 * at least 40% below easy's and its utilization at least 10 points above.
 */
import { readFileSync } from "node:fs";
import { table } from "../src/util/table.ts";
import { POLICIES, type PolicyName } from "../src/sched/config.ts";
import type { Metrics } from "../src/sim/metrics.ts";
import { runPolicies, type PolicyResult } from "../src/sim/run.ts";
import { parseSwf, traceJobs } from "../src/sim/swf.ts";
import type { Bench, Figure } from "./lib.ts";

const TRACE = new URL("../../shared/workloads/lublin_256.swf", import.meta.url);

function hours(s: number): string {
  return (s / 3600).toFixed(2);
}

function tableFor(fraction: number, results: PolicyResult[]): string {
  const easy = results.find((r) => r.policy === "easy")!.metrics;
  const head = ["policy", "makespan h", "mean wait h", "p95 wait h", "mean TA h", "TA/easy", "mean bsld", "util %", "util-easy", "work util %", "resizes", "sim s"];
  const rows = results.map((r) => {
    const m = r.metrics;
    return [r.policy, hours(m.makespan), hours(m.meanWait), hours(m.p95Wait), hours(m.meanTurnaround), (m.meanTurnaround / easy.meanTurnaround).toFixed(2), m.meanBoundedSlowdown.toFixed(1), (m.utilization * 100).toFixed(1), ((m.utilization - easy.utilization) * 100).toFixed(1), (m.workUtilization * 100).toFixed(1), String(m.resizes), (r.wallMs / 1000).toFixed(1)];
  });
  return `### ${Math.round(fraction * 100)}% malleable\n${table(head, rows)}`;
}

const bench: Bench = {
  name: "sim",
  description: "ebb sim on lublin_256.swf, 0/25/50/100% malleable, every policy, ratios to easy",
  async run({ quick }) {
    const trace = traceJobs(parseSwf(readFileSync(TRACE, "utf8"))).jobs;
    const fractions = quick ? [0.5] : [0, 0.25, 0.5, 1];
    const policies: PolicyName[] = quick ? ["easy", "ebb"] : ["easy", ...POLICIES.filter((p) => p !== "easy")];
    const figures: Figure[] = [];
    // Seed 1 at 50% malleable, easy and ebb: the fraction loop runs it, the five-seed mean reuses it.
    let seed1: { easy: Metrics; ebb: Metrics } | undefined;
    for (const fraction of fractions) {
      const report = runPolicies({
        trace,
        workload: { nodes: 256, coresPerNode: 1, malleable: fraction, seed: 1 },
        policies,
        onProgress: (p, d) => {
          if (d === 0) process.stderr.write(`  ${Math.round(fraction * 100)}% malleable: ${p}\n`);
        },
      });
      process.stdout.write(tableFor(fraction, report.results) + "\n");
      const easy = report.results.find((r) => r.policy === "easy")!;
      if (fraction === 0.5) seed1 = { easy: easy.metrics, ebb: report.results.find((r) => r.policy === "ebb")!.metrics };
      const pct = `${Math.round(fraction * 100)}%`;
      for (const r of report.results) {
        if (r.policy === "easy") continue;
        const goalHere = r.policy === "ebb" && fraction === 0.5;
        const ta = r.metrics.meanTurnaround / easy.metrics.meanTurnaround;
        figures.push({
          name: `${r.policy} @${pct}: mean turnaround`,
          value: r.metrics.meanTurnaround / 3600,
          unit: "h",
          baseline: { name: "easy", value: easy.metrics.meanTurnaround / 3600 },
          better: "lower",
          ...(goalHere ? { goal: "<= 0.60x easy", met: ta <= 0.6 } : {}),
        });
        figures.push({
          name: `${r.policy} @${pct}: utilization`,
          value: r.metrics.utilization * 100,
          unit: "%",
          baseline: { name: "easy", value: easy.metrics.utilization * 100 },
          better: "higher",
          ...(goalHere ? { goal: ">= easy + 10 points", met: r.metrics.utilization - easy.metrics.utilization >= 0.1 } : {}),
        });
      }
      for (const r of report.results) {
        figures.push({ name: `${r.policy} @${pct}: simulator run time, whole trace`, value: r.wallMs / 1000, unit: "s", baseline: { name: "easy", value: easy.wallMs / 1000 }, better: "lower" });
      }
    }
    // One seed is one draw of which jobs are malleable and how well they scale; the ratio moves
    // by several points between draws. The goal's figure over five seeds:
    if (!quick) {
      let easyTa = 0;
      let ebbTa = 0;
      let easyUt = 0;
      let ebbUt = 0;
      const seeds = [1, 2, 3, 4, 5];
      for (const seed of seeds) {
        let pair = seed === 1 ? seed1 : undefined;
        if (!pair) {
          process.stderr.write(`  50% malleable, seed ${seed}: easy, ebb\n`);
          const r = runPolicies({ trace, workload: { nodes: 256, coresPerNode: 1, malleable: 0.5, seed }, policies: ["easy", "ebb"] });
          pair = { easy: r.results[0]!.metrics, ebb: r.results[1]!.metrics };
        }
        easyTa += pair.easy.meanTurnaround / seeds.length;
        ebbTa += pair.ebb.meanTurnaround / seeds.length;
        easyUt += pair.easy.utilization / seeds.length;
        ebbUt += pair.ebb.utilization / seeds.length;
      }
      figures.push({ name: "ebb @50%, mean of seeds 1-5: mean turnaround", value: ebbTa / 3600, unit: "h", baseline: { name: "easy", value: easyTa / 3600 }, better: "lower", goal: "<= 0.60x easy", met: ebbTa / easyTa <= 0.6 });
      figures.push({ name: "ebb @50%, mean of seeds 1-5: utilization", value: ebbUt * 100, unit: "%", baseline: { name: "easy", value: easyUt * 100 }, better: "higher", goal: ">= easy + 10 points", met: ebbUt - easyUt >= 0.1 });
    }
    return figures;
  },
};

export default bench;
