// libebb from C++ (extern "C" in ebb.h): a registered std::vector, one safe point.
#include <mpi.h>
#include <cstdio>
#include <vector>
#include "ebb.h"

int main(int argc, char **argv) {
  ebb_info info;
  if (ebb_init(&argc, &argv, &info) != EBB_OK) {
    std::fprintf(stderr, "ebb_init: %s\n", ebb_strerror());
    return 1;
  }
  std::vector<double> u(10, 1.0 + info.rank);
  ebb_array a = {"u", u.data(), sizeof(double), EBB_BLOCK, 10LL * info.size, 1, 0, 0, 0, 0};
  int rc = ebb_register(&a);
  int pending = ebb_probe_adapt();
  std::printf("c++ rank=%d size=%d register=%d pending=%d\n", info.rank, info.size, rc, pending);
  return ebb_finalize();
}
