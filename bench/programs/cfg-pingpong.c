/* OSU-style ping-pong (osu_latency's shape) at 16 B and 1 MiB: prints the one-way latency. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int sizes[] = {16, 1048576};
  char *buf = calloc(1, 1048576);
  for (int s = 0; s < 2; s++) {
    int n = sizes[s], reps = n <= 16 ? 20000 : 200, warm = n <= 16 ? 2000 : 20;
    double start = 0;
    for (int i = -warm; i < reps; i++) {
      if (i == 0) start = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
    }
    if (rank == 0) printf("bytes=%d us=%.3f\n", n, (MPI_Wtime() - start) / reps / 2 * 1e6);
  }
  MPI_Finalize();
  return 0;
}
