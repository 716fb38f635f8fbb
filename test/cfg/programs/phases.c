/*
 * MPI program with two phases of known shape, for CFG monitoring (the C twin of phases.ts):
 *   A: compute-heavy — busy compute, then a small MPI_Allreduce and an MPI_Bcast;
 *   B: communication-heavy — a little compute, then a ring exchange (even ranks send first, odd
 *      ranks receive first) of a large buffer and an MPI_Alltoall.
 * Measures its own MPI and compute time per phase from the second iteration on and prints them
 * with a checksum of everything it received: "@{json}".
 * argv: itersA itersB computeA_ms computeB_ms ringBytes
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static volatile double sink;
static void compute(double ms) {
  double until = now_ms() + ms, x = 0;
  while (now_ms() < until) for (int i = 0; i < 100; i++) x += 1e-9 * i;
  sink = x;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int itersA = atoi(argv[1]), itersB = atoi(argv[2]);
  double cA = atof(argv[3]), cB = atof(argv[4]);
  int bytes = atoi(argv[5]), count = bytes / 8;
  double sum = 0, comm[2] = {0, 0}, total[2] = {0, 0}, t0 = 0, c0;

  for (int i = 0; i < itersA; i++) {
    if (i == 1) t0 = now_ms();
    compute(cA);
    double in[4] = {r + i, 1, 2, 3}, out[4];
    c0 = now_ms();
    MPI_Allreduce(in, out, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int b = r == 0 ? i * 2 : -1;
    MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (i > 0) comm[0] += now_ms() - c0;
    sum += out[0] + b;
  }
  total[0] = now_ms() - t0;

  double *ring = malloc(bytes), *got = malloc(bytes);
  double *a2a = malloc(sizeof(double) * 4096 * n), *a2b = malloc(sizeof(double) * 4096 * n);
  for (int k = 0; k < count; k++) ring[k] = r + 1;
  for (int k = 0; k < 4096 * n; k++) a2a[k] = r * 100 + k / 4096;
  int next = (r + 1) % n, prev = (r - 1 + n) % n;
  for (int i = 0; i < itersB; i++) {
    if (i == 1) t0 = now_ms();
    compute(cB);
    c0 = now_ms();
    if (r % 2 == 0) {
      MPI_Send(ring, count, MPI_DOUBLE, next, 5, MPI_COMM_WORLD);
      MPI_Recv(got, count, MPI_DOUBLE, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(got, count, MPI_DOUBLE, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(ring, count, MPI_DOUBLE, next, 5, MPI_COMM_WORLD);
    }
    MPI_Alltoall(a2a, 4096, MPI_DOUBLE, a2b, 4096, MPI_DOUBLE, MPI_COMM_WORLD);
    if (i > 0) comm[1] += now_ms() - c0;
    sum += got[0];
    for (int k = 0; k < n; k++) sum += a2b[k * 4096];
  }
  total[1] = now_ms() - t0;
  printf("@{\"rank\":%d,\"size\":%d,\"job\":\"%s\",\"sum\":%.1f,\"phase\":{\"A\":{\"comm\":%.3f,\"compute\":%.3f},\"B\":{\"comm\":%.3f,\"compute\":%.3f}}}\n", r, n,
         getenv("EBB_JOB_ID") ? getenv("EBB_JOB_ID") : "", sum, comm[0], total[0] - comm[0], comm[1], total[1] - comm[1]);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
