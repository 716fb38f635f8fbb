// Where the mean round trip goes: the 8 B ping-pong of programs/pingpong-rtt.ts (copied into each
// tree) and of pingpong-rtt.c under MPICH, alternating in each round (order reversed every other
// round), each run's histogram of its 20,000 timed round trips: per bucket the count and its share
// of the mean in ns (`hist` line), with the run's percentiles and mean. Long round trips come at a
// rate per second of wall time on a loaded machine, so compare counts per run with that in mind.
// A side: a tree (a directory with src/, as for _comm-rtt-ab.ts), optionally NAME=VALUE
// environment settings after a comma (e.g. DIR,EBB_COMM_YIELD=0), or @mpich.
// Usage: bun bench/_comm-hist-ab.ts ROUNDS SIDE...
import { readFileSync } from "node:fs";
import { compileMpi } from "../test/support/mpi.ts";
import { runCommand, startBenchCluster } from "./cluster.ts";
import { pingPongIn } from "./comm-latency.ts";

const rounds = Number(process.argv[2]);
const sides = process.argv.slice(3);
if (!(rounds > 0) || sides.length === 0) throw new Error("usage: bun bench/_comm-hist-ab.ts ROUNDS DIR[,NAME=VALUE...]|@mpich...");
const mpich = sides.includes("@mpich") ? await compileMpi("bench-pingpong-rtt", readFileSync(new URL("programs/pingpong-rtt.c", import.meta.url), "utf8")) : undefined;
for (const side of sides) if (!side.startsWith("@")) pingPongIn(side.split(",")[0]!);
const cluster = await startBenchCluster(2);
try {
  for (let r = 0; r < rounds; r++) {
    const load = readFileSync("/proc/loadavg", "utf8").split(" ")[0];
    for (const side of r % 2 ? [...sides].reverse() : sides) {
      const [d, ...settings] = side.split(",");
      const env = Object.fromEntries(settings.map((s) => [s.slice(0, s.indexOf("=")), s.slice(s.indexOf("=") + 1)]));
      const argv = d === "@mpich" ? ["mpiexec", "-bind-to", "core", "-n", "2", mpich!] : [...cluster.ebb, "run", "-N", "1", "-n", "2", "--", process.execPath, `${d}/bench/programs/pingpong-rtt.ts`];
      const out = (await runCommand(argv, { ...cluster.env, ...env })).out;
      console.log(`round ${r + 1} (load ${load}) ${side}: ${/^rtt (.*)$/m.exec(out)?.[1]} | ${/^hist (.*)$/m.exec(out)?.[1]}`);
    }
  }
} finally {
  await cluster.stop();
}
