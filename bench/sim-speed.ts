/**
 * bench sim-speed: how fast the simulator replays a trace under `ebb` against `easy` (issue 35).
 * Half the jobs malleable, seed 1, --check on; every run is timed in CPU time (this machine is
 * shared: wall time swings with the other processes). The two sides of a figure run in paired
 * rounds, alternating which goes first (ABBA), after one uncounted run of each (the JIT's tiers):
 * the same replay repeated in one process varied 5.0-8.2 s of CPU here (JIT and collector threads
 * are in it), so a side's figure is its median and the ratio is the median of the rounds' own
 * ratios, with their range.
 * - lublin_256 and hpc2n_excerpt, whole: ebb's CPU time against easy's (goal <= 2x);
 * - a 4,096-node machine: lublin's first 1,000 jobs 16 times side by side (`sim/scale.ts` widen,
 *   16,000 jobs), ebb against easy (goal <= 2x);
 * - the same machine with a trace twice as long (the 16,000 jobs twice over, `lengthen`): ebb's
 *   time against its time on the shorter one (goal <= 2.2x: linear in the number of jobs).
 * Events per second of CPU time are printed beside each figure. Rounds: 3 (1 with `--quick`, on
 * the first 2,000 jobs of each trace, 250 jobs wide).
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { resolveConfig, type PolicyName } from "../src/sched/config.ts";
import { simulate } from "../src/sim/engine.ts";
import { lengthen, widen } from "../src/sim/scale.ts";
import { parseSwf, traceJobs, type TraceJob } from "../src/sim/swf.ts";
import { buildWorkload } from "../src/sim/workload.ts";
import { median, type Bench, type Figure } from "./lib.ts";

function traceOf(file: string): TraceJob[] {
  return traceJobs(parseSwf(readFileSync(new URL(`../../shared/workloads/${file}`, import.meta.url), "utf8"))).jobs;
}

/** One side of a pair: a trace on a machine under a policy. */
interface Side {
  trace: readonly TraceJob[];
  nodes: number;
  policy: PolicyName;
}

interface Timed {
  cpuMs: number;
  events: number;
}

/** One replay of `side`, timed. */
function once(side: Side, jobs: ReturnType<typeof buildWorkload>["jobs"]): Timed {
  const c0 = process.cpuUsage();
  const run = simulate(jobs, { nodes: side.nodes, config: resolveConfig({ policy: side.policy }), seed: 1, check: true });
  const c = process.cpuUsage(c0);
  return { cpuMs: (c.user + c.system) / 1000, events: run.events };
}

/** `a` against `b` in `rounds` paired rounds (ABBA), after one uncounted run of each: each side's median, and the median and range of a/b per round. */
function paired(a: Side, b: Side, rounds: number): { a: Timed; b: Timed; ratio: number; lo: number; hi: number } {
  const jobsOf = (s: Side) => buildWorkload(s.trace, { nodes: s.nodes, coresPerNode: 1, malleable: 0.5, seed: 1 }).jobs;
  const ja = jobsOf(a);
  const jb = jobsOf(b);
  let ea = once(a, ja);
  let eb = once(b, jb);
  const ta: number[] = [];
  const tb: number[] = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      ea = once(a, ja);
      eb = once(b, jb);
    } else {
      eb = once(b, jb);
      ea = once(a, ja);
    }
    ta.push(ea.cpuMs);
    tb.push(eb.cpuMs);
  }
  const ratios = ta.map((x, i) => x / tb[i]!);
  return { a: { cpuMs: median(ta), events: ea.events }, b: { cpuMs: median(tb), events: eb.events }, ratio: median(ratios), lo: Math.min(...ratios), hi: Math.max(...ratios) };
}

const rate = (t: Timed) => `${Math.round(t.events / (t.cpuMs / 1000)).toLocaleString("en-US")} events/s`;
const rounds = (p: { ratio: number; lo: number; hi: number }, n: number) => `ratio per round: median ${p.ratio.toFixed(2)}x of ${n}${n > 1 ? ` (${p.lo.toFixed(2)}-${p.hi.toFixed(2)})` : ""}`;

const bench: Bench = {
  name: "sim-speed",
  description: "the simulator's CPU time under ebb against easy: both traces whole, a 4,096-node machine, and a trace twice as long on it",
  async run({ quick }) {
    const n = quick ? 1 : 3;
    const prefix = quick ? 2000 : undefined;
    const figures: Figure[] = [];
    const load = () => `load ${loadavg()[0]!.toFixed(1)}`;
    for (const [file, nodes] of [
      ["lublin_256.swf", 256],
      ["hpc2n_excerpt.swf", 240],
    ] as const) {
      const all = traceOf(file);
      const trace = prefix ? all.slice(0, prefix) : all;
      const p = paired({ trace, nodes, policy: "ebb" }, { trace, nodes, policy: "easy" }, n);
      figures.push({ name: `${file.replace(".swf", "")}${prefix ? ` (first ${prefix})` : ""}, ${trace.length} jobs: ebb CPU time, median of ${n}`, value: p.a.cpuMs, unit: "ms", baseline: { name: "easy", value: p.b.cpuMs }, better: "lower", goal: "<= 2x easy", met: p.ratio <= 2, cpu: `${rate(p.a)} | ${rate(p.b)}; ${rounds(p, n)}; ${load()}` });
    }
    const base = traceOf("lublin_256.swf").slice(0, quick ? 250 : 1000);
    const wide = widen(base, 16);
    const w = paired({ trace: wide, nodes: 4096, policy: "ebb" }, { trace: wide, nodes: 4096, policy: "easy" }, n);
    figures.push({ name: `4,096 nodes, ${wide.length} jobs (lublin's first ${base.length} x16): ebb CPU time, median of ${n}`, value: w.a.cpuMs, unit: "ms", baseline: { name: "easy", value: w.b.cpuMs }, better: "lower", goal: "<= 2x easy", met: w.ratio <= 2, cpu: `${rate(w.a)} | ${rate(w.b)}; ${rounds(w, n)}; ${load()}` });
    const long = lengthen(wide, 2);
    const l = paired({ trace: long, nodes: 4096, policy: "ebb" }, { trace: wide, nodes: 4096, policy: "ebb" }, n);
    figures.push({ name: `4,096 nodes, ${long.length} jobs (the same twice over): ebb CPU time, median of ${n}`, value: l.a.cpuMs, unit: "ms", baseline: { name: `ebb, ${wide.length} jobs`, value: l.b.cpuMs }, better: "lower", goal: "<= 2.2x (linear)", met: l.ratio <= 2.2, cpu: `${rate(l.a)} | ${rate(l.b)}; ${rounds(l, n)}; ${load()}` });
    return figures;
  },
};

export default bench;
