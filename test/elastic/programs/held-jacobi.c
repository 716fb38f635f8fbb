/*
 * examples/c/jacobi.c, whose checkpoint-restart steps a test can hold (checkpoint-restart.test.ts):
 * a rank holds until the file its environment names exists, having created that name + ".held"
 * (so the test knows). Nothing of ebb is changed: the holds are the program's own MPI calls (the
 * MPI profiling interface, which libebb's calls in this executable go through too).
 *
 *   EBB_TEST_HOLD_WRITE=F  rank 0 holds inside a resize's write (ebb_adapt(): its part written, the
 *                          manifest not yet; libebb gathers the parts' names with MPI_Gather)
 *   EBB_TEST_HOLD_PERIODIC=F  rank 0 holds likewise inside the second periodic checkpoint it writes
 *   EBB_TEST_HOLD_READ=F   a restarted rank (EBB_ADAPT_STATUS=joining) on the world's last rank holds
 *                          once the resize's checkpoint was read and its parts removed (libebb's
 *                          second MPI_Barrier of the read), before the window that commits the restart
 *   EBB_TEST_PACE=F        the program's sleeps (--sleep-ms, --stall-ms) end once F exists: a test
 *                          paces the run (or stalls it) only until it has seen what it waits for,
 *                          and the rest runs at full speed, to the same checksum
 *
 * Under mpiexec nothing is pending or restarted: it is jacobi, to the same checksum.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ebb.h"

static int writing;

/* Holds until the file `name` in the environment exists (none named, or there already: no hold). */
static void hold(const char *name) {
  const char *gate = getenv(name);
  if (!gate || !*gate || access(gate, F_OK) == 0) return;
  char held[4096];
  snprintf(held, sizeof held, "%s.held", gate);
  FILE *f = fopen(held, "w");
  if (f) fclose(f);
  while (access(gate, F_OK) != 0) nanosleep(&(struct timespec){0, 50000000L}, NULL);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  int rank;
  PMPI_Comm_rank(comm, &rank);
  static int periodic;
  if (rank == root && writing) hold("EBB_TEST_HOLD_WRITE");
  else if (rank == root && ++periodic == 2) hold("EBB_TEST_HOLD_PERIODIC");
  return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Barrier(MPI_Comm comm) {
  static int barriers;
  int rc = PMPI_Barrier(comm);
  const char *status = getenv("EBB_ADAPT_STATUS");
  int rank, size;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  if (++barriers == 2 && status && !strcmp(status, "joining") && rank == size - 1) hold("EBB_TEST_HOLD_READ");
  return rc;
}

static int held_adapt(void) {
  writing = 1;
  int rc = ebb_adapt();
  writing = 0;
  return rc;
}

/* Sleeps in slices of at most 50 ms, looking for the gate between them. */
static int paced_nanosleep(const struct timespec *t, struct timespec *rem) {
  const char *gate = getenv("EBB_TEST_PACE");
  if (!gate || !*gate) return nanosleep(t, rem);
  long long left = (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
  while (left > 0 && access(gate, F_OK) != 0) {
    long long slice = left < 50000000LL ? left : 50000000LL;
    nanosleep(&(struct timespec){0, slice}, NULL);
    left -= slice;
  }
  return 0;
}

#define ebb_adapt held_adapt
#define nanosleep paced_nanosleep
#include "../../../examples/c/jacobi.c"
