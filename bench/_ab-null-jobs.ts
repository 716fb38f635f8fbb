/**
 * Two ebb checkouts on the null-job workload of `bench throughput` (issue 36), in paired rounds:
 * `bun bench/_ab-null-jobs.ts BASE_MAIN [NEW_MAIN] [JOBS] [ROUNDS]` runs a controller and 4 agents
 * (processes layout) of each, JOBS one-rank `true` jobs a trial (default 1000), ROUNDS rounds
 * (default 4) whose order alternates (ABBA), after one uncounted warm-up. Prints each trial's CPU
 * per job of the agents (with the jobs' `true`) and of the controller, jobs/s and the load, then
 * the medians and the median of the rounds' new/base ratios. BASE_MAIN and NEW_MAIN are the
 * src/main.ts of each checkout (NEW_MAIN, or "": this one's); e.g. a base made with
 * `git archive BASE | tar -x -C /tmp/base` and its node_modules linked. Not a benchmark of
 * `npm run bench` (run.ts skips files named _*): it compares code, not this checkout against a
 * baseline.
 */
import { loadavg } from "node:os";
import { measureTrueJobs } from "./cluster.ts";
import { median } from "./lib.ts";

const [baseMain, newArg, jobsArg, roundsArg] = process.argv.slice(2);
const newMain = newArg || new URL("../src/main.ts", import.meta.url).pathname;
if (!baseMain) {
  console.error("usage: bun bench/_ab-null-jobs.ts BASE_MAIN [NEW_MAIN] [JOBS] [ROUNDS]");
  process.exit(2);
}
const jobs = Number(jobsArg ?? 1000);
const rounds = Number(roundsArg ?? 4);
const sides = { base: [process.execPath, baseMain], new: [process.execPath, newMain] } as const;
type Side = keyof typeof sides;
const got = { base: { agents: [] as number[], controller: [] as number[], rate: [] as number[] }, new: { agents: [] as number[], controller: [] as number[], rate: [] as number[] } };
const loads: number[] = [];
const perJob = (cpuSeconds: number | undefined) => ((cpuSeconds ?? 0) / jobs) * 1000;

await measureTrueJobs(4, Math.min(jobs, 100), { layout: "processes", ebb: [...sides.new] });
for (let r = 0; r < rounds; r++) {
  for (const side of (r % 2 === 0 ? ["base", "new"] : ["new", "base"]) as Side[]) {
    loads.push(loadavg()[0]!);
    const m = await measureTrueJobs(4, jobs, { layout: "processes", ebb: [...sides[side]] });
    got[side].agents.push(perJob(m.cpu.agents));
    got[side].controller.push(perJob(m.cpu.controller));
    got[side].rate.push(m.rate);
    console.log(`round ${r} ${side}: agents ${perJob(m.cpu.agents).toFixed(2)} ms/job, controller ${perJob(m.cpu.controller).toFixed(2)} ms/job, ${m.rate.toFixed(0)} jobs/s, load ${loadavg()[0]!.toFixed(1)}`);
  }
}
for (const side of ["base", "new"] as const) {
  const g = got[side];
  console.log(`${side}: agents ${median(g.agents).toFixed(2)} ms/job [${g.agents.map((x) => x.toFixed(2)).join(" ")}], controller ${median(g.controller).toFixed(2)} ms/job, ${median(g.rate).toFixed(0)} jobs/s (medians)`);
}
const ratios = got.new.agents.map((x, i) => x / got.base.agents[i]!);
console.log(`agents' CPU per job, new/base by round: ${ratios.map((x) => x.toFixed(2)).join(" ")}; median ${median(ratios).toFixed(2)}; load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`);
process.exit(0);
