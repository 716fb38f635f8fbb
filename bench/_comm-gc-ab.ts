// A/B of builds of ebb/comm by garbage collection: the 8 B ping-pong of programs/pingpong-rtt.ts
// (copied into each tree) on one node, 2 ranks under ebb run with BUN_JSC_logGC=1, the trees
// alternating in each round (order reversed every other round). Per run: the eden and full
// collections JavaScriptCore logged (both ranks and the launcher, 120,000 round trips each with the
// warm-up), the sum of the pauses it logged, and the program's mean round trip and its count of
// round trips over 20 us. A tree is a directory with src/ (as for _comm-rtt-ab.ts).
// Usage: bun bench/_comm-gc-ab.ts ROUNDS DIR...
import { readFileSync } from "node:fs";
import { startBenchCluster } from "./cluster.ts";
import { pingPongIn } from "./comm-latency.ts";

const rounds = Number(process.argv[2]);
const dirs = process.argv.slice(3);
if (!(rounds > 0) || dirs.length === 0) throw new Error("usage: bun bench/_comm-gc-ab.ts ROUNDS DIR...");
for (const d of dirs) pingPongIn(d);
const cluster = await startBenchCluster(2);
try {
  for (let r = 0; r < rounds; r++) {
    const load = readFileSync("/proc/loadavg", "utf8").split(" ")[0];
    const line: string[] = [];
    for (const d of r % 2 ? [...dirs].reverse() : dirs) {
      const argv = [...cluster.ebb, "run", "-N", "1", "-n", "2", "--", process.execPath, `${d}/bench/programs/pingpong-rtt.ts`];
      const p = Bun.spawn(argv, { env: { ...cluster.env, BUN_JSC_logGC: "1" }, stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      if (code !== 0) throw new Error(`${argv.join(" ")} failed (${code}): ${err.slice(-2000)}`);
      const all = out + err;
      const eden = all.match(/=> EdenCollection/g)?.length ?? 0;
      const full = all.match(/=> FullCollection/g)?.length ?? 0;
      const pauseMs = [...all.matchAll(/p=([0-9.]+)ms \(max/g)].reduce((a, m) => a + Number(m[1]), 0);
      line.push(`${d} eden=${eden} full=${full} pause_ms=${pauseMs.toFixed(1)} mean=${/mean=(\d+)/.exec(out)?.[1]} slow>20us=${/slow>20us n=(\d+)/.exec(out)?.[1]}`);
    }
    console.log(`round ${r + 1} (load ${load}): ${line.join(" | ")}`);
  }
} finally {
  await cluster.stop();
}
