/**
 * MPI launch: wall time of `ebb run -N k -n N ./hello` against Hydra's `mpiexec -n N ./hello`
 * in the same run (median of 10, the two alternating), and a PMI fence microbenchmark:
 * MPI_Init + MPI_Barrier with N ranks over k agents, as the slowest rank measures it, against
 * the same under Hydra.
 */
import { readFileSync } from "node:fs";
import { compileMpi } from "../test/support/mpi.ts";
import { compiledEbb, runCommand, startBenchCluster, timed } from "./cluster.ts";
import { median, type Bench, type Figure } from "./lib.ts";

const INIT_BARRIER = `
#include <mpi.h>
#include <stdio.h>
#include <time.h>
int main(int argc, char **argv) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  MPI_Init(&argc, &argv);
  MPI_Barrier(MPI_COMM_WORLD);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double us = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3, worst = 0;
  MPI_Reduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("init_barrier_us=%.0f\\n", worst);
  MPI_Finalize();
  return 0;
}`;

async function initBarrier(argv: string[], env: Record<string, string>): Promise<number> {
  const { out } = await runCommand(argv, env);
  const m = /init_barrier_us=(\d+)/.exec(out);
  if (!m) throw new Error(`${argv.join(" ")} printed no init_barrier_us: ${out}`);
  return Number(m[1]) / 1000;
}

/**
 * Medians of `a` and `b` over `times` rounds, each round running one then the other: this VM's
 * speed drifts by tens of percent within a minute, and two loops one after the other would
 * compare two different machines.
 */
async function alternating(times: number, a: () => Promise<number>, b: () => Promise<number>): Promise<[number, number]> {
  const xs: number[] = [];
  const ys: number[] = [];
  for (let i = 0; i < times; i++) {
    xs.push(await a());
    ys.push(await b());
  }
  return [median(xs), median(ys)];
}

export default {
  name: "mpi-launch",
  description: "ebb run vs mpiexec (Hydra) for an MPICH hello; MPI_Init+MPI_Barrier over k agents",
  async run({ quick }) {
    const hello = await compileMpi("bench-hello", readFileSync(new URL("../test/mpi/programs/hello.c", import.meta.url), "utf8"));
    const fence = await compileMpi("bench-init-barrier", INIT_BARRIER);
    if (!hello || !fence || !Bun.which("mpiexec")) throw new Error("mpicc and mpiexec (MPICH) are needed for this benchmark");
    const reps = quick ? 3 : 10;
    const ebb = await compiledEbb();
    const cluster = await startBenchCluster(8, { ebb });
    const figures: Figure[] = [];
    try {
      const env = cluster.env;
      await timed([...ebb, "run", "-n", "1", hello], env); // warm the page cache
      for (const [n, k] of [[2, 1], [4, 2], [8, 4]] as const) {
        const [ours, hydra] = await alternating(
          reps,
          () => timed([...ebb, "run", "-N", String(k), "-n", String(n), hello], env),
          () => timed(["mpiexec", "-n", String(n), hello], env),
        );
        figures.push({ name: `launch ${n} ranks on ${k} node(s), wall time`, value: ours, unit: "ms", baseline: { name: "mpiexec (Hydra), 1 host", value: hydra }, better: "lower", goal: "<= 1.0x Hydra", met: ours <= hydra });
      }
      for (const k of [1, 2, 4, 8]) {
        const [ours, hydra] = await alternating(
          reps,
          () => initBarrier([...ebb, "run", "-N", String(k), "-n", "8", fence], env),
          () => initBarrier(["mpiexec", "-n", "8", fence], env),
        );
        figures.push({ name: `MPI_Init+MPI_Barrier, 8 ranks over ${k} agent(s)`, value: ours, unit: "ms", baseline: { name: "Hydra, 8 ranks, 1 host", value: hydra }, better: "lower" });
      }
    } finally {
      await cluster.stop();
    }
    return figures;
  },
} satisfies Bench;
