/* pingpong-rtt.ts in C over MPICH: the 8 B ping-pong, rank 0 timing each round trip; prints
   "rtt p10=N p50=M p90=. p99=. mean=." (ns), the baseline of bench/_comm-rtt-ab.ts. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
enum { N = 20000, WARM = 100000 };
static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  static double rtt[N];
  char buf[8] = {0}, into[8];
  int peer = 1 - rank;
  for (int i = -WARM; i < N; i++) {
    if (rank == 0) {
      double t = now_ns();
      MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(into, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (i >= 0) rtt[i] = now_ns() - t;
    } else {
      MPI_Recv(into, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) {
    double sum = 0, slow_ns = 0;
    int slow = 0;
    for (int i = 0; i < N; i++) {
      sum += rtt[i];
      if (rtt[i] > 20000) slow++, slow_ns += rtt[i]; /* a preemption, as pingpong-rtt.ts counts */
    }
    qsort(rtt, N, sizeof rtt[0], cmp);
    printf("rtt p10=%.0f p50=%.0f p90=%.0f p99=%.0f mean=%.0f\n", rtt[N / 10], rtt[N / 2], rtt[N * 9 / 10], rtt[N * 99 / 100], sum / N);
    printf("slow>20us n=%d ms=%.2f max_us=%.0f\n", slow, slow_ns / 1e6, rtt[N - 1] / 1000);
  }
  MPI_Finalize();
  return 0;
}
