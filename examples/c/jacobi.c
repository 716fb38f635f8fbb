/*
 * Jacobi iteration on an n x n grid (the top edge held at 1, the rest of the edge at 0), rows in
 * blocks over the ranks, malleable with ebb (ebb.h): at every iteration's safe point a pending
 * resize writes the grid and the iteration count, and the program goes on at the new size from
 * there. Every point's update is the same arithmetic at any size, so the result is the same bit
 * for bit: the last line, `checksum <hex>`, equals the fixed-size run's after any resizes.
 *
 *   ebb mpicc -O2 -o jacobi examples/c/jacobi.c
 *   mpiexec -n 2 ./jacobi --n 512 --iters 2000
 *   ebb run -N 2 --elastic --min-nodes 1 --max-nodes 4 ./jacobi --n 512 --iters 2000
 *
 * Flags: --n N, --iters K, --every E (print "iteration I on P ranks" every E iterations),
 * --sleep-ms S (per iteration, to watch it), --checkpoint-every C (periodic checkpoints, for
 * restarts after a node is lost), --stall-at I --stall-ms S (once, at iteration I, compute S ms
 * without reaching a safe point).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ebb.h"

typedef struct {
  long long n, iters, iteration;
} state_t;

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

/* The sum of every point's hash of (index, bits): the same whatever rank holds the point. */
static uint64_t checksum(const double *u, long long first, long long rows, long long n) {
  uint64_t h = 0;
  for (long long i = 0; i < rows; i++)
    for (long long j = 0; j < n; j++) {
      uint64_t bits;
      memcpy(&bits, &u[i * n + j], sizeof bits);
      h += mix(((uint64_t)(first + i) * (uint64_t)n + (uint64_t)j) ^ mix(bits));
    }
  return h;
}

static void die(const char *what) {
  fprintf(stderr, "jacobi: %s: %s\n", what, ebb_strerror());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
  long long n = 256, iters = 1000, every = 0, stall_at = -1;
  long sleep = 0, stall_ms = 0;
  int ckpt = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "jacobi: %s needs a value\n", a);
      return 2;
    } else if (!strcmp(a, "--n")) n = atoll(v), i++;
    else if (!strcmp(a, "--iters")) iters = atoll(v), i++;
    else if (!strcmp(a, "--every")) every = atoll(v), i++;
    else if (!strcmp(a, "--sleep-ms")) sleep = atol(v), i++;
    else if (!strcmp(a, "--checkpoint-every")) ckpt = atoi(v), i++;
    else if (!strcmp(a, "--stall-at")) stall_at = atoll(v), i++;
    else if (!strcmp(a, "--stall-ms")) stall_ms = atol(v), i++;
    else {
      fprintf(stderr, "jacobi: unknown flag %s (--n --iters --every --sleep-ms --checkpoint-every --stall-at --stall-ms)\n", a);
      return 2;
    }
  }
  ebb_info info;
  if (ebb_init(&argc, &argv, &info) != EBB_OK) {
    fprintf(stderr, "jacobi: ebb_init: %s\n", ebb_strerror());
    return 1;
  }
  int rank = info.rank, size = info.size;
  if (n < 3 || n < size) {
    if (rank == 0) fprintf(stderr, "jacobi: --n %lld is too small for %d ranks\n", n, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (ckpt > 0) ebb_checkpoint_every(ckpt);
  long long first, rows;
  ebb_block_rows(n, size, rank, &first, &rows);
  state_t st = {n, iters, 0};
  double *u, *v = malloc(sizeof(double) * (size_t)(rows * n));
  if (info.resumed) {
    ebb_array a;
    if (ebb_restored("u", &a) != EBB_OK) die("ebb_restored");
    u = a.data;
    memcpy(&st, info.state, sizeof st);
    if (st.n != n) {
      if (rank == 0) fprintf(stderr, "jacobi: the checkpoint is of n = %lld, not %lld\n", st.n, n);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) printf("jacobi: resumed iteration %lld on %d ranks (was %d)\n", st.iteration, size, info.old_size), fflush(stdout);
  } else {
    u = calloc((size_t)(rows * n), sizeof(double));
    for (long long j = 0; j < n && first == 0; j++) u[j] = 1.0;
  }
  double *above = calloc((size_t)n, sizeof(double)), *below = calloc((size_t)n, sizeof(double));
  int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  for (; st.iteration < st.iters; st.iteration++) {
    ebb_array a = {"u", u, sizeof(double), EBB_BLOCK, n, n, 0, 0, 0, 0};
    ebb_register(&a);
    ebb_register_state(&st, sizeof st);
    if (ebb_probe_adapt() && ebb_adapt() != EBB_OK && rank == 0) fprintf(stderr, "jacobi: the resize failed, going on: %s\n", ebb_strerror());
    if (every > 0 && st.iteration % every == 0 && rank == 0) printf("jacobi: iteration %lld on %d ranks\n", st.iteration, size), fflush(stdout);
    if (st.iteration == stall_at) sleep_ms(stall_ms);
    MPI_Sendrecv(u, (int)n, MPI_DOUBLE, up, 0, below, (int)n, MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(u + (rows - 1) * n, (int)n, MPI_DOUBLE, down, 1, above, (int)n, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (long long i = 0; i < rows; i++) {
      long long g = first + i;
      const double *n_ = i > 0 ? u + (i - 1) * n : above, *s_ = i < rows - 1 ? u + (i + 1) * n : below;
      for (long long j = 0; j < n; j++) {
        if (g == 0 || g == n - 1 || j == 0 || j == n - 1) v[i * n + j] = u[i * n + j];
        else v[i * n + j] = 0.25 * (n_[j] + s_[j] + u[i * n + j - 1] + u[i * n + j + 1]);
      }
    }
    double *t = u;
    u = v, v = t;
    if (sleep > 0) sleep_ms(sleep);
  }
  uint64_t mine = checksum(u, first, rows, n), all = 0;
  MPI_Reduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("checksum %016llx\n", (unsigned long long)all), fflush(stdout);
  free(u), free(v), free(above), free(below);
  ebb_finalize();
  return 0;
}
