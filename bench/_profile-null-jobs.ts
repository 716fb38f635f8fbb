/**
 * Where a null job's CPU time goes (issue 36): `bun bench/_profile-null-jobs.ts [JOBS] [DIR]` runs a
 * controller and 4 agents, each under Bun's sampling profiler (--cpu-prof-md), submits 50 `true`
 * jobs to warm up and then JOBS (default 500), and stops the cluster: each process writes its
 * profile (markdown: hot functions and call tree) into DIR (default /tmp/ebb-profile), the
 * controller's first. Not a benchmark (run.ts skips files named _*): the profiler slows every
 * process down.
 */
import { runTrueJobs, startBenchCluster } from "./cluster.ts";

const MAIN = new URL("../src/main.ts", import.meta.url).pathname;
const jobs = Number(process.argv[2] ?? 500);
const dir = process.argv[3] ?? "/tmp/ebb-profile";
const c = await startBenchCluster(4, { layout: "processes", ebb: [process.execPath, "--cpu-prof-md", `--cpu-prof-dir=${dir}`, MAIN] });
await runTrueJobs(c, 50);
const t0 = performance.now();
await runTrueJobs(c, jobs);
process.stderr.write(`${jobs} jobs at ${(jobs / ((performance.now() - t0) / 1000)).toFixed(1)} jobs/s under the profiler; controller pid ${c.controllerPid}; profiles in ${dir}\n`);
await c.stop();
