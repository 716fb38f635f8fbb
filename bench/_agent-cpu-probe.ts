/**
 * Where the agent's thread spends its CPU per null job, by section (issue 36):
 * `bun bench/_agent-cpu-probe.ts MAIN [JOBS]` runs a controller and 4 agents (processes layout) of
 * the checkout whose src/main.ts is MAIN, 500 `true` jobs to warm up, then JOBS (default 1000),
 * and prints each section's CPU per job and calls per job, summed over the agents' threads.
 * MAIN must be a checkout with bench/_agent-cpu-probe.patch applied (`git apply` it in a scratch
 * copy: `git archive HEAD | tar -x -C /tmp/probe && cd /tmp/probe && git apply
 * bench/_agent-cpu-probe.patch`, node_modules linked): the patch adds src/util/cpu-probe.ts, which
 * reads the calling thread's CPU clock (clock_gettime(CLOCK_THREAD_CPUTIME_ID) through bun:ffi)
 * around each section when EBB_CPU_PROBE names a file prefix, and wraps the agent's per-job
 * sections in it. Sections nest (procs.spawn total holds cg prepare, fromInside+spawn holds
 * Bun.spawn); what no section holds is the event loop's own work (sockets, the child's exit, GC).
 * Thread CPU, not wall time: the load changes it less than jobs/s, but it still rises with it
 * (caches). Not a benchmark (run.ts skips files named _*); the patch is not for main: each probe
 * allocates a closure per call.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { runTrueJobs, startBenchCluster } from "./cluster.ts";

const [main, jobsArg] = process.argv.slice(2);
if (!main) {
  console.error("usage: bun bench/_agent-cpu-probe.ts MAIN [JOBS]");
  process.exit(2);
}
const jobs = Number(jobsArg ?? 1000);
const dir = "/tmp/ebb-agent-cpu-probe";
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir);
process.env.EBB_CPU_PROBE = `${dir}/p`;
const c = await startBenchCluster(4, { layout: "processes", ebb: [process.execPath, main] });
await runTrueJobs(c, 500);
// The probes write their sums every 2 s: one write after the warm-up, one after the jobs.
await Bun.sleep(2500);
type Dump = { total: number; acc: Record<string, [number, number]> };
const snap = () => new Map(readdirSync(dir).map((f) => [f, JSON.parse(readFileSync(`${dir}/${f}`, "utf8")) as Dump]));
const before = snap();
await runTrueJobs(c, jobs);
await Bun.sleep(2500);
const after = snap();
await c.stop();
const sections = new Map<string, [number, number]>();
let total = 0;
for (const [f, now] of after) {
  const was = before.get(f);
  if (!was) continue;
  total += now.total - was.total;
  for (const [name, [ns, n]] of Object.entries(now.acc)) {
    const [wasNs, wasN] = was.acc[name] ?? [0, 0];
    const s = sections.get(name) ?? [0, 0];
    sections.set(name, [s[0] + ns - wasNs, s[1] + n - wasN]);
  }
}
console.log(`agents' threads: ${(total / jobs / 1000).toFixed(0)} µs of CPU per job (with ~5 s of idling)`);
for (const [name, [ns, n]] of [...sections].sort((a, b) => b[1][0] - a[1][0])) console.log(`${(ns / jobs / 1000).toFixed(0).padStart(6)} µs/job ${(n / jobs).toFixed(2).padStart(6)} calls/job  ${name}`);
