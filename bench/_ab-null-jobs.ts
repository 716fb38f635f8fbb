/**
 * Two ebb checkouts on the null-job workload of `bench throughput` (issue 36), in paired rounds:
 * `bun bench/_ab-null-jobs.ts BASE_MAIN [NEW_MAIN] [JOBS] [ROUNDS] [env]` runs a controller and 4
 * agents (processes layout) of each, JOBS one-rank `true` jobs a trial (default 1000), ROUNDS
 * rounds (default 4) whose order alternates (ABBA), after one uncounted warm-up; with "env", each
 * job carries a ~4.6 KB shell-like environment. Each round also spawns `true` JOBS times (the bare
 * spawn baseline). Each trial's cluster runs JOBS jobs cold (its first), then JOBS more warm (its
 * processes' JIT warmed up by the first), each measured apart. Prints, cold and warm, each trial's
 * jobs/s, CPU per job of the controller and of the agents (with the jobs' `true`), the bytes the
 * controller wrote and the transactions it committed (/metrics) per job and the load; then the medians and the median of the rounds' new/base
 * ratios. BASE_MAIN and NEW_MAIN are the src/main.ts of each
 * checkout (NEW_MAIN, or "": this one's); e.g. a base made with `git archive BASE | tar -x -C
 * /tmp/base` and its node_modules linked. Not a benchmark of `npm run bench` (run.ts skips files
 * named _*): it compares code, not this checkout against a baseline.
 */
import { loadavg } from "node:os";
import { shellLikeEnv } from "../test/support/shell-env.ts";
import { bareSpawn, measureTrueJobs } from "./cluster.ts";
import { median } from "./lib.ts";

const [baseMain, newArg, jobsArg, roundsArg, envArg] = process.argv.slice(2);
const newMain = newArg || new URL("../src/main.ts", import.meta.url).pathname;
if (!baseMain) {
  console.error("usage: bun bench/_ab-null-jobs.ts BASE_MAIN [NEW_MAIN] [JOBS] [ROUNDS] [env]");
  process.exit(2);
}
const jobs = Number(jobsArg ?? 1000);
const rounds = Number(roundsArg ?? 4);
const fields = envArg === "env" ? { env: shellLikeEnv() } : {};
const sides = { base: [process.execPath, baseMain], new: [process.execPath, newMain] } as const;
type Side = keyof typeof sides;
const figures = () => ({ agents: [] as number[], controller: [] as number[], kib: [] as number[], rate: [] as number[], commits: [] as number[] });
const phases = ["cold", "warm"] as const;
type Phase = (typeof phases)[number];
const got = { base: { cold: figures(), warm: figures() }, new: { cold: figures(), warm: figures() } };
const bare: number[] = [];
const loads: number[] = [];
const perJob = (cpuSeconds: number | undefined) => ((cpuSeconds ?? 0) / jobs) * 1000;

await measureTrueJobs(4, Math.min(jobs, 100), { layout: "processes", ebb: [...sides.new] });
for (let r = 0; r < rounds; r++) {
  bare.push((await bareSpawn(jobs)).rate);
  for (const side of (r % 2 === 0 ? ["base", "new"] : ["new", "base"]) as Side[]) {
    loads.push(loadavg()[0]!);
    const m = await measureTrueJobs(4, jobs, { layout: "processes", ebb: [...sides[side]], fields, warm: true });
    for (const phase of phases) {
      const b = phase === "cold" ? m : m.warm!;
      const g = got[side][phase];
      g.agents.push(perJob(b.cpu.agents));
      g.controller.push(perJob(b.cpu.controller));
      g.kib.push(b.controllerWritten / jobs / 1024);
      g.rate.push(b.rate);
      g.commits.push(b.commits / jobs);
      console.log(`round ${r} ${side} ${phase}: ${b.rate.toFixed(0)} jobs/s (bare spawn ${bare.at(-1)!.toFixed(0)}/s), controller ${g.controller.at(-1)!.toFixed(2)} ms/job, agents ${g.agents.at(-1)!.toFixed(2)} ms/job, wrote ${g.kib.at(-1)!.toFixed(1)} KiB/job, ${(b.passes / jobs).toFixed(2)} passes/job, ${(b.commits / jobs).toFixed(2)} commits/job, load ${loadavg()[0]!.toFixed(1)}`);
    }
  }
}
for (const phase of phases)
  for (const side of ["base", "new"] as const) {
    const g = got[side][phase];
    console.log(`${side} ${phase}: ${median(g.rate).toFixed(0)} jobs/s = ${(median(g.rate) / median(bare)).toFixed(3)}x bare spawn, controller ${median(g.controller).toFixed(2)} ms/job [${g.controller.map((x) => x.toFixed(2)).join(" ")}], agents ${median(g.agents).toFixed(2)} ms/job [${g.agents.map((x) => x.toFixed(2)).join(" ")}], wrote ${median(g.kib).toFixed(1)} KiB/job, ${median(g.commits).toFixed(2)} commits/job [${g.commits.map((x) => x.toFixed(2)).join(" ")}] (medians)`);
  }
const ratio = (phase: Phase, k: "agents" | "controller" | "kib" | "rate" | "commits") => median(got.new[phase][k].map((x, i) => x / got.base[phase][k][i]!)).toFixed(2);
for (const phase of phases) console.log(`new/base ${phase}, median of the rounds: jobs/s ${ratio(phase, "rate")}, agents' CPU ${ratio(phase, "agents")}, controller's CPU ${ratio(phase, "controller")}, written ${ratio(phase, "kib")}, commits ${ratio(phase, "commits")}`);
console.log(`load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`);
process.exit(0);
