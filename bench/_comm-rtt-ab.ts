// A/B of builds of ebb/comm: the per-round-trip 10th and 50th percentiles of the 8 B ping-pong
// (programs/pingpong-rtt.ts, copied into each tree) on one node, 2 ranks under ebb run, the trees
// alternating in each round (order reversed every other round); prints each tree's medians over the
// rounds. A tree is a directory with src/ (e.g. `git archive REV src | tar -x -C DIR`). Baselines
// in the same rounds: `@mpich` (programs/pingpong-rtt.c under mpiexec, ranks bound to cores) and
// `@floor-sync` / `@floor-await` (programs/shm-floor.ts: a bare JavaScript ping-pong over one
// shared-memory file, pinned to CPUs 0 and 1, without and with the `await` per message).
// Usage: bun bench/_comm-rtt-ab.ts ROUNDS DIR|@mpich|@floor-sync|@floor-await...
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { compileMpi } from "../test/support/mpi.ts";
import { runCommand, startBenchCluster } from "./cluster.ts";
import { median } from "./lib.ts";

const rounds = Number(process.argv[2]);
const dirs = process.argv.slice(3);
if (!(rounds > 0) || dirs.length === 0) throw new Error("usage: bun bench/_comm-rtt-ab.ts ROUNDS DIR|@mpich|@floor-sync|@floor-await...");
const program = new URL("programs/pingpong-rtt.ts", import.meta.url).pathname;
const floor = new URL("programs/shm-floor.ts", import.meta.url).pathname;
for (const d of dirs) {
  if (d.startsWith("@")) continue;
  mkdirSync(`${d}/bench/programs`, { recursive: true });
  if (`${d}/bench/programs/pingpong-rtt.ts` !== program) copyFileSync(program, `${d}/bench/programs/pingpong-rtt.ts`);
}
const mpich = dirs.includes("@mpich") ? await compileMpi("bench-pingpong-rtt", readFileSync(new URL("programs/pingpong-rtt.c", import.meta.url), "utf8")) : undefined;
const cluster = await startBenchCluster(2);
const argvOf = (d: string): string[] => {
  if (d === "@mpich") return ["mpiexec", "-bind-to", "core", "-n", "2", mpich!];
  if (d === "@floor-sync" || d === "@floor-await") return ["taskset", "-c", "0", process.execPath, floor, d.slice(7), "1"];
  return [...cluster.ebb, "run", "-N", "1", "-n", "2", "--", process.execPath, `${d}/bench/programs/pingpong-rtt.ts`];
};
const res = dirs.map(() => [] as [number, number][]);
const tails = dirs.map(() => [] as string[]);
try {
  for (let r = 0; r < rounds; r++) {
    const load = readFileSync("/proc/loadavg", "utf8").split(" ")[0];
    const order = dirs.map((_, i) => i);
    if (r % 2) order.reverse();
    for (const i of order) {
      const m = /p10=(\d+) p50=(\d+)/.exec((await runCommand(argvOf(dirs[i]!), cluster.env)).out);
      if (!m) throw new Error(`no figure from ${dirs[i]}`);
      res[i]!.push([Number(m[1]), Number(m[2])]);
      tails[i]!.push([/p90=\d+ p99=\d+ mean=\d+/.exec(m.input)?.[0], /slow>20us .*/.exec(m.input)?.[0]].filter(Boolean).join(" "));
    }
    process.stderr.write(`round ${r + 1} (load ${load}): ${dirs.map((d, i) => `${d} ${res[i]![r]!.join("/")} ${tails[i]![r]}`).join(", ")}\n`);
  }
} finally {
  await cluster.stop();
}
for (let i = 0; i < dirs.length; i++) {
  console.log(`${dirs[i]}: round trip p10 ${median(res[i]!.map((x) => x[0]))} ns, p50 ${median(res[i]!.map((x) => x[1]))} ns (medians of ${rounds} rounds)`);
}
