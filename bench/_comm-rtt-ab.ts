// A/B of builds of ebb/comm by comm-latency.ts's paired rounds: the 8 B ping-pong of
// programs/pingpong-rtt.ts (copied into each tree) on one node, 2 ranks under ebb run, every side
// in each round, the order reversed every other round. A tree is a directory with src/ (e.g.
// `git archive REV src | tar -x -C DIR`). Baselines in the same rounds: `@mpich`
// (programs/pingpong-rtt.c) and `@floor-sync` / `@floor-await` (programs/shm-floor.ts).
// Prints each side's medians over the rounds and the median of its per-round ratios to the first
// side (and to @mpich when it runs, also over the rounds in which MPICH ran at its fastest), with
// their quartiles.
// Usage: bun bench/_comm-rtt-ab.ts ROUNDS DIR|@mpich|@floor-sync|@floor-await...
import { readFileSync } from "node:fs";
import { compileMpi } from "../test/support/mpi.ts";
import { startBenchCluster } from "./cluster.ts";
import { fastRounds, med, paired, pairedRounds, pingPongIn, type Side, spread } from "./comm-latency.ts";
import { median } from "./lib.ts";

const rounds = Number(process.argv[2]);
const names = process.argv.slice(3);
if (!(rounds > 0) || names.length === 0) throw new Error("usage: bun bench/_comm-rtt-ab.ts ROUNDS DIR|@mpich|@floor-sync|@floor-await...");
const floor = new URL("programs/shm-floor.ts", import.meta.url).pathname;
for (const d of names) if (!d.startsWith("@")) pingPongIn(d);
const mpich = names.includes("@mpich") ? await compileMpi("bench-pingpong-rtt", readFileSync(new URL("programs/pingpong-rtt.c", import.meta.url), "utf8")) : undefined;
const cluster = await startBenchCluster(2);
const sideOf = (d: string): Side => {
  if (d === "@mpich") return { name: d, argv: ["mpiexec", "-bind-to", "core", "-n", "2", mpich!] };
  if (d === "@floor-sync" || d === "@floor-await") return { name: d, argv: ["taskset", "-c", "0", process.execPath, floor, d.slice(7), "1"] };
  return { name: d, argv: [...cluster.ebb, "run", "-N", "1", "-n", "2", "--", process.execPath, `${d}/bench/programs/pingpong-rtt.ts`] };
};
try {
  const res = await pairedRounds(names.map(sideOf), rounds, cluster.env);
  const m = names.indexOf("@mpich");
  console.log(`load ${median(res.loads)} (min-max ${Math.min(...res.loads)}-${Math.max(...res.loads)})`);
  names.forEach((d, i) => {
    const f = (k: "p10" | "p50" | "p90" | "p99" | "mean" | "slow" | "cpu" | "waitCpu") => med(res, i, k);
    const vs = (j: number, k: "p50" | "p90" | "p99" | "mean" | "cpu") => {
      const p = paired(res, i, j, k);
      return `${k} ÷ ${names[j]} ${p.median.toFixed(3)} (${spread(p)})`;
    };
    const fast = () => {
      const p = paired(res, i, m, "p50", fastRounds(res, m));
      return `p50 ÷ @mpich in the ${p.rounds} rounds it ran within 1.5x of its fastest ${p.median.toFixed(3)} (${spread(p)})`;
    };
    const ratios = [...(i > 0 ? [vs(0, "p50"), vs(0, "p90"), vs(0, "p99"), vs(0, "mean"), vs(0, "cpu")] : []), ...(m >= 0 && i !== m ? [vs(m, "p50"), vs(m, "mean"), fast()] : [])];
    console.log(`${d}: p10 ${f("p10")} p50 ${f("p50")} p90 ${f("p90")} p99 ${f("p99")} mean ${f("mean")} ns, slow>20us ${f("slow")}, cpu ${f("cpu")} ns/rtt, waiting ${f("waitCpu").toFixed(3)} CPU s/s${ratios.length ? `; ${ratios.join(", ")}` : ""}`);
  });
} finally {
  await cluster.stop();
}
