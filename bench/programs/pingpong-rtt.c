/* pingpong-rtt.ts in C over MPICH, the same output: the 8 B ping-pong with rank 0 timing each round
   trip, each rank's CPU per round trip, then the idle wait. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
enum { N = 20000, WARM = 100000, WAITS = 20, WAIT_MS = 5 };
static double clock_ns(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}
static double now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
static double cpu_ns(void) { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }
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
  double c0 = 0;
  for (int i = -WARM; i < N; i++) {
    if (i == 0) c0 = cpu_ns();
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
  printf("cpu rank=%d ns_per_rtt=%.0f\n", rank, (cpu_ns() - c0) / N);
  if (rank == 0) {
    double sum = 0, slow_ns = 0;
    int slow = 0;
    for (int i = 0; i < N; i++) {
      sum += rtt[i];
      if (rtt[i] > 20000) slow++, slow_ns += rtt[i];
    }
    double edges[] = {1e3, 2e3, 5e3, 2e4, 1e5, 1e6, 1e300};
    int cnt[7] = {0};
    double in[7] = {0};
    for (int i = 0; i < N; i++) {
      int k = 0;
      while (rtt[i] >= edges[k]) k++;
      cnt[k]++, in[k] += rtt[i];
    }
    printf("hist");
    for (int k = 0; k < 7; k++) {
      if (k < 6) printf(" <%gus:%d/%.0f", edges[k] / 1000, cnt[k], in[k] / N);
      else printf(" >=1ms:%d/%.0f", cnt[k], in[k] / N);
    }
    printf("\n");
    qsort(rtt, N, sizeof rtt[0], cmp);
    printf("slow>20us n=%d ms=%.2f max_us=%.0f\n", slow, slow_ns / 1e6, rtt[N - 1] / 1000);
    printf("rtt p10=%.0f p50=%.0f p90=%.0f p99=%.0f mean=%.0f\n", rtt[N / 10], rtt[N / 2], rtt[N * 9 / 10], rtt[N * 99 / 100], sum / N);
    double w[WAITS];
    for (int i = 0; i < WAITS; i++) {
      usleep(WAIT_MS * 1000);
      double t = now_ns();
      MPI_Send(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(into, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      w[i] = (now_ns() - t) / 1000;
    }
    qsort(w, WAITS, sizeof w[0], cmp);
    printf("wait ms=%d rtt_us=%.2f\n", WAIT_MS, w[WAITS / 2]);
  } else {
    double used = 0, wall = 0;
    for (int i = 0; i < WAITS; i++) {
      double c = cpu_ns(), t = now_ns();
      MPI_Recv(into, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      wall += now_ns() - t;
      used += cpu_ns() - c;
      MPI_Send(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
    printf("cpu wait ms=%d rank=1 pct=%.1f\n", WAIT_MS, used / wall * 100);
  }
  MPI_Finalize();
  return 0;
}
