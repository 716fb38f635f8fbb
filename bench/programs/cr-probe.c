/*
 * ebb_probe_adapt() with nothing pending, in a rank ebb runs elastic (its probe slot mapped): ns
 * per call over N calls. Baseline, same loop: a call of a function that stores its argument in
 * shared memory, not inlined (the least a probe can be).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "ebb.h"

static volatile int sink_word;
__attribute__((noinline)) static int plain(int c) {
  sink_word = c;
  return 0;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 10000000;
  ebb_info info;
  if (ebb_init(&argc, &argv, &info) != EBB_OK) {
    fprintf(stderr, "ebb_init: %s\n", ebb_strerror());
    return 1;
  }
  int pending = 0;
  double best = 1e30, base = 1e30;
  for (int trial = 0; trial < 5; trial++) {
    double t0 = now();
    for (long i = 0; i < n; i++) pending |= ebb_probe_adapt();
    double t1 = now();
    for (long i = 0; i < n; i++) pending |= plain((int)i);
    double t2 = now();
    if ((t1 - t0) / n < best) best = (t1 - t0) / n;
    if ((t2 - t1) / n < base) base = (t2 - t1) / n;
  }
  printf("elastic=%d pending=%d probe_ns=%.2f call_ns=%.2f\n", info.elastic, pending, best, base);
  return ebb_finalize();
}
