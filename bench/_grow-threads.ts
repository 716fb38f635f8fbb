/**
 * Which threads of which processes burn the CPU of a 4 -> 8 warm grow (issue 36): like
 * _grow-trace.ts without marks, and around each resize a snapshot of every descendant thread's
 * CPU (/proc/PID/task/TID/schedstat, ns), summed by process kind and thread name. The joining
 * ranks are the warm ranks that were idle before the grow on the added nodes.
 * Run: bun bench/_grow-threads.ts [TRIALS]
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { clusterApi, collectStdout, resizeAndWait, startBenchCluster } from "./cluster.ts";
import { median } from "./lib.ts";
import { processTable } from "./proc-cpu.ts";

const PROGRAM = new URL("programs/adapt.ts", import.meta.url).pathname;
const trials = Number(process.argv[2] ?? 5);

type Threads = Map<string, { key: string; ns: number }>;
function snapshot(kindOf: (pid: number, cmd: string) => string): Threads {
  const all = processTable();
  const pids = [process.pid];
  for (let i = 0; i < pids.length; i++) for (const [pid, p] of all) if (p.ppid === pids[i]) pids.push(pid);
  const out: Threads = new Map();
  for (const pid of pids.slice(1)) {
    const kind = kindOf(pid, all.get(pid)!.cmd);
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim().replace(/\d+$/, "N");
        const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
        out.set(`${pid}/${tid}`, { key: `${kind}: ${name}`, ns });
      } catch {
        // gone
      }
    }
  }
  return out;
}

const cluster = await startBenchCluster(8, { cpusPerNode: 1, warmRanks: 1 });
const api = clusterApi(cluster);
const stop = join(cluster.dir, "stop");
const totals: number[] = [];
const sums = new Map<string, number>();
try {
  for (let t = 0; t < trials; t++) {
    rmSync(stop, { force: true });
    const run = Bun.spawn([...cluster.ebb, "run", "-N", "4", "--elastic", "--min-nodes", "1", "--max-nodes", "8", "--", "ebb", "exec", PROGRAM, stop], { env: cluster.env, stdout: "pipe", stderr: "inherit" });
    const stdout = collectStdout(run.stdout);
    while (!/ready rank=3/.test(stdout.text())) await Bun.sleep(20);
    await Bun.sleep(3000);
    const job = (await api("GET", "/v1/jobs?state=RUNNING")).jobs[0].id as number;
    const table = processTable();
    const busy = new Set([...table].filter(([, p]) => /warm-rank/.test(p.cmd) && p.cpu > 0.4).map(([pid]) => pid));
    const kindOf = (pid: number, cmd: string) => (/ up /.test(cmd) ? "up" : / run /.test(cmd) ? "launcher" : /warm-rank/.test(cmd) ? (busy.has(pid) ? "old rank" : "warm rank") : "other");
    const before = snapshot(kindOf);
    const times = await resizeAndWait(api, job, 8, 20);
    const after = snapshot(kindOf);
    totals.push(times.committed! - times.requested!);
    for (const [id, a] of after) sums.set(a.key, (sums.get(a.key) ?? 0) + a.ns - (before.get(id)?.ns ?? 0));
    writeFileSync(stop, "");
    await run.exited;
    await stdout.done;
    await Bun.sleep(500);
  }
} finally {
  writeFileSync(stop, "");
  await cluster.stop();
}
console.log(`${trials} trials; decision to commit median ${median(totals)} ms: ${totals.join(", ")}`);
console.log("CPU ms per grow (request to the commit seen, polled every 20 ms), by process kind and thread:");
for (const [k, ns] of [...sums].sort((a, b) => b[1] - a[1])) if (ns / trials > 0.5e6) console.log(`${(ns / 1e6 / trials).toFixed(1).padStart(8)}  ${k}`);
