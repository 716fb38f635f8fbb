/* Every rank prints its pid, meets the others, then sleeps: a target for kill tests. */
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
  sleep(60);
  MPI_Finalize();
  return 0;
}
