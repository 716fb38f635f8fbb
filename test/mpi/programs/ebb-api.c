/* libebb's refusals: each call's return code and message, one line each (rank 0). */
#include <mpi.h>
#include <stdio.h>
#include "ebb.h"

static void say(const char *what, int rc) {
  printf("%s rc=%d %s\n", what, rc, rc == EBB_OK ? "ok" : ebb_strerror());
}

int main(int argc, char **argv) {
  ebb_info info;
  int rc = ebb_init(&argc, &argv, &info);
  if (rc != EBB_OK) {
    fprintf(stderr, "ebb_init: %s\n", ebb_strerror());
    return 1;
  }
  double x[4] = {0};
  ebb_array bad_name = {"no spaces", x, 8, EBB_BLOCK, 4, 1, 0, 0, 0, 0};
  ebb_array bad_grid = {"m", x, 8, EBB_BLOCK_CYCLIC_2D, 4, 4, 2, 2, 3, 3};
  ebb_array good = {"v", x, 8, EBB_BLOCK, 4L * info.size, 1, 0, 0, 0, 0};
  if (info.rank == 0) {
    say("name", ebb_register(&bad_name));
    say("grid", ebb_register(&bad_grid));
    say("good", ebb_register(&good));
    say("adapt", ebb_adapt());
    say("restored", ebb_restored("v", &good));
    int pr, pc;
    ebb_grid(12, &pr, &pc);
    printf("grid12 %dx%d\n", pr, pc);
  }
  return ebb_finalize();
}
