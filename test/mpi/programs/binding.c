/* Every rank reports the CPUs it may run on (the kernel's Cpus_allowed_list) and the sum of all ranks. */
#include <mpi.h>
#include <stdio.h>
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
  printf("binding rank=%d cpus=%s sum=%d\n", rank, cpus, sum);
  MPI_Finalize();
  return 0;
}
