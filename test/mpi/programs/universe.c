/* What a program sees of MPI_UNIVERSE_SIZE before it would spawn: whether it is set, and to what. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int rank, size, flag = 0, *universe = NULL;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag);
  printf("universe rank=%d size=%d set=%d universe=%d\n", rank, size, flag, flag ? *universe : -1);
  MPI_Finalize();
  return 0;
}
