/* The C detector's cost per call in verification mode: a loop over SIZE call sites (fake return
 * addresses), detected, then run; against the same loop without the step. argv: size calls */
#include "../../src/cfg/c/ebbcfg.c"

/* CPU time of this process: on a shared, overloaded machine wall time also counts the time the
 * process waited for a core. */
static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  int size = atoi(argv[1]);
  long calls = atol(argv[2]);
  setenv("EBB_CFG_FILE", "/dev/null", 1);
  setenv("EBB_SAMPLE_INTERVAL", "1e9", 1);
  start();
  D.file = NULL; /* measure the detector, not the writes */
  uintptr_t *sites = malloc(sizeof(uintptr_t) * size);
  for (int i = 0; i < size; i++) sites[i] = 0x100000 + (uintptr_t)i * 64;
  double t = 0;
  for (long i = 0; i < size * 4L; i++) ebb_step(sites[i % size], T_P2P, t += 10, t + 5);
  volatile double sink = 0;
  double best = 1e30, base = 1e30, bestCpu = 1e30, baseCpu = 1e30;
  for (int r = 0; r < 5; r++) {
    double t0 = now_ns(), c0 = cpu_ns();
    for (long i = 0; i < calls; i++) ebb_step(sites[i % size], T_P2P, t += 10, t + 5);
    double dt = (now_ns() - t0) / calls, dc = (cpu_ns() - c0) / calls;
    if (dt < best) best = dt;
    if (dc < bestCpu) bestCpu = dc;
    t0 = now_ns();
    c0 = cpu_ns();
    for (long i = 0; i < calls; i++) sink += (double)sites[i % size] + (t += 10);
    dt = (now_ns() - t0) / calls;
    dc = (cpu_ns() - c0) / calls;
    if (dt < base) base = dt;
    if (dc < baseCpu) baseCpu = dc;
  }
  printf("size=%d step_ns=%.2f empty_ns=%.2f step_cpu_ns=%.2f empty_cpu_ns=%.2f nodes=%d\n", size, best, base, bestCpu, baseCpu, D.size);
  return 0;
}
