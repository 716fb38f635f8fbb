/*
 * Nested communication loops under a time-step loop, for CFG monitoring (test/cfg/mpi-nesting.test.ts).
 * Every step computes (odd ranks twice as long, so even ranks wait in the first exchange), then:
 *   halo: the halo function (exchange with both ring neighbours) three times, then the step's
 *         MPI_Allreduce — the halo loop is nested in the time step by its head;
 *   two:  a loop of 3 neighbour exchanges, a loop of 4 small allreduces, then the step's
 *         MPI_Allreduce — two distributed loops in the time step's body;
 *   rec:  a recursive exchange (depth 3: sendrecv, recurse, allreduce at every level), then the
 *         step's MPI_Allreduce.
 * Measures its own MPI time (every call) and compute time from the second step on and prints
 * "@{json}". argv: mode steps compute_ms bytes
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int rank, size, count;
static double *out, *in, mpi_ms;

#define TIMED(call)                 \
  do {                              \
    double t0_ = now_ms();          \
    call;                           \
    mpi_ms += now_ms() - t0_;       \
  } while (0)

static void halo(void) {
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  TIMED(MPI_Sendrecv(out, count, MPI_DOUBLE, next, 1, in, count, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  TIMED(MPI_Sendrecv(out, count, MPI_DOUBLE, prev, 2, in, count, MPI_DOUBLE, next, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

static double rec(int depth) {
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  double x = depth, y = 0;
  TIMED(MPI_Sendrecv(out, count, MPI_DOUBLE, next, 3, in, count, MPI_DOUBLE, prev, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  if (depth > 0) x += rec(depth - 1);
  TIMED(MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  return y;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 5) {
    if (rank == 0) fprintf(stderr, "usage: nest halo|two|rec steps compute_ms bytes\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char *mode = argv[1];
  int steps = atoi(argv[2]);
  double c = atof(argv[3]) * (rank % 2 ? 2 : 1);
  count = atoi(argv[4]) / 8;
  out = calloc(count, 8);
  in = calloc(count, 8);
  double t0 = 0, sum = 0, dt;
  for (int s = 0; s < steps; s++) {
    if (s == 1) {
      t0 = now_ms();
      mpi_ms = 0;
    }
    compute(c);
    if (!strcmp(mode, "halo")) {
      halo();
      halo();
      halo();
    } else if (!strcmp(mode, "two")) {
      for (int i = 0; i < 3; i++) halo();
      for (int j = 0; j < 4; j++) {
        double x = j, y;
        TIMED(MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        sum += y;
      }
    } else
      sum += rec(3);
    double local = in[0] + s;
    TIMED(MPI_Allreduce(&local, &dt, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    sum += dt;
  }
  double total = now_ms() - t0;
  printf("@{\"rank\":%d,\"size\":%d,\"job\":\"%s\",\"sum\":%.1f,\"comm\":%.3f,\"compute\":%.3f}\n", rank, size, getenv("EBB_JOB_ID") ? getenv("EBB_JOB_ID") : "", sum,
         mpi_ms, total - mpi_ms);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
