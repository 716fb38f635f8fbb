/*
 * Point-to-point around a ring, and collectives on MPI_COMM_WORLD, on an even/odd split and on a
 * duplicate. Each rank checks every result itself and prints "ok" or what went wrong.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#define FAIL(...) do { printf("bad rank=%d: ", rank); printf(__VA_ARGS__); printf("\n"); MPI_Abort(MPI_COMM_WORLD, 3); } while (0)
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* ring: pass a token around, each rank adds its rank */
  int token = 0;
  if (size > 1) {
    if (rank == 0) {
      token = 0;
      MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
      MPI_Recv(&token, 1, MPI_INT, size - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (token != size * (size - 1) / 2) FAIL("ring token %d", token);
    } else {
      MPI_Recv(&token, 1, MPI_INT, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      token += rank;
      MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD);
    }
  }
  /* sendrecv shift */
  int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
  MPI_Sendrecv(&rank, 1, MPI_INT, right, 9, &got, 1, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (got != left) FAIL("sendrecv got %d want %d", got, left);
  /* bcast, reduce, allgather, alltoall on the world */
  int b = rank == 0 ? 4242 : 0;
  MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (b != 4242) FAIL("bcast %d", b);
  int mx = 0;
  MPI_Reduce(&rank, &mx, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0 && mx != size - 1) FAIL("reduce max %d", mx);
  int *all = malloc(sizeof(int) * size), *out = malloc(sizeof(int) * size), *in = malloc(sizeof(int) * size);
  MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  for (int i = 0; i < size; i++) if (all[i] != i) FAIL("allgather[%d]=%d", i, all[i]);
  for (int i = 0; i < size; i++) out[i] = rank * 100 + i;
  MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
  for (int i = 0; i < size; i++) if (in[i] != i * 100 + rank) FAIL("alltoall[%d]=%d", i, in[i]);
  /* even/odd split: sum of ranks in my half */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  int hrank, hsize, hsum = 0, want = 0;
  MPI_Comm_rank(half, &hrank);
  MPI_Comm_size(half, &hsize);
  MPI_Allreduce(&rank, &hsum, 1, MPI_INT, MPI_SUM, half);
  for (int r = rank % 2; r < size; r += 2) want += r;
  if (hsum != want) FAIL("split sum %d want %d", hsum, want);
  /* a duplicate of the world: prefix sum */
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int scan = 0;
  MPI_Scan(&rank, &scan, 1, MPI_INT, MPI_SUM, dup);
  if (scan != rank * (rank + 1) / 2) FAIL("scan %d", scan);
  MPI_Barrier(dup);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&half);
  printf("ok rank=%d size=%d half=%d/%d\n", rank, size, hrank, hsize);
  MPI_Finalize();
  return 0;
}
