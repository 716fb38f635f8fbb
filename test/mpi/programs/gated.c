/* Writes waiting.RANK, waits for the file "go", then MPI_Init + MPI_Barrier, then writes done.RANK. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void touch(const char *what, const char *rank) {
  char path[64];
  snprintf(path, sizeof path, "%s.%s", what, rank);
  FILE *f = fopen(path, "w");
  if (f) fclose(f);
}

int main(int argc, char **argv) {
  const char *rank = getenv("PMI_RANK");
  if (!rank) return 2;
  touch("waiting", rank);
  while (access("go", F_OK) != 0) usleep(2000);
  MPI_Init(&argc, &argv);
  MPI_Barrier(MPI_COMM_WORLD);
  touch("done", rank);
  MPI_Finalize();
  return 0;
}
