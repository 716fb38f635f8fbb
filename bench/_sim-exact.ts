/**
 * The simulator's exactness check (issue 35): a speed change of the replay or of a policy's pass
 * must leave every decision as it was. `bun bench/_sim-exact.ts [OUT.json]` replays a fixed set of
 * traces, machines, seeds and options under every policy, with `--check`, and prints one hash per
 * replay (of every job record, the run's counts but the passes, its violations, and the metrics)
 * and one of them all. With a file that exists it compares against it and exits 1 naming each replay that changed;
 * with one that does not, it writes it (run it on the tree before the change first). Not a
 * benchmark (run.ts skips files named _*).
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { resolveConfig, type PolicyName } from "../src/sched/config.ts";
import { POLICY_TABLE } from "../src/sched/policies/index.ts";
import { resolvePriority } from "../src/sched/priority.ts";
import { generateAvailability, GEN_DEFAULTS } from "../src/sim/availability.ts";
import { simulate, type SimOptions } from "../src/sim/engine.ts";
import { metrics } from "../src/sim/metrics.ts";
import { lengthen, widen } from "../src/sim/scale.ts";
import { parseSwf, traceJobs, type TraceJob } from "../src/sim/swf.ts";
import { buildWorkload, type WorkloadOptions } from "../src/sim/workload.ts";

const traceOf = (file: string): TraceJob[] => traceJobs(parseSwf(readFileSync(new URL(`../../shared/workloads/${file}`, import.meta.url), "utf8"))).jobs;

interface Case {
  name: string;
  trace: readonly TraceJob[];
  nodes: number;
  policies: readonly PolicyName[];
  seeds: readonly number[];
  workload?: Partial<WorkloadOptions>;
  sim?: (seed: number, trace: readonly TraceJob[]) => Partial<SimOptions>;
}

const all = Object.keys(POLICY_TABLE) as PolicyName[];
const fast: PolicyName[] = ["fcfs", "easy", "ebb"];
const lublin = traceOf("lublin_256.swf");
const hpc2n = traceOf("hpc2n_excerpt.swf");
const wide = widen(lublin.slice(0, 250), 16);
const lastSubmit = (t: readonly TraceJob[]) => t.reduce((m, j) => Math.max(m, j.submit), 0);

const cases: Case[] = [
  { name: "lublin_256 first 1500", trace: lublin.slice(0, 1500), nodes: 256, policies: all, seeds: [1, 2] },
  { name: "hpc2n first 1500", trace: hpc2n.slice(0, 1500), nodes: 240, policies: all, seeds: [1, 2] },
  { name: "lublin_256 first 1500, load x2, 100% malleable", trace: lublin.slice(0, 1500), nodes: 256, policies: all, seeds: [3], workload: { arrivalScale: 0.5, malleable: 1 } },
  { name: "4,096 nodes (250 x16)", trace: wide, nodes: 4096, policies: fast, seeds: [1, 2] },
  { name: "4,096 nodes, twice over", trace: lengthen(wide, 2), nodes: 4096, policies: ["ebb"], seeds: [1] },
  { name: "hpc2n first 1000, fairshare", trace: hpc2n.slice(0, 1000), nodes: 240, policies: fast, seeds: [1], sim: () => ({ priority: resolvePriority() }) },
  {
    name: "lublin_256 first 1000, availability",
    trace: lublin.slice(0, 1000),
    nodes: 256,
    policies: fast,
    seeds: [1],
    sim: (seed, t) => ({ availability: generateAvailability({ nodes: 256, seed, ...GEN_DEFAULTS, until: lastSubmit(t) }) }),
  },
  { name: "hpc2n first 800, 4 cores a node", trace: hpc2n.slice(0, 800), nodes: 60, policies: fast, seeds: [1], workload: { coresPerNode: 4, shared: true }, sim: () => ({ coresPerNode: 4 }) },
];

const hashOf = (x: unknown) => createHash("sha256").update(JSON.stringify(x)).digest("hex").slice(0, 16);

const out: Record<string, string> = {};
const t0 = performance.now();
for (const c of cases) {
  for (const seed of c.seeds) {
    const jobs = buildWorkload(c.trace, { nodes: c.nodes, coresPerNode: 1, malleable: 0.5, seed, ...c.workload }).jobs;
    for (const policy of c.policies) {
      const extra = c.sim?.(seed, c.trace) ?? {};
      const run = simulate(jobs, { nodes: c.nodes, config: resolveConfig({ policy }), seed, check: true, ...extra });
      const key = `${c.name} | seed ${seed} | ${policy}`;
      // The pass counts are left out: a pass skipped because it provably plans nothing changes them and nothing else.
      out[key] = hashOf({ run: { ...run, passes: undefined, quietPasses: undefined }, metrics: metrics(run) });
      console.log(`${out[key]}  ${key}  (${run.passes} passes, ${run.quietPasses} skipped, ${run.events} events)`);
    }
  }
}
const allHash = hashOf(out);
console.log(`ALL ${allHash}  (${Object.keys(out).length} replays, ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
const file = process.argv[2];
if (file && existsSync(file)) {
  const before = JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
  const changed = Object.keys({ ...before, ...out }).filter((k) => before[k] !== out[k]);
  for (const k of changed) console.log(`CHANGED ${k}: ${before[k] ?? "-"} -> ${out[k] ?? "-"}`);
  console.log(changed.length === 0 ? `same as ${file}` : `${changed.length} replay(s) differ from ${file}`);
  if (changed.length > 0) process.exit(1);
} else if (file) writeFileSync(file, JSON.stringify(out, null, 1));
