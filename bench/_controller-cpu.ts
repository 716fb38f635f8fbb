/**
 * The controller's CPU per null job by code path, from getrusage rather than from samples (issue
 * 36): `bun bench/_controller-cpu.ts [JOBS] [MAIN]` runs a controller of MAIN (default this
 * checkout's src/main.ts; its src/ must hold the classes _controller-cpu-preload.ts wraps) with
 * that preload, and 4 agents; JOBS one-rank `true` jobs (default 1000) on the fresh cluster, then
 * JOBS more (warm). Prints each path's µs per job and calls per job, fresh and warm, and the
 * controller's total. A path's figure includes the paths it calls (a pass includes its apply) and
 * whatever the process's other threads (JIT, collector) used meanwhile; the fresh total includes
 * the controller's start. A sampling profile (bench/_controller-paths.ts) counts a thread's wall
 * time where it stands, on a loaded machine also while it waits for a CPU or in a system call: its
 * SQLite share was ~2x what getrusage gives the same statements. Not a benchmark (run.ts skips
 * files named _*): each wrapped call costs a getrusage or two.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { runTrueJobs, startBenchCluster } from "./cluster.ts";

const jobs = Number(process.argv[2] ?? 1000);
const main = process.argv[3] ?? new URL("../src/main.ts", import.meta.url).pathname;
const preload = new URL("./_controller-cpu-preload.ts", import.meta.url).pathname;
type Dump = { total: number; totals: Record<string, { us: number; calls: number }> };

const out = `ebb-controller-cpu-${process.pid}-out`;
process.env.EBB_CPU_OUT = `/tmp/${out}`;
// The controller may re-exec itself: the dump of the process that did the work is the largest.
const dumps = () => readdirSync("/tmp").filter((f) => f.startsWith(`${out}.`));
const read = (): Dump => dumps().map((f) => JSON.parse(readFileSync(`/tmp/${f}`, "utf8")) as Dump).sort((a, b) => b.total - a.total)[0]!;
const c = await startBenchCluster(4, { layout: "processes", ebb: [process.execPath, "--preload", preload, main] });
const batches: Dump[] = [];
try {
  for (let b = 0; b < 2; b++) {
    await runTrueJobs(c, jobs);
    // Two dumps later: the last calls are in.
    await Bun.sleep(1100);
    batches.push(read());
  }
} finally {
  await c.stop();
  for (const f of dumps()) rmSync(`/tmp/${f}`);
}
const [fresh, warm] = batches as [Dump, Dump];
const per = (x: number) => (x / jobs).toFixed(0).padStart(6);
console.log(`controller's CPU per job, µs (getrusage), fresh / warm: ${per(fresh.total)} ${per(warm.total - fresh.total)}`);
for (const path of Object.keys(warm.totals).sort()) {
  const f = fresh.totals[path] ?? { us: 0, calls: 0 };
  const w = warm.totals[path]!;
  console.log(`${path.padEnd(56)} ${per(f.us)} ${per(w.us - f.us)}   calls per job ${(f.calls / jobs).toFixed(2)} ${((w.calls - f.calls) / jobs).toFixed(2)}`);
}
