/* The same measures as pingpong.ts, in C over MPICH (with the argument "latency": the 8 B
   ping-pong and the idle wait only). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
/* CPU time of this process (user + system), seconds. */
static double cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int latency = argc > 1 && strcmp(argv[1], "latency") == 0;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int sizes[] = {8, 64, 1024, 16384, 262144, 1048576, 4194304};
  char *buf = malloc(4194304);
  if (size >= 2 && rank < 2) {
    int peer = 1 - rank;
    for (int s = 0; s < (latency ? 1 : 7); s++) {
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
  if (latency) {
    /* The idle wait of pingpong.ts: rank 0 sleeps, then sends 8 B; rank 1 waits in MPI_Recv. */
    enum { WAITS = 20, WAIT_MS = 5 };
    if (rank == 0) {
      double rtt[WAITS];
      for (int i = 0; i < WAITS; i++) {
        usleep(WAIT_MS * 1000);
        double t = MPI_Wtime();
        MPI_Send(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        rtt[i] = (MPI_Wtime() - t) * 1e6;
      }
      qsort(rtt, WAITS, sizeof rtt[0], cmp);
      printf("wait ms=%d rtt_us=%.2f\n", WAIT_MS, rtt[WAITS / 2]);
    } else if (rank == 1) {
      double used = 0, wall = 0;
      for (int i = 0; i < WAITS; i++) {
        double c0 = cpu(), t = MPI_Wtime();
        MPI_Recv(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        wall += MPI_Wtime() - t;
        used += cpu() - c0;
        MPI_Send(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
      printf("cpu wait ms=%d rank=1 pct=%.1f\n", WAIT_MS, used / wall * 100);
    }
  } else {
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
  }
  MPI_Finalize();
  return 0;
}
