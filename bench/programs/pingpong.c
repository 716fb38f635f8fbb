/* The same measures as pingpong.ts, in C over MPICH. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
/* CPU time of this process (user + system), seconds. */
static double cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int sizes[] = {8, 64, 1024, 16384, 262144, 1048576, 4194304};
  char *buf = malloc(4194304);
  if (size >= 2 && rank < 2) {
    int peer = 1 - rank;
    for (int s = 0; s < 7; s++) {
      /* Same counts as pingpong.ts: like OSU's osu_latency, many untimed rounds first for small sizes. */
      int n = sizes[s], reps = n <= 16384 ? 20000 : n <= 262144 ? 200 : 40, warm = n <= 16384 ? 100000 : n <= 262144 ? 1000 : 40;
      double start = 0, c0 = 0;
      for (int i = -warm; i < reps; i++) {
        if (i == 0) {
          start = MPI_Wtime();
          c0 = cpu();
        }
        if (rank == 0) {
          MPI_Send(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
          MPI_Recv(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        }
        if (i == reps - 1 && rank == 0) printf("pingpong bytes=%d us=%.2f\n", n, (MPI_Wtime() - start) / reps / 2 * 1e6);
        if (i == reps - 1) printf("cpu pingpong bytes=%d rank=%d pct=%.0f\n", n, rank, (cpu() - c0) / (MPI_Wtime() - start) * 100);
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int asz[] = {8, 1048576};
  for (int s = 0; s < 2; s++) {
    int n = asz[s] / 8, reps = asz[s] <= 8 ? 1000 : 40, warm = asz[s] <= 8 ? 100 : 20;
    double *x = malloc(asz[s]), *y = malloc(asz[s]);
    for (int i = 0; i < n; i++) x[i] = rank;
    for (int i = 0; i < warm; i++) MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), c0 = cpu();
    for (int i = 0; i < reps; i++) MPI_Allreduce(x, y, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("allreduce bytes=%d us=%.2f\n", asz[s], (MPI_Wtime() - t0) / reps * 1e6);
    printf("cpu allreduce bytes=%d rank=%d pct=%.0f\n", asz[s], rank, (cpu() - c0) / (MPI_Wtime() - t0) * 100);
  }
  MPI_Finalize();
  return 0;
}
