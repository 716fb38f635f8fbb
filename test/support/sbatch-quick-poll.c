/*
 * Preloaded into the tests' own `sbatch --wait` (LocalSlurm.waitEnv): sbatch 22.05 polls the end of
 * its job with sleep(2) (hard-coded in _job_wait), so every job of a test took a multiple of 2 s.
 * Here sleep(n) lasts n/10 s: the same calls, the same slurmctld answers, asked 10 times as often.
 * LD_PRELOAD is taken out of the environment before main, so the job sbatch submits (which gets
 * sbatch's environment) and every sbatch inside it run as they would without this.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

__attribute__((constructor)) static void not_inherited(void) { unsetenv("LD_PRELOAD"); }

unsigned int sleep(unsigned int seconds) {
  long long ns = (long long)seconds * 100000000LL;
  struct timespec t = { .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };
  nanosleep(&t, NULL);
  return 0;
}
