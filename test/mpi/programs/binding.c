/*
 * Every rank reports the CPUs it may run on (the kernel's Cpus_allowed_list), the OpenMP threads
 * its runtime would start (omp_get_max_threads: OMP_NUM_THREADS, else the CPUs it may run on),
 * and the sum of all ranks.
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  char line[256], cpus[256] = "?";
  FILE *f = fopen("/proc/self/status", "r");
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "Cpus_allowed_list: %255s", cpus) == 1) break;
  if (f) fclose(f);
  const char *omp = getenv("OMP_NUM_THREADS");
  printf("binding rank=%d cpus=%s threads=%d omp=%s sum=%d\n", rank, cpus, omp_get_max_threads(), omp ? omp : "-", sum);
  MPI_Finalize();
  return 0;
}
