/*
 * Every rank reports where it runs, as Slurm's variables and as MPICH sees it: the size of its
 * node's shared-memory communicator and the lowest world rank in it (MPICH builds it from
 * PMI_process_mapping), and the sum of all ranks (MPI_Allreduce across the nodes).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static const char *env(const char *name) {
  const char *v = getenv(name);
  return v ? v : "?";
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, sum = 0, local, localSize, lowest;
  MPI_Comm node;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_size(node, &localSize);
  MPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, node);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("where rank=%d size=%d sum=%d node=%s nodeid=%s procid=%s localid=%s gtids=%s dist=%s mpilocal=%d mpilocalsize=%d lowest=%d\n", rank, size, sum, env("EBB_NODENAME"),
         env("SLURM_NODEID"), env("SLURM_PROCID"), env("SLURM_LOCALID"), env("SLURM_GTIDS"), env("SLURM_DISTRIBUTION"), local, localSize, lowest);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return 0;
}
