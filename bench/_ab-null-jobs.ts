/**
 * Two ebb checkouts on the null-job workload of `bench throughput` (issue 36), in paired rounds:
 * `bun bench/_ab-null-jobs.ts BASE_MAIN [NEW_MAIN] [JOBS] [ROUNDS] [env]` runs a controller and 4
 * agents (processes layout) of each, JOBS one-rank `true` jobs a trial (default 1000), ROUNDS
 * rounds (default 4) whose order alternates (ABBA), after one uncounted warm-up; with "env", each
 * job carries a ~4.6 KB shell-like environment. Each round also spawns `true` JOBS times (the bare
 * spawn baseline). Prints each trial's jobs/s, CPU per job of the controller and of the agents
 * (with the jobs' `true`), the bytes the controller wrote per job and the load; then the medians
 * and the median of the rounds' new/base ratios. BASE_MAIN and NEW_MAIN are the src/main.ts of each
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
const figures = () => ({ agents: [] as number[], controller: [] as number[], kib: [] as number[], rate: [] as number[] });
const got = { base: figures(), new: figures() };
const bare: number[] = [];
const loads: number[] = [];
const perJob = (cpuSeconds: number | undefined) => ((cpuSeconds ?? 0) / jobs) * 1000;

await measureTrueJobs(4, Math.min(jobs, 100), { layout: "processes", ebb: [...sides.new] });
for (let r = 0; r < rounds; r++) {
  bare.push((await bareSpawn(jobs)).rate);
  for (const side of (r % 2 === 0 ? ["base", "new"] : ["new", "base"]) as Side[]) {
    loads.push(loadavg()[0]!);
    const m = await measureTrueJobs(4, jobs, { layout: "processes", ebb: [...sides[side]], fields });
    const g = got[side];
    g.agents.push(perJob(m.cpu.agents));
    g.controller.push(perJob(m.cpu.controller));
    g.kib.push(m.controllerWritten / jobs / 1024);
    g.rate.push(m.rate);
    console.log(`round ${r} ${side}: ${m.rate.toFixed(0)} jobs/s (bare spawn ${bare.at(-1)!.toFixed(0)}/s), controller ${g.controller.at(-1)!.toFixed(2)} ms/job, agents ${g.agents.at(-1)!.toFixed(2)} ms/job, wrote ${g.kib.at(-1)!.toFixed(1)} KiB/job, load ${loadavg()[0]!.toFixed(1)}`);
  }
}
for (const side of ["base", "new"] as const) {
  const g = got[side];
  console.log(`${side}: ${median(g.rate).toFixed(0)} jobs/s = ${(median(g.rate) / median(bare)).toFixed(3)}x bare spawn, controller ${median(g.controller).toFixed(2)} ms/job, agents ${median(g.agents).toFixed(2)} ms/job [${g.agents.map((x) => x.toFixed(2)).join(" ")}], wrote ${median(g.kib).toFixed(1)} KiB/job (medians)`);
}
const ratio = (k: "agents" | "controller" | "kib") => median(got.new[k].map((x, i) => x / got.base[k][i]!)).toFixed(2);
console.log(`new/base, median of the rounds: agents' CPU ${ratio("agents")}, controller's CPU ${ratio("controller")}, written ${ratio("kib")}; load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`);
process.exit(0);
