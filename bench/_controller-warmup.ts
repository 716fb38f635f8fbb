/**
 * Where a fresh controller's extra CPU over its first jobs goes (issue 36): `bun
 * bench/_controller-warmup.ts [THOUSANDS] [MAIN] [RESTARTED]` runs a controller and 4 agents of
 * MAIN (default this checkout's src/main.ts) and THOUSANDS (default 4) thousands of one-rank `true`
 * jobs in turn, and prints for each thousand the controller's CPU per job and its threads' CPU
 * (/proc's per-thread times, by thread name: the JavaScript thread, JavaScriptCore's JIT compiler
 * threads, the allocator's and the collector's). With RESTARTED (a count of thousands), the
 * controller is then stopped and started again on the same database and port (the agents
 * reconnect) and runs RESTARTED thousands more: a new process on a database that already holds
 * THOUSANDS thousand jobs. If its first thousand costs what the fresh cluster's did, the fresh
 * cost is the process's (its JIT warming up), not the database's. Not a benchmark (run.ts skips
 * files named _*).
 */
import { readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { runTrueJobs, startBenchCluster } from "./cluster.ts";
import { cpuSince, cpuSnapshot } from "./proc-cpu.ts";

const thousands = Number(process.argv[2] ?? 4);
const main = process.argv[3] || new URL("../src/main.ts", import.meta.url).pathname;
const restarted = Number(process.argv[4] ?? 0);
const c = await startBenchCluster(4, { layout: "processes", ebb: [process.execPath, main] });
const TICK_MS = 10;

/** CPU ms so far of a process's threads, summed by name (a trailing number dropped: "JITWorker"). */
function threads(pid: number): Map<string, number> {
  const by = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue; // a thread that ended meanwhile
    }
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/\s*#?\d+$/, "");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    by.set(name, (by.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) * TICK_MS);
  }
  return by;
}

async function thousand(label: string, pid: number): Promise<void> {
  const cpu0 = cpuSnapshot();
  const t0 = threads(pid);
  await runTrueJobs(c, 1000);
  const cpu = cpuSince(cpu0);
  const t1 = threads(pid);
  const parts = [...t1].map(([name, ms]) => [name, (ms - (t0.get(name) ?? 0)) / 1000] as const).filter(([, ms]) => ms > 0);
  console.log(`${label}: controller ${(cpu.controller ?? 0).toFixed(2)} ms/job (${parts.map(([n, ms]) => `${n} ${ms.toFixed(2)}`).join(", ")}), agents ${(cpu.agents ?? 0).toFixed(2)} ms/job, load ${loadavg()[0]!.toFixed(1)}`);
}

for (let k = 1; k <= thousands; k++) await thousand(`thousand ${k}`, c.controllerPid);
if (restarted > 0) {
  process.kill(c.controllerPid, "SIGTERM");
  while (readdirSync("/proc").includes(String(c.controllerPid))) await Bun.sleep(25);
  const again = Bun.spawn([process.execPath, main, "controller", "--listen", new URL(c.url).host, "--state-dir", join(c.dir, "state")], { env: { ...process.env, EBB_LOG: "warn" }, stdout: "ignore", stderr: "inherit" });
  while (true) {
    try {
      if (((await (await fetch(`${c.url}/v1/health`)).json()) as { nodes: number }).nodes === 4) break;
    } catch {}
    await Bun.sleep(50);
  }
  for (let k = 1; k <= restarted; k++) await thousand(`restarted, thousand ${k}`, again.pid);
  again.kill("SIGTERM");
  await again.exited;
}
await c.stop();
process.exit(0);
