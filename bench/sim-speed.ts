/**
 * bench sim-speed: how fast the simulator replays a trace under `ebb` against `easy` (issue 35).
 * Half the jobs malleable, seed 1, --check on; every run is timed in CPU time (this machine is
 * shared: wall time swings with the other processes), each figure the least of 3 runs after one
 * uncounted one (the JIT's tiers), the load average beside it.
 * - lublin_256 and hpc2n_excerpt, whole: ebb's CPU time against easy's (goal <= 2x);
 * - a 4,096-node machine: lublin's first 1,000 jobs 16 times side by side (`sim/scale.ts` widen,
 *   16,000 jobs), ebb against easy (goal <= 2x);
 * - the same machine with a trace twice as long (the 16,000 jobs twice over, `lengthen`): ebb's
 *   time against its time on the shorter one (goal <= 2.2x: linear in the number of jobs).
 * Events per second of CPU time are printed beside each figure. Quick mode (`--quick`): the first
 * 2,000 jobs of each trace, 250 jobs wide, one counted run.
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { resolveConfig, type PolicyName } from "../src/sched/config.ts";
import { simulate } from "../src/sim/engine.ts";
import { lengthen, widen } from "../src/sim/scale.ts";
import { parseSwf, traceJobs, type TraceJob } from "../src/sim/swf.ts";
import { buildWorkload } from "../src/sim/workload.ts";
import type { Bench, Figure } from "./lib.ts";

function traceOf(file: string): TraceJob[] {
  return traceJobs(parseSwf(readFileSync(new URL(`../../shared/workloads/${file}`, import.meta.url), "utf8"))).jobs;
}

interface Timed {
  cpuMs: number;
  events: number;
}

/** The least CPU time of `runs` replays of the trace under `policy` (after one uncounted one). */
function time(trace: readonly TraceJob[], nodes: number, policy: PolicyName, runs: number): Timed {
  const jobs = buildWorkload(trace, { nodes, coresPerNode: 1, malleable: 0.5, seed: 1 }).jobs;
  const config = resolveConfig({ policy });
  let best = Number.POSITIVE_INFINITY;
  let events = 0;
  for (let i = 0; i <= runs; i++) {
    const c0 = process.cpuUsage();
    const run = simulate(jobs, { nodes, config, seed: 1, check: true });
    const c = process.cpuUsage(c0);
    if (i > 0) best = Math.min(best, (c.user + c.system) / 1000);
    events = run.events;
  }
  return { cpuMs: best, events };
}

const rate = (t: Timed) => `${Math.round(t.events / (t.cpuMs / 1000)).toLocaleString("en-US")} events/s`;

const bench: Bench = {
  name: "sim-speed",
  description: "the simulator's CPU time under ebb against easy: both traces whole, a 4,096-node machine, and a trace twice as long on it",
  async run({ quick }) {
    const runs = quick ? 1 : 3;
    const prefix = quick ? 2000 : undefined;
    const figures: Figure[] = [];
    const load = () => `load ${loadavg()[0]!.toFixed(1)}`;
    for (const [file, nodes] of [
      ["lublin_256.swf", 256],
      ["hpc2n_excerpt.swf", 240],
    ] as const) {
      const all = traceOf(file);
      const trace = prefix ? all.slice(0, prefix) : all;
      const easy = time(trace, nodes, "easy", runs);
      const ebb = time(trace, nodes, "ebb", runs);
      const ratio = ebb.cpuMs / easy.cpuMs;
      figures.push({ name: `${file.replace(".swf", "")}${prefix ? ` (first ${prefix})` : ""}, ${trace.length} jobs: ebb CPU time`, value: ebb.cpuMs, unit: "ms", baseline: { name: "easy", value: easy.cpuMs }, better: "lower", goal: "<= 2x easy", met: ratio <= 2, cpu: `${rate(ebb)} | ${rate(easy)}; ${load()}` });
    }
    const base = traceOf("lublin_256.swf").slice(0, quick ? 250 : 1000);
    const wide = widen(base, 16);
    const easy = time(wide, 4096, "easy", runs);
    const ebb = time(wide, 4096, "ebb", runs);
    figures.push({ name: `4,096 nodes, ${wide.length} jobs (lublin's first ${base.length} x16): ebb CPU time`, value: ebb.cpuMs, unit: "ms", baseline: { name: "easy", value: easy.cpuMs }, better: "lower", goal: "<= 2x easy", met: ebb.cpuMs / easy.cpuMs <= 2, cpu: `${rate(ebb)} | ${rate(easy)}; ${load()}` });
    const long = lengthen(wide, 2);
    const ebbLong = time(long, 4096, "ebb", runs);
    figures.push({ name: `4,096 nodes, ${long.length} jobs (the same twice over): ebb CPU time`, value: ebbLong.cpuMs, unit: "ms", baseline: { name: `ebb, ${wide.length} jobs`, value: ebb.cpuMs }, better: "lower", goal: "<= 2.2x (linear)", met: ebbLong.cpuMs / ebb.cpuMs <= 2.2, cpu: `${rate(ebbLong)} | ${rate(ebb)}; ${load()}` });
    return figures;
  },
};

export default bench;
