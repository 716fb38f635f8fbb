/**
 * Two ebb checkouts' agents, their own CPU per null job (issue 36), root's jobs and an ordinary
 * user's: `bun bench/_ab-agent-own.ts BASE_MAIN [NEW_MAIN] [JOBS] [ROUNDS] [USER]` runs a
 * controller and 4 agent processes of each, JOBS one-rank `true` jobs a trial (default 400), in
 * ROUNDS rounds (default 4) whose order alternates (ABBA), root's jobs then USER's (default
 * ebbt_bench; must exist). Prints each trial's agents' CPU per job without the processes they
 * waited for (the jobs' own), the medians and the median of the rounds' new/base ratios, and the
 * load. Not a benchmark of `npm run bench` (run.ts skips files named _*).
 */
import { loadavg } from "node:os";
import { measureTrueJobs } from "./cluster.ts";
import { median } from "./lib.ts";

const [baseMain, newArg, jobsArg, roundsArg, userArg] = process.argv.slice(2);
if (!baseMain) {
  console.error("usage: bun bench/_ab-agent-own.ts BASE_MAIN [NEW_MAIN] [JOBS] [ROUNDS] [USER]");
  process.exit(2);
}
const newMain = newArg || new URL("../src/main.ts", import.meta.url).pathname;
const jobs = Number(jobsArg ?? 400);
const rounds = Number(roundsArg ?? 4);
const who = { root: undefined, user: userArg ?? "ebbt_bench" } as const;
const sides = { base: baseMain, new: newMain } as const;
type Side = keyof typeof sides;
type Who = keyof typeof who;
const got: Record<Side, Record<Who, number[]>> = { base: { root: [], user: [] }, new: { root: [], user: [] } };
const loads: number[] = [];
for (let r = 0; r < rounds; r++)
  for (const w of ["root", "user"] as Who[])
    for (const side of (r % 2 === 0 ? ["base", "new"] : ["new", "base"]) as Side[]) {
      loads.push(loadavg()[0]!);
      const m = await measureTrueJobs(4, jobs, { layout: "processes", ebb: [process.execPath, sides[side]], user: who[w] });
      const ms = ((m.cpu["agents own"] ?? 0) / jobs) * 1000;
      got[side][w].push(ms);
      console.log(`round ${r} ${w} ${side}: agents' own ${ms.toFixed(2)} ms/job, with the jobs' ${(((m.cpu.agents ?? 0) / jobs) * 1000).toFixed(2)}, ${m.rate.toFixed(0)} jobs/s, load ${loadavg()[0]!.toFixed(1)}`);
    }
for (const w of ["root", "user"] as Who[]) {
  const ratio = median(got.new[w].map((x, i) => x / got.base[w][i]!));
  console.log(`${w}'s jobs: base ${median(got.base[w]).toFixed(2)} ms/job [${got.base[w].map((x) => x.toFixed(2)).join(" ")}], new ${median(got.new[w]).toFixed(2)} [${got.new[w].map((x) => x.toFixed(2)).join(" ")}]; new/base per round, median ${ratio.toFixed(3)}`);
}
console.log(`load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`);
process.exit(0);
