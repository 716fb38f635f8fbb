/* The loopback's own figure for bench/comm-tcp.ts: the ping-pong of programs/tcp-pingpong.ts in C,
 * two processes (fork) over one TCP connection on 127.0.0.1 (TCP_NODELAY, the kernel's buffer
 * autotuning, blocking send and recv(MSG_WAITALL) into the same buffer). Prints the same lines:
 * "pingpong bytes=N us=ONE_WAY" and "cpu pingpong bytes=N rank=R pct=P". */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void rd(int fd, char *b, size_t n) {
  for (size_t g = 0; g < n;) { ssize_t r = recv(fd, b + g, n - g, MSG_WAITALL); if (r <= 0) { perror("recv"); exit(1); } g += r; }
}
static void wr(int fd, const char *b, size_t n) {
  for (size_t g = 0; g < n;) { ssize_t r = send(fd, b + g, n - g, 0); if (r <= 0) { perror("send"); exit(1); } g += r; }
}

int main(void) {
  const size_t sizes[] = {65536, 1048576, 4194304};
  int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(ls, (void *)&a, sizeof a) || listen(ls, 1) || getsockname(ls, (void *)&a, &len)) { perror("listen"); return 1; }
  pid_t child = fork();
  int rank = child == 0 ? 1 : 0, s;
  if (rank == 1) {
    s = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(s, (void *)&a, sizeof a)) { perror("connect"); return 1; }
  } else s = accept(ls, 0, 0);
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  char *buf = malloc(4194304);
  memset(buf, 1, 4194304);
  for (int k = 0; k < 3; k++) {
    size_t n = sizes[k];
    int reps = n >= 1048576 ? 60 : 400;
    double t0 = 0, c0 = 0;
    for (int i = 0; i < reps + 20; i++) {
      if (i == 20) { t0 = now(CLOCK_MONOTONIC); c0 = now(CLOCK_PROCESS_CPUTIME_ID); }
      if (rank == 0) { wr(s, buf, n); rd(s, buf, n); } else { rd(s, buf, n); wr(s, buf, n); }
    }
    double t = now(CLOCK_MONOTONIC) - t0, c = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    if (rank == 0) printf("pingpong bytes=%zu us=%.2f\n", n, t / reps / 2 * 1e6);
    printf("cpu pingpong bytes=%zu rank=%d pct=%.0f\n", n, rank, c / t * 100);
    fflush(stdout);
  }
  if (rank == 0) wait(0);
  return 0;
}
