/* Rank 1 calls MPI_Abort(7) after a barrier; everyone else would sleep for a minute. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("pid=%d rank=%d\n", (int)getpid(), rank);
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) MPI_Abort(MPI_COMM_WORLD, 7);
  sleep(60);
  MPI_Finalize();
  return 0;
}
