// A/B of builds of ebb/comm: the per-round-trip 10th and 50th percentiles of the 8 B ping-pong
// (programs/pingpong-rtt.ts, copied into each tree) on one node, 2 ranks under ebb run, the trees
// alternating in each round (order reversed every other round); prints each tree's medians over the
// rounds. A tree is a directory with src/ (e.g. `git archive REV src | tar -x -C DIR`).
// Usage: bun bench/_comm-rtt-ab.ts ROUNDS DIR...
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { runCommand, startBenchCluster } from "./cluster.ts";
import { median } from "./lib.ts";

const rounds = Number(process.argv[2]);
const dirs = process.argv.slice(3);
if (!(rounds > 0) || dirs.length === 0) throw new Error("usage: bun bench/_comm-rtt-ab.ts ROUNDS DIR...");
const program = new URL("programs/pingpong-rtt.ts", import.meta.url).pathname;
for (const d of dirs) {
  mkdirSync(`${d}/bench/programs`, { recursive: true });
  if (`${d}/bench/programs/pingpong-rtt.ts` !== program) copyFileSync(program, `${d}/bench/programs/pingpong-rtt.ts`);
}
const cluster = await startBenchCluster(2);
const res = dirs.map(() => [] as [number, number][]);
try {
  for (let r = 0; r < rounds; r++) {
    const load = readFileSync("/proc/loadavg", "utf8").split(" ")[0];
    const order = dirs.map((_, i) => i);
    if (r % 2) order.reverse();
    for (const i of order) {
      const argv = [...cluster.ebb, "run", "-N", "1", "-n", "2", "--", process.execPath, `${dirs[i]}/bench/programs/pingpong-rtt.ts`];
      const m = /rtt p10=(\d+) p50=(\d+)/.exec((await runCommand(argv, cluster.env)).out);
      if (!m) throw new Error(`no figure from ${dirs[i]}`);
      res[i]!.push([Number(m[1]), Number(m[2])]);
    }
    process.stderr.write(`round ${r + 1} (load ${load}): ${dirs.map((d, i) => `${d} ${res[i]![r]!.join("/")}`).join(", ")}\n`);
  }
} finally {
  await cluster.stop();
}
for (let i = 0; i < dirs.length; i++) {
  console.log(`${dirs[i]}: round trip p10 ${median(res[i]!.map((x) => x[0]))} ns, p50 ${median(res[i]!.map((x) => x[1]))} ns (medians of ${rounds} rounds)`);
}
