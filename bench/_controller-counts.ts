/**
 * What the controller does per null job, counted rather than timed (issue 36), so that two trees
 * compare on a loaded machine: `bun bench/_controller-counts.ts [JOBS] [MAIN]` runs a controller and
 * 4 agents of MAIN (default this checkout's src/main.ts), 300 one-rank `true` jobs to warm up, then
 * JOBS more (default 500) under `strace -c -f` of the controller; prints the scheduler passes per
 * job (/metrics) and the system calls per job of the kinds that say where the work goes (WAL page
 * writes are pwrite64, two per page; a socket write to an agent or a client is a sendto). strace
 * slows the controller, which changes how much one turn gathers: compare runs made alike,
 * alternated. Not a benchmark (run.ts skips files named _*).
 */
import { runTrueJobs, startBenchCluster } from "./cluster.ts";

const jobs = Number(process.argv[2] ?? 500);
const main = process.argv[3] ?? new URL("../src/main.ts", import.meta.url).pathname;
const out = `/tmp/ebb-controller-counts-${process.pid}.txt`;
const KINDS = ["pwrite64", "pread64", "sendto", "recvfrom", "write", "writev", "read", "fsync", "fdatasync", "futex"];

const c = await startBenchCluster(4, { layout: "processes", ebb: [process.execPath, main] });
const passes = async () => Number(/^ebb_scheduling_pass_duration_seconds_count (\d+)/m.exec(await (await fetch(`${c.url}/metrics`, { headers: { Authorization: `Bearer ${c.token}` } })).text())?.[1]);
try {
  await runTrueJobs(c, 300);
  const p0 = await passes();
  const strace = Bun.spawn(["strace", "-c", "-f", "-p", String(c.controllerPid), "-o", out], { stderr: "ignore" });
  await Bun.sleep(500);
  await runTrueJobs(c, jobs);
  strace.kill("SIGINT");
  await strace.exited;
  console.log(`passes per job ${((((await passes()) - p0) / jobs)).toFixed(3)}`);
  for (const line of (await Bun.file(out).text()).split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f.length >= 5 && /^\d/.test(f[0]!) && KINDS.includes(f.at(-1)!)) console.log(`${f.at(-1)} per job ${(Number(f[3]) / jobs).toFixed(2)}`);
  }
} finally {
  await c.stop();
}
