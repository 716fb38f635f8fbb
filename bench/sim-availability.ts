/**
 * bench sim-availability: ebb against easy with node availability on (issue 34). Both shared traces
 * (first 3,000 jobs; `--quick` 1,000), half the jobs malleable, a generated availability per seed
 * (a quarter, then half of the nodes are workstations whose owners are away 8 h and stay 1 h on
 * average, a job keeping a tenth of its pace on an owner's node), seeds 1-3 (`--quick`: 1), every
 * run with `--check`. Per point: ebb's mean turnaround / easy's in the same run (goal <= 1.0, as
 * without availability), the moves made and declined, the owners' node-hours, and --check's
 * violations (goal 0). EBB_SIM_JOBS=N takes the first N jobs.
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { runSeedsOnThreads } from "../src/sim/threads.ts";
import { parseSwf, traceJobs } from "../src/sim/swf.ts";
import { table } from "../src/util/table.ts";
import type { Bench, Figure } from "./lib.ts";

const TRACES = [
  { file: "lublin_256.swf", nodes: 256 },
  { file: "hpc2n_excerpt.swf", nodes: 240 },
];
const WORKSTATIONS = [0.25, 0.5];

const bench: Bench = {
  name: "sim-availability",
  description: "ebb / easy mean turnaround with generated workstation owners beside both shared traces (moves, owners' node-hours, --check)",
  async run({ quick }) {
    const prefix = Number(process.env.EBB_SIM_JOBS) || (quick ? 1000 : 3000);
    const seeds = quick ? [1] : [1, 2, 3];
    const figures: Figure[] = [];
    const rows: string[][] = [];
    for (const t of TRACES) {
      const trace = traceJobs(parseSwf(readFileSync(new URL(`../../shared/workloads/${t.file}`, import.meta.url), "utf8"))).jobs.slice(0, prefix);
      for (const workstations of WORKSTATIONS) {
        process.stderr.write(`  ${t.file} ${workstations * 100}% workstations, seeds ${seeds.join(",")}\n`);
        const gen = { workstations, ownerEvery: 8 * 3600, ownerStay: 3600, ownerSpeed: 0.1 };
        const r = await runSeedsOnThreads({ trace, workload: { nodes: t.nodes, coresPerNode: 1, malleable: 0.5 }, seeds, policies: ["easy", "ebb"], check: true, availability: { gen } }, availableParallelism());
        const [easy, ebb] = r.results as [(typeof r.results)[number], (typeof r.results)[number]];
        const violations = r.results.reduce((n, x) => n + x.perSeed.reduce((k, s) => k + s.run.violations.length, 0), 0);
        const ratio = ebb.metrics.meanTurnaround / easy.metrics.meanTurnaround;
        const at = `${t.file.replace(".swf", "")}, ${prefix} jobs, ${workstations * 100}% workstations`;
        rows.push([at, (easy.metrics.meanTurnaround / 3600).toFixed(2), (ebb.metrics.meanTurnaround / 3600).toFixed(2), ratio.toFixed(3), `${(easy.metrics.moves ?? 0).toFixed(0)} / ${(ebb.metrics.moves ?? 0).toFixed(0)}`, `${(easy.metrics.movesDeclined ?? 0).toFixed(0)} / ${(ebb.metrics.movesDeclined ?? 0).toFixed(0)}`, (ebb.metrics.ownerNodeHours ?? 0).toFixed(0), String(violations)]);
        figures.push({ name: `ebb mean turnaround with owners, ${at}`, value: ebb.metrics.meanTurnaround, unit: "s", baseline: { name: "easy", value: easy.metrics.meanTurnaround }, better: "lower", goal: "<= 1.0x easy", met: ratio <= 1 });
        figures.push({ name: `--check violations (easy + ebb), ${at}`, value: violations, unit: "", better: "lower", goal: "0", met: violations === 0 });
      }
    }
    process.stderr.write(table(["POINT", "EASY TA (h)", "EBB TA (h)", "EBB/EASY", "MOVES easy/ebb", "DECLINED easy/ebb", "OWNER NODE-H", "VIOLATIONS"], rows));
    return figures;
  },
};

export default bench;
