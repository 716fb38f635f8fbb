/**
 * Ranks that outnumber their CPUs on a node are left unbound (affinity.ts rankSlices,
 * sharedRankCpus), so each sees all of the job's CPUs there, and an OpenMP runtime starts a thread
 * for every one of them: LULESH built with -fopenmp, 27 ranks on 2 CPUs, ran 2 threads a rank
 * that spin at each barrier for a partner the scheduler has not run (540 s; Hydra unbound alike:
 * 312 s; with one thread a rank: 5.6 s). Bound one to a CPU, as before, each had one thread. So an
 * unbound crowded rank is told to run one, OMP_NUM_THREADS=1 (libgomp, LLVM's libomp, and MKL and
 * OpenBLAS, which read it too), unless the step's environment says otherwise.
 */

/** Whether a step's ranks here outnumber the CPUs they would be bound to, one or more each. */
export function ranksOutnumberCpus(cpus: number, localRanks: number, worldSize: number, ownCpus: boolean): boolean {
  // Nodes sharing the host's CPUs bind by world rank, so there the whole step must fit (sharedRankCpus).
  return (ownCpus ? localRanks : worldSize) > cpus;
}

/** The variables that hold each crowded rank's OpenMP to one thread; none when it sets its own, or is not crowded. */
export function crowdedRankVars(env: Readonly<Record<string, string | undefined>>, crowded: boolean): Record<string, string> {
  return crowded && env.OMP_NUM_THREADS === undefined ? { OMP_NUM_THREADS: "1" } : {};
}
