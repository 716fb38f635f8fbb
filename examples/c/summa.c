/*
 * C = A x B for n x n matrices in mb x mb blocks, 2-D block-cyclic over a pr x pc grid of the
 * ranks (ScaLAPACK's layout), by SUMMA: for each block column k of A (block row k of B), the
 * owners broadcast it along their grid rows (columns), and every rank adds the product to its
 * blocks of C. Malleable with ebb (ebb.h): the safe point is between two panels; a resize writes
 * A, B, C and the next panel, and the program goes on at the new size, on ebb_grid's grid, with
 * the blocks redistributed. Every element of C sums its products in the same order at any size,
 * so `checksum <hex>` equals the fixed-size run's after any resizes.
 *
 *   ebb mpicc -O2 -o summa examples/c/summa.c
 *   mpiexec -n 2 ./summa --n 384 --mb 16
 *   ebb run -N 2 --elastic --min-nodes 1 --max-nodes 4 ./summa --n 384 --mb 16 --sleep-ms 50
 *
 * Flags: --n N, --mb B (block size), --every E (print "panel K on P ranks" every E panels),
 * --sleep-ms S (per panel, to watch it), --checkpoint-every C (periodic checkpoints),
 * --stall-at K --stall-ms S (once, at panel K, S ms without a safe point).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ebb.h"

typedef struct {
  long long n, mb, panel;
} state_t;

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

/* Local index -> global index in a 1-D block-cyclic distribution (blocks of nb over np, position p). */
static long long global_of(long long l, long long nb, int p, int np) { return (l / nb * np + p) * nb + l % nb; }

static void die(const char *what) {
  fprintf(stderr, "summa: %s: %s\n", what, ebb_strerror());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static double *take(const char *name) {
  ebb_array a;
  if (ebb_restored(name, &a) != EBB_OK) die("ebb_restored");
  return a.data;
}

int main(int argc, char **argv) {
  long long n = 256, mb = 16, every = 0, stall_at = -1;
  long sleep = 0, stall_ms = 0;
  int ckpt = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--n")) n = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--mb")) mb = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--every")) every = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--sleep-ms")) sleep = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--checkpoint-every")) ckpt = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--stall-at")) stall_at = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--stall-ms")) stall_ms = atol(argv[i + 1]);
    else {
      fprintf(stderr, "summa: unknown flag %s (--n --mb --every --sleep-ms --checkpoint-every --stall-at --stall-ms)\n", argv[i]);
      return 2;
    }
  }
  ebb_info info;
  if (ebb_init(&argc, &argv, &info) != EBB_OK) {
    fprintf(stderr, "summa: ebb_init: %s\n", ebb_strerror());
    return 1;
  }
  int rank = info.rank, size = info.size, pr, pc;
  if (ckpt > 0) ebb_checkpoint_every(ckpt);
  ebb_grid(size, &pr, &pc);
  int prow = rank / pc, pcol = rank % pc;
  ebb_array desc = {"A", NULL, sizeof(double), EBB_BLOCK_CYCLIC_2D, n, n, (int)mb, (int)mb, pr, pc};
  /* Local shape: rows of my grid row, columns of my grid column. */
  long long blocks = n / mb, rem = n % mb;
  long long rows = blocks / pr * mb + (prow < blocks % pr ? mb : prow == blocks % pr ? rem : 0);
  long long cols = blocks / pc * mb + (pcol < blocks % pc ? mb : pcol == blocks % pc ? rem : 0);
  state_t st = {n, mb, 0};
  double *A, *B, *C;
  if (info.resumed) {
    memcpy(&st, info.state, sizeof st);
    if (st.n != n || st.mb != mb) {
      if (rank == 0) fprintf(stderr, "summa: the checkpoint is of n = %lld, mb = %lld\n", st.n, st.mb);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    A = take("A"), B = take("B"), C = take("C");
    if (rank == 0) printf("summa: resumed panel %lld on %d ranks (%dx%d grid, was %d ranks)\n", st.panel, size, pr, pc, info.old_size), fflush(stdout);
  } else {
    A = malloc(sizeof(double) * (size_t)(rows * cols + 1));
    B = malloc(sizeof(double) * (size_t)(rows * cols + 1));
    C = calloc((size_t)(rows * cols + 1), sizeof(double));
    for (long long i = 0; i < rows; i++)
      for (long long j = 0; j < cols; j++) {
        long long gi = global_of(i, mb, prow, pr), gj = global_of(j, mb, pcol, pc);
        A[i * cols + j] = (double)((gi * 7 + gj * 3) % 17) / 16.0 - 0.5;
        B[i * cols + j] = (double)((gi * 5 + gj * 11) % 13) / 12.0 - 0.5;
      }
  }
  MPI_Comm row_comm, col_comm;
  MPI_Comm_split(MPI_COMM_WORLD, prow, pcol, &row_comm);
  MPI_Comm_split(MPI_COMM_WORLD, pcol, prow, &col_comm);
  double *apanel = malloc(sizeof(double) * (size_t)(rows * mb + 1)), *bpanel = malloc(sizeof(double) * (size_t)(mb * cols + 1));
  long long panels = (n + mb - 1) / mb;
  for (; st.panel < panels; st.panel++) {
    ebb_array arrays[3] = {desc, desc, desc};
    arrays[0].data = A, arrays[1].name = "B", arrays[1].data = B, arrays[2].name = "C", arrays[2].data = C;
    for (int k = 0; k < 3; k++) ebb_register(&arrays[k]);
    ebb_register_state(&st, sizeof st);
    if (ebb_probe_adapt() && ebb_adapt() != EBB_OK && rank == 0) fprintf(stderr, "summa: the resize failed, going on: %s\n", ebb_strerror());
    if (every > 0 && st.panel % every == 0 && rank == 0) printf("summa: panel %lld on %d ranks\n", st.panel, size), fflush(stdout);
    long long k = st.panel, width = k < panels - 1 || rem == 0 ? mb : rem;
    int owner_col = (int)(k % pc), owner_row = (int)(k % pr);
    long long lk_col = k / pc * mb, lk_row = k / pr * mb;
    if (pcol == owner_col)
      for (long long i = 0; i < rows; i++) memcpy(apanel + i * width, A + i * cols + lk_col, sizeof(double) * (size_t)width);
    if (prow == owner_row) memcpy(bpanel, B + lk_row * cols, sizeof(double) * (size_t)(width * cols));
    MPI_Bcast(apanel, (int)(rows * width), MPI_DOUBLE, owner_col, row_comm);
    MPI_Bcast(bpanel, (int)(width * cols), MPI_DOUBLE, owner_row, col_comm);
    for (long long i = 0; i < rows; i++)
      for (long long kk = 0; kk < width; kk++) {
        double a = apanel[i * width + kk];
        for (long long j = 0; j < cols; j++) C[i * cols + j] += a * bpanel[kk * cols + j];
      }
    long pause = sleep + (st.panel == stall_at ? stall_ms : 0);
    if (pause > 0) {
      struct timespec t = {pause / 1000, (pause % 1000) * 1000000L};
      nanosleep(&t, NULL);
    }
  }
  uint64_t mine = 0, all = 0;
  for (long long i = 0; i < rows; i++)
    for (long long j = 0; j < cols; j++) {
      uint64_t bits;
      memcpy(&bits, &C[i * cols + j], sizeof bits);
      mine += mix(((uint64_t)global_of(i, mb, prow, pr) * (uint64_t)n + (uint64_t)global_of(j, mb, pcol, pc)) ^ mix(bits));
    }
  MPI_Reduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("checksum %016llx\n", (unsigned long long)all), fflush(stdout);
  MPI_Comm_free(&row_comm);
  MPI_Comm_free(&col_comm);
  free(A), free(B), free(C), free(apanel), free(bpanel);
  ebb_finalize();
  return 0;
}
