/* Every rank reports where it runs and the sum of all ranks (MPI_Allreduce). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const char *node = getenv("EBB_NODENAME");
  printf("hello rank=%d size=%d sum=%d node=%s\n", rank, size, sum, node ? node : "?");
  MPI_Finalize();
  return 0;
}
