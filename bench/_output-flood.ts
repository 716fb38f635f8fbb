/**
 * bun bench/_output-flood.ts [flood|throughput] [ROUNDS]: rank output through `ebb run`, against
 * the tree at $TREE (default this one), on a cluster of 2 agents.
 * flood: 2 ranks (rank 1 under node01 by --fanout 1) print `seq 1 3000000` (-l) while nobody reads
 * ebb run's output for 8 s; prints the lines received per rank, how many were out of order or
 * missing, whether the run ended (60 s after reading starts), and the agents' peak RSS growth.
 * throughput: one rank writes $MIB MiB (default 1024, head -c) through ebb run to /dev/null; prints wall time and
 * the CPU time of ebb run and of the agent.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const tree = process.env.TREE ?? join(import.meta.dir, "..");
const { startCluster } = await import(`${tree}/test/support/cluster.ts`);
const mode = process.argv[2] ?? "flood";
const rounds = Number(process.argv[3] ?? 1);

const agentPid = (name: string): number => c.agents.get(name)!.pid;
const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;
/** utime + stime of `pid`, in seconds. */
function cpu(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").slice(readFileSync(`/proc/${pid}/stat`, "utf8").lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
}

const c = await startCluster({ agents: 2, cpus: 2 });
try {
  for (let r = 0; r < rounds; r++) {
    if (mode === "flood") {
      const LINES = 3_000_000;
      const pids = [agentPid("node01"), agentPid("node02")];
      const before = pids.map(rss);
      const peak = [...before];
      const run = c.ebbSpawn(["run", "-N", "2", "-n", "2", "--fanout", "1", "-l", "seq", "1", String(LINES)]);
      for (let i = 0; i < 40; i++) {
        await Bun.sleep(200);
        pids.forEach((p, j) => (peak[j] = Math.max(peak[j]!, rss(p))));
      }
      const reader = run.stdout.getReader();
      const dec = new TextDecoder();
      let rest = "";
      const next = [1, 1];
      const got = [0, 0];
      let bad = 0;
      const until = Date.now() + 60_000;
      let ended = false;
      for (;;) {
        const chunk = await Promise.race([reader.read(), Bun.sleep(Math.max(0, until - Date.now())).then(() => undefined)]);
        if (!chunk) break;
        if (chunk.done) {
          ended = true;
          break;
        }
        const lines = (rest + dec.decode(chunk.value, { stream: true })).split("\n");
        rest = lines.pop()!;
        for (const l of lines) {
          const [rk, n] = l.split(": ").map(Number) as [number, number];
          got[rk]!++;
          if (n !== next[rk]) bad++;
          next[rk] = n + 1;
        }
      }
      if (!ended) run.kill("SIGKILL");
      const code = await run.exited;
      const err = await new Response(run.stderr).text();
      console.log(JSON.stringify({ mode, tree, lines: LINES, received: got, outOfOrder: bad, ended, code, rssGrowthMiB: peak.map((p, j) => +((p - before[j]!) / 2 ** 20).toFixed(1)), stderr: err.slice(0, 300) }));
      await c.waitNodes(2, "IDLE", 60_000);
    } else {
      const agent = agentPid("node01");
      const a0 = cpu(agent);
      const t0 = performance.now();
      const run = Bun.spawn([process.execPath, join(tree, "src/main.ts"), "run", "-n", "1", "-u", "head", "-c", String(Number(process.env.MIB ?? 1024) << 20), "/dev/zero"], { cwd: c.dir, env: c.env, stdout: Bun.file("/dev/null"), stderr: "pipe" });
      const code = await run.exited;
      const wall = (performance.now() - t0) / 1000;
      const usage = run.resourceUsage();
      const launcherCpu = usage ? Number(usage.cpuTime.user + usage.cpuTime.system) / 1e6 : NaN;
      console.log(JSON.stringify({ mode, tree, code, wall: +wall.toFixed(2), launcherCpu: +launcherCpu.toFixed(2), agentCpu: +(cpu(agent) - a0).toFixed(2), load: readFileSync("/proc/loadavg", "utf8").split(" ")[0] }));
      await c.waitNodes(2, "IDLE", 60_000);
    }
  }
} finally {
  await c.stop();
}
