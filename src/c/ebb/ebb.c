/*
 * libebb: checkpoint-restart malleability for MPI programs on a stock MPI (ebb.h says how a
 * program uses it; docs/adaptation.md §12 specifies what it does with the agent and the launcher).
 *
 * - The safe point reads the probe slots the agent maps for the step (EBB_ADAPT_SHM): the rank
 *   stores its call count in its slot, then loads the target word. Only at the target does it ask
 *   its agent (PMI extension command `ebb-probe` on the rank's PMI socket, PMI_FD, which MPICH
 *   leaves idle between its own calls); the agent answers once every rank waits at that call.
 * - A resize's window names every rank staying (the step ends anyway); the window's KVS entry
 *   `ebbcr.a<id>` says how many old ranks keep their node. Each rank writes its part there, rank
 *   0 the manifest, the outcome goes to the launcher as the KVS key `ebbcr.w<id>` (one PMI fence),
 *   every rank commits, and on success exits with EBB_EXIT_RESTART.
 * - The new step's ranks find the checkpoint in their KVS (`ebbcr.resume`, pre-put by the
 *   launcher), load the parts on their node or in the shared directory, and move every piece
 *   straight to its new owner with one MPI_Alltoallv per array.
 *
 * Built by ebb with the node's mpicc (-DEBB_PROTOCOL=<PROTOCOL_VERSION>) into a static library.
 */
#define _GNU_SOURCE
#include "ebb.h"

#include <mpi.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef EBB_PROTOCOL
#error "build with -DEBB_PROTOCOL=<the agent's PROTOCOL_VERSION> (ebb mpicc does)"
#endif

/* Probe slots (src/proto/adapt.ts): int32 words; the target at 0, rank i's count at 16 + 16 i. */
#define TARGET_WORD 0
#define SLOT_WORD(i) (16 + 16 * (i))
#define SLOTS_BYTES (64 + 64 * 256)
#define MAX_LOCAL_RANKS 255
#define PMI_LINE 1024
#define NAME_MAX_LEN 63

typedef struct {
  char name[NAME_MAX_LEN + 1];
  void *data;
  size_t elem;
  int layout;
  long long rows, cols;
  int mb, nb, pr, pc;
} reg_t;

/* A layout as the redistribution sees it. */
typedef struct {
  int kind;
  long long rows, cols;
  int mb, nb, pr, pc, size;
} lay_t;

static struct {
  int inited, rank, size, elastic, joining;
  int pmi_fd;
  char kvs[256];
  volatile int32_t *target, *myslot;
  int count, every, until;
  int pending, adapt_id;
  char node[64], job[32], step[32];
  char root[PATH_MAX];
  char shm[PATH_MAX];
  /* The last periodic checkpoint this job wrote or resumed from (rank 0 removes it after the next). */
  char last_periodic[64];
  reg_t *arrays;
  int narrays, cap;
  const void *state;
  size_t state_bytes;
  size_t reported_bytes;
  ebb_array *restored;
  int nrestored;
  void *rstate;
  size_t rstate_bytes;
  char error[512];
} E = {.pmi_fd = -1};

/* ---- timing (EBB_TIMING=1: rank 0 prints how long each part of a checkpoint took, to stderr) ---- */

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void timing(const char *what, double since) {
  static int on = -1;
  if (on < 0) on = getenv("EBB_TIMING") != NULL;
  if (on && E.rank == 0) fprintf(stderr, "ebb: %s %.1f ms\n", what, (seconds() - since) * 1000);
}

/* ---- errors ---- */

static int fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(E.error, sizeof E.error, fmt, ap);
  va_end(ap);
  return code;
}

const char *ebb_strerror(void) { return E.error[0] ? E.error : "no error"; }

/* ---- PMI-1 on the rank's socket ---- */

static int pmi_send(const char *line) {
  size_t n = strlen(line), at = 0;
  while (at < n) {
    ssize_t w = write(E.pmi_fd, line + at, n - at);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    at += (size_t)w;
  }
  return 0;
}

/* One reply line, without its newline. Byte by byte: nothing after the line may be taken from MPI's own reads. */
static int pmi_recv(char *buf, size_t cap) {
  size_t n = 0;
  for (;;) {
    char c;
    ssize_t r = read(E.pmi_fd, &c, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    if (c == '\n') break;
    if (n + 1 < cap) buf[n++] = c;
  }
  buf[n] = 0;
  return 0;
}

/* The value of `key` in a reply line (backslash escapes undone), or NULL. */
static const char *pmi_get(const char *line, const char *key, char *out, size_t cap) {
  size_t klen = strlen(key);
  const char *p = line;
  while (*p) {
    while (*p == ' ') p++;
    const char *k = p;
    while (*p && *p != '=' && *p != ' ') p++;
    int match = (size_t)(p - k) == klen && strncmp(k, key, klen) == 0;
    if (*p != '=') continue;
    p++;
    size_t n = 0;
    while (*p && *p != ' ') {
      if (*p == '\\' && p[1]) p++;
      if (match && n + 1 < cap) out[n++] = *p;
      p++;
    }
    if (match) {
      out[n] = 0;
      return out;
    }
  }
  return NULL;
}

/* A value escaped for the PMI-1 wire (spaces and backslashes). */
static void pmi_escape(const char *in, char *out, size_t cap) {
  size_t n = 0;
  for (; *in && n + 3 < cap; in++) {
    if (*in == ' ' || *in == '\\') out[n++] = '\\';
    out[n++] = *in == '\n' ? ' ' : *in;
  }
  out[n] = 0;
}

/* Sends `line`, reads the reply into `reply`; EBB_ERR_AGENT with the agent's reason if rc is not 0. */
static int pmi_call(const char *line, char *reply, size_t cap) {
  if (E.pmi_fd < 0) return fail(EBB_ERR_STATE, "no PMI connection to the ebb agent");
  if (pmi_send(line) != 0 || pmi_recv(reply, cap) != 0) return fail(EBB_ERR_AGENT, "lost the PMI connection to the ebb agent");
  char rc[16], msg[256];
  if (pmi_get(reply, "rc", rc, sizeof rc) && strcmp(rc, "0") != 0)
    return fail(EBB_ERR_AGENT, "the ebb agent refused: %s", pmi_get(reply, "msg", msg, sizeof msg) ? msg : reply);
  return EBB_OK;
}

static int kvs_put(const char *key, const char *value) {
  char v[PMI_LINE / 2], line[PMI_LINE], reply[PMI_LINE];
  pmi_escape(value, v, sizeof v);
  snprintf(line, sizeof line, "cmd=put kvsname=%s key=%s value=%s\n", E.kvs, key, v);
  return pmi_call(line, reply, sizeof reply);
}

/* The value of `key` in the step's KVS (pre-put keys too), or an error. */
static int kvs_get(const char *key, char *out, size_t cap) {
  char line[PMI_LINE], reply[PMI_LINE];
  snprintf(line, sizeof line, "cmd=get kvsname=%s key=%s\n", E.kvs, key);
  int rc = pmi_call(line, reply, sizeof reply);
  if (rc != EBB_OK) return rc;
  if (!pmi_get(reply, "value", out, cap)) return fail(EBB_ERR_AGENT, "no value for %s in the agent's answer", key);
  return EBB_OK;
}

static int kvs_fence(void) {
  char reply[PMI_LINE];
  return pmi_call("cmd=barrier_in\n", reply, sizeof reply);
}

/* ---- layouts ---- */

static void block_range(long long rows, int size, int r, long long *first, long long *count) {
  long long base = rows / size, extra = rows % size;
  *first = r * base + (r < extra ? r : extra);
  *count = base + (r < extra ? 1 : 0);
}

void ebb_block_rows(long long rows, int size, int rank, long long *first, long long *count) {
  block_range(rows, size, rank, first, count);
}

static long long numroc(long long n, long long nb, int p, int np) {
  long long blocks = n / nb, count = blocks / np * nb, extra = blocks % np;
  if (p < extra) count += nb;
  else if (p == extra) count += n % nb;
  return count;
}

void ebb_grid(int size, int *pr, int *pc) {
  int r = 1;
  for (int d = 1; (long long)d * d <= size; d++)
    if (size % d == 0) r = d;
  *pr = r;
  *pc = size / r;
}

static long long lay_rows(const lay_t *L, int r) {
  if (L->kind == EBB_BLOCK) {
    long long f, n;
    block_range(L->rows, L->size, r, &f, &n);
    return n;
  }
  return r >= L->pr * L->pc ? 0 : numroc(L->rows, L->mb, r / L->pc, L->pr);
}

static long long lay_cols(const lay_t *L, int r) {
  if (L->kind == EBB_BLOCK) return L->cols;
  return r >= L->pr * L->pc ? 0 : numroc(L->cols, L->nb, r % L->pc, L->pc);
}

static long long lay_count(const lay_t *L, int r) { return lay_rows(L, r) * lay_cols(L, r); }

/* Row i: its owner's grid row (BLOCK: the rank) and local row. */
static void lay_row(const lay_t *L, long long i, int *prow, long long *li) {
  if (L->kind == EBB_BLOCK) {
    long long base = L->rows / L->size, extra = L->rows % L->size;
    long long r = i < extra * (base + 1) ? i / (base + 1) : extra + (i - extra * (base + 1)) / base;
    long long f, n;
    block_range(L->rows, L->size, (int)r, &f, &n);
    *prow = (int)r;
    *li = i - f;
    return;
  }
  *prow = (int)((i / L->mb) % L->pr);
  *li = (i / L->mb / L->pr) * L->mb + i % L->mb;
}

/* Column j: its owner's grid column, local column, and where that owner's run of columns ends. */
static void lay_col(const lay_t *L, long long j, int *pcol, long long *lj, long long *end) {
  if (L->kind == EBB_BLOCK) {
    *pcol = 0;
    *lj = j;
    *end = L->cols;
    return;
  }
  *pcol = (int)((j / L->nb) % L->pc);
  *lj = (j / L->nb / L->pc) * L->nb + j % L->nb;
  long long e = (j / L->nb + 1) * L->nb;
  *end = e < L->cols ? e : L->cols;
}

static int lay_rank(const lay_t *L, int prow, int pcol) { return L->kind == EBB_BLOCK ? prow : prow * L->pc + pcol; }

static lay_t lay_of(const reg_t *a, int size) {
  lay_t L = {a->layout, a->rows, a->cols, a->mb, a->nb, a->pr, a->pc, size};
  return L;
}

size_t ebb_local_count(const ebb_array *a, int rank) {
  if (!a || rank < 0) return 0;
  int size = a->layout == EBB_BLOCK_CYCLIC_2D ? a->pr * a->pc : (E.size > 0 ? E.size : 1);
  lay_t L = {a->layout, a->rows, a->cols, a->mb, a->nb, a->pr, a->pc, size};
  return (size_t)lay_count(&L, rank);
}

/*
 * Every piece of old rank r's part (layout A) and where it goes in layout B: f(q, offset in r's
 * part, offset in q's part, elements), row by row over r's rows, and within a row over r's runs
 * of columns split at B's owners. Senders and receivers walk in the same order.
 */
typedef void (*piece_fn)(void *ctx, int q, long long from, long long to, long long len);

static void walk(const lay_t *A, int r, const lay_t *B, piece_fn f, void *ctx) {
  long long strideA = lay_cols(A, r);
  if (lay_count(A, r) == 0) return;
  long long i0, n, step_rows, block;
  if (A->kind == EBB_BLOCK) {
    block_range(A->rows, A->size, r, &i0, &n);
    block = n;
    step_rows = n;
  } else {
    i0 = (long long)(r / A->pc) * A->mb;
    block = A->mb;
    step_rows = (long long)A->mb * A->pr;
    n = A->rows;
  }
  long long jfirst = A->kind == EBB_BLOCK ? 0 : (long long)(r % A->pc) * A->nb;
  long long jblock = A->kind == EBB_BLOCK ? A->cols : A->nb;
  long long jstep = A->kind == EBB_BLOCK ? A->cols : (long long)A->nb * A->pc;
  long long last = A->kind == EBB_BLOCK ? i0 + n : A->rows;
  for (long long ib = i0; ib < last; ib += step_rows) {
    long long iend = ib + block < last ? ib + block : last;
    for (long long i = ib; i < iend; i++) {
      int ap, bp;
      long long ali, bli;
      lay_row(A, i, &ap, &ali);
      lay_row(B, i, &bp, &bli);
      for (long long jb = jfirst; jb < A->cols; jb += jstep) {
        long long jend = jb + jblock < A->cols ? jb + jblock : A->cols;
        int apc;
        long long alj, aend;
        lay_col(A, jb, &apc, &alj, &aend);
        for (long long j = jb; j < jend;) {
          int bpc;
          long long blj, bend;
          lay_col(B, j, &bpc, &blj, &bend);
          long long e = bend < jend ? bend : jend;
          int q = lay_rank(B, bp, bpc);
          f(ctx, q, ali * strideA + alj + (j - jb), bli * lay_cols(B, q) + blj, e - j);
          j = e;
        }
      }
    }
  }
}

/* ---- files ---- */

/* Writes the pieces one after the other to `path`, through a temporary name renamed into place. */
static int write_parts(const char *path, const void *const *pieces, const size_t *lens, int n) {
  char tmp[PATH_MAX + 16];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return fail(EBB_ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
  for (int k = 0; k < n; k++) {
    const char *p = pieces[k];
    for (size_t at = 0; at < lens[k];) {
      ssize_t w = write(fd, p + at, lens[k] - at);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return fail(EBB_ERR_IO, "cannot write %s: %s", tmp, w == 0 ? "no space" : strerror(e));
      }
      at += (size_t)w;
    }
  }
  if (close(fd) != 0 || rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    return fail(EBB_ERR_IO, "cannot write %s: %s", path, strerror(e));
  }
  return EBB_OK;
}

static int write_file(const char *path, const void *data, size_t bytes) {
  const void *pieces[1] = {data};
  return write_parts(path, pieces, &bytes, 1);
}

/* The file at `path` mapped read-only (no copy: a /dev/shm part's pages are mapped as they are); it must be `want` bytes. */
static int map_file(const char *path, void **data, long long want) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(EBB_ERR_IO, "cannot open %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size != want) {
    close(fd);
    return fail(EBB_ERR_IO, "%s is %lld bytes, the manifest says %lld", path, (long long)st.st_size, want);
  }
  void *p = mmap(NULL, want > 0 ? (size_t)want : 1, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return fail(EBB_ERR_IO, "cannot map %s: %s", path, strerror(errno));
  *data = p;
  return EBB_OK;
}

/* The whole file at `path` (malloc'd) and its size; `want` >= 0: it must be that long. */
static int read_file(const char *path, void **data, size_t *bytes, long long want) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(EBB_ERR_IO, "cannot open %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || (want >= 0 && st.st_size != want)) {
    close(fd);
    return fail(EBB_ERR_IO, "%s is %lld bytes, the manifest says %lld", path, (long long)st.st_size, want);
  }
  char *buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
  if (!buf) {
    close(fd);
    return fail(EBB_ERR_IO, "out of memory reading %s", path);
  }
  for (size_t at = 0; at < (size_t)st.st_size;) {
    ssize_t r = read(fd, buf + at, (size_t)st.st_size - at);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      close(fd);
      free(buf);
      return fail(EBB_ERR_IO, "cannot read %s: %s", path, r == 0 ? "short file" : strerror(errno));
    }
    at += (size_t)r;
  }
  close(fd);
  *data = buf;
  *bytes = (size_t)st.st_size;
  return EBB_OK;
}

static int mkdir_p(const char *path) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s", path);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    if (mkdir(p, 0700) != 0 && errno != EEXIST) return fail(EBB_ERR_IO, "cannot make %s: %s", p, strerror(errno));
    *s = '/';
  }
  if (mkdir(p, 0700) != 0 && errno != EEXIST) return fail(EBB_ERR_IO, "cannot make %s: %s", p, strerror(errno));
  return EBB_OK;
}

/* Removes a checkpoint directory: its files, then itself (nothing below it is a directory). */
static void remove_dir(const char *path) {
  DIR *d = opendir(path);
  if (!d) return;
  struct dirent *e;
  char f[PATH_MAX + 300];
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    snprintf(f, sizeof f, "%s/%s", path, e->d_name);
    unlink(f);
  }
  closedir(d);
  rmdir(path);
}

/* ---- the checkpoint ---- */

#define WHERE_SHM 1
#define WHERE_DIR 2

typedef struct {
  int rank;
  long long bytes;
  int where;
  char node[64];
  char path[PATH_MAX];
} part_t;

typedef struct {
  int size, narrays;
  reg_t *arrays;
  size_t state_bytes;
  part_t *parts;
} manifest_t;

static void manifest_free(manifest_t *m) {
  free(m->arrays);
  free(m->parts);
  memset(m, 0, sizeof *m);
}

static long long part_bytes(const reg_t *arrays, int n, int size, int rank) {
  long long b = 0;
  for (int a = 0; a < n; a++) {
    lay_t L = lay_of(&arrays[a], size);
    b += lay_count(&L, rank) * (long long)arrays[a].elem;
  }
  return b;
}

static int write_manifest(const char *dir, const part_t *parts) {
  size_t cap = 256 + (size_t)E.narrays * 256 + (size_t)E.size * (PATH_MAX + 128);
  char *text = malloc(cap);
  if (!text) return fail(EBB_ERR_IO, "out of memory writing the manifest");
  size_t n = (size_t)snprintf(text, cap, "ebb-checkpoint 1\nsize %d\nstate %zu\narrays %d\n", E.size, E.state ? E.state_bytes : 0, E.narrays);
  for (int a = 0; a < E.narrays; a++) {
    const reg_t *r = &E.arrays[a];
    n += (size_t)snprintf(text + n, cap - n, "array %s %zu %d %lld %lld %d %d %d %d\n", r->name, r->elem, r->layout, r->rows, r->cols, r->mb, r->nb, r->pr, r->pc);
  }
  for (int r = 0; r < E.size; r++)
    n += (size_t)snprintf(text + n, cap - n, "part %d %lld %s %s %s\n", parts[r].rank, parts[r].bytes, parts[r].node, parts[r].where == WHERE_SHM ? "shm" : "dir", parts[r].path);
  char path[PATH_MAX + 16];
  snprintf(path, sizeof path, "%s/manifest", dir);
  int rc = write_file(path, text, n);
  free(text);
  return rc;
}

static int read_manifest(const char *dir, manifest_t *m) {
  char path[PATH_MAX + 16];
  snprintf(path, sizeof path, "%s/manifest", dir);
  FILE *f = fopen(path, "r");
  if (!f) return fail(EBB_ERR_IO, "no checkpoint manifest at %s: %s", path, strerror(errno));
  memset(m, 0, sizeof *m);
  char line[PATH_MAX + 256];
  int version = 0, arrays = 0, parts = 0, ok = 1;
  while (ok && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (sscanf(line, "ebb-checkpoint %d", &version) == 1) continue;
    if (sscanf(line, "size %d", &m->size) == 1) {
      m->parts = calloc((size_t)m->size, sizeof(part_t));
      ok = m->parts != NULL;
      continue;
    }
    if (sscanf(line, "state %zu", &m->state_bytes) == 1) continue;
    if (sscanf(line, "arrays %d", &m->narrays) == 1) {
      m->arrays = calloc((size_t)(m->narrays > 0 ? m->narrays : 1), sizeof(reg_t));
      ok = m->arrays != NULL;
      continue;
    }
    if (!strncmp(line, "array ", 6)) {
      reg_t *r = arrays < m->narrays && m->arrays ? &m->arrays[arrays++] : NULL;
      ok = r && sscanf(line, "array %63s %zu %d %lld %lld %d %d %d %d", r->name, &r->elem, &r->layout, &r->rows, &r->cols, &r->mb, &r->nb, &r->pr, &r->pc) == 9;
      continue;
    }
    if (!strncmp(line, "part ", 5)) {
      part_t p;
      char where[8];
      int used = 0;
      ok = sscanf(line, "part %d %lld %63s %7s %n", &p.rank, &p.bytes, p.node, where, &used) == 4 && used > 0 && p.rank >= 0 && p.rank < m->size && m->parts;
      if (ok) {
        snprintf(p.path, sizeof p.path, "%s", line + used);
        p.where = !strcmp(where, "shm") ? WHERE_SHM : WHERE_DIR;
        m->parts[p.rank] = p;
        parts++;
      }
      continue;
    }
  }
  fclose(f);
  if (!ok || version != 1 || m->size <= 0 || arrays != m->narrays || parts != m->size) {
    manifest_free(m);
    return fail(EBB_ERR_IO, "the checkpoint manifest %s is damaged or of another version", path);
  }
  return EBB_OK;
}

/* The same arrays, in the same order and layouts, on every rank: a hash compared by min and max. */
static int registrations_agree(void) {
  uint64_t h = 1469598103934665603ULL;
  for (int a = 0; a < E.narrays; a++) {
    const reg_t *r = &E.arrays[a];
    const unsigned char *bytes[] = {(const unsigned char *)r->name};
    for (const unsigned char *p = bytes[0]; *p; p++) h = (h ^ *p) * 1099511628211ULL;
    long long v[] = {(long long)r->elem, r->layout, r->rows, r->cols, r->mb, r->nb, r->pr, r->pc};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) h = (h ^ (uint64_t)v[k]) * 1099511628211ULL;
  }
  unsigned long long mine[2] = {h, ~h}, all[2];
  if (MPI_Allreduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS) return fail(EBB_ERR_MPI, "MPI_Allreduce failed");
  if (all[0] != h || all[1] != ~h) return fail(EBB_ERR_ARG, "the ranks registered different arrays (names, order or layouts differ)");
  return EBB_OK;
}

/*
 * The outcome on every rank: EBB_OK, or the lowest failing rank's code and message (collective).
 */
static int agree(int rc) {
  int mine[2] = {rc == EBB_OK ? INT_MAX : E.rank, rc}, all[2];
  MPI_Allreduce(mine, all, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
  if (all[0] == INT_MAX) return EBB_OK;
  int code = rc;
  char msg[sizeof E.error];
  if (E.rank == all[0]) snprintf(msg, sizeof msg, "rank %d: %s", E.rank, E.error);
  MPI_Bcast(msg, sizeof msg, MPI_CHAR, all[0], MPI_COMM_WORLD);
  MPI_Bcast(&code, 1, MPI_INT, all[0], MPI_COMM_WORLD);
  snprintf(E.error, sizeof E.error, "%s", msg);
  return code;
}

/*
 * Writes checkpoint `tag` (collective): ranks below `stay` (their node stays) to /dev/shm, the
 * others to the checkpoint directory, which also gets the state and the manifest. Nothing of a
 * checkpoint that failed is left.
 */
static int write_checkpoint(const char *tag, int stay) {
  double t0 = seconds();
  if (E.narrays == 0 && !E.state) return fail(EBB_ERR_STATE, "nothing is registered: call ebb_register() before the safe point");
  int rc = agree(registrations_agree());
  if (rc != EBB_OK) return rc;
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s/%s", E.root, tag);
  rc = agree(E.rank == 0 ? mkdir_p(dir) : EBB_OK);
  if (rc != EBB_OK) return rc;
  part_t me = {.rank = E.rank, .bytes = part_bytes(E.arrays, E.narrays, E.size, E.rank), .where = E.rank < stay ? WHERE_SHM : WHERE_DIR};
  snprintf(me.node, sizeof me.node, "%s", E.node);
  /* The writer's pid in a /dev/shm name: two clusters on one machine number their jobs alike. */
  if (me.where == WHERE_SHM) snprintf(me.path, sizeof me.path, "%s/ebb-ckpt-%s-%s-%d-%ld", E.shm, E.job, tag, E.rank, (long)getpid());
  else snprintf(me.path, sizeof me.path, "%s/part-%d", dir, E.rank);
  const void **pieces = malloc(sizeof(void *) * (size_t)(E.narrays + 1));
  size_t *lens = malloc(sizeof(size_t) * (size_t)(E.narrays + 1));
  rc = pieces && lens ? EBB_OK : fail(EBB_ERR_IO, "out of memory");
  for (int a = 0; a < E.narrays && rc == EBB_OK; a++) {
    lay_t L = lay_of(&E.arrays[a], E.size);
    pieces[a] = E.arrays[a].data;
    lens[a] = (size_t)lay_count(&L, E.rank) * E.arrays[a].elem;
  }
  if (rc == EBB_OK) rc = write_parts(me.path, pieces, lens, E.narrays);
  free(pieces), free(lens);
  timing("write: part written", t0);
  part_t *parts = E.rank == 0 ? calloc((size_t)E.size, sizeof(part_t)) : NULL;
  MPI_Gather(&me, (int)sizeof me, MPI_BYTE, parts, (int)sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
  rc = agree(rc);
  if (rc == EBB_OK && E.rank == 0) {
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/state", dir);
    int w = E.state && E.state_bytes ? write_file(path, E.state, E.state_bytes) : EBB_OK;
    rc = w == EBB_OK ? write_manifest(dir, parts) : w;
  }
  free(parts);
  rc = agree(rc);
  timing("write: manifest written", t0);
  if (rc != EBB_OK) {
    unlink(me.path);
    MPI_Barrier(MPI_COMM_WORLD);
    if (E.rank == 0) remove_dir(dir);
  }
  return rc;
}

/* ---- reading a checkpoint back ---- */

/* Runs of elements a piece of a part moves in: consecutive pieces contiguous on both sides are one run. */
typedef struct {
  int r;
  long long from, to, len;
} run_t;

typedef struct {
  run_t *v;
  size_t n, cap;
} runs_t;

static int runs_add(runs_t *rs, int r, long long from, long long to, long long len) {
  if (rs->n) {
    run_t *l = &rs->v[rs->n - 1];
    if (l->r == r && l->from + l->len == from && l->to + l->len == to) {
      l->len += len;
      return 0;
    }
  }
  if (rs->n == rs->cap) {
    size_t cap = rs->cap ? rs->cap * 2 : 16;
    run_t *more = realloc(rs->v, cap * sizeof(run_t));
    if (!more) return -1;
    rs->v = more;
    rs->cap = cap;
  }
  rs->v[rs->n++] = (run_t){r, from, to, len};
  return 0;
}

typedef struct {
  runs_t *per; /* by destination (a sender's), or the one list of pieces for `only` (a receiver's) */
  int only, r, oom;
} collect_t;

static void collect_piece(void *c, int q, long long from, long long to, long long len) {
  collect_t *k = c;
  if (k->only >= 0 && q != k->only) return;
  k->oom |= runs_add(k->only >= 0 ? k->per : &k->per[q], k->r, from, to, len);
}

/* At most this many runs between two ranks go as they are; more are packed into one message. */
#define DIRECT_RUNS 8
/* The largest message posted: bigger runs go in pieces (MPI counts are ints). */
#define MAX_MESSAGE (1LL << 30)

typedef struct {
  MPI_Request *v;
  int n, cap;
} reqs_t;

static int post(reqs_t *q, char *buf, long long bytes, int peer, int tag, int send) {
  for (long long at = 0; at < bytes; at += MAX_MESSAGE) {
    int n = (int)(bytes - at < MAX_MESSAGE ? bytes - at : MAX_MESSAGE);
    if (q->n == q->cap) {
      int cap = q->cap ? q->cap * 2 : 64;
      MPI_Request *more = realloc(q->v, sizeof(MPI_Request) * (size_t)cap);
      if (!more) return EBB_ERR_MPI;
      q->v = more;
      q->cap = cap;
    }
    int rc = send ? MPI_Isend(buf + at, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &q->v[q->n]) : MPI_Irecv(buf + at, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &q->v[q->n]);
    if (rc != MPI_SUCCESS) return EBB_ERR_MPI;
    q->n++;
  }
  return EBB_OK;
}

static long long runs_bytes(const runs_t *rs, size_t elem) {
  long long b = 0;
  for (size_t i = 0; i < rs->n; i++) b += rs->v[i].len * (long long)elem;
  return b;
}

/* Which new rank loads old part r: a rank on the part's node (shm), else r mod size. */
static void assign_loaders(const manifest_t *m, const char (*nodes)[64], int *loader) {
  for (int r = 0; r < m->size; r++) {
    const part_t *p = &m->parts[r];
    loader[r] = r % E.size;
    if (p->where != WHERE_SHM) continue;
    int on = 0;
    for (int q = 0; q < E.size; q++) on += !strcmp(nodes[q], p->node);
    /* No rank on its node (a checkpoint resumed by hand elsewhere): r mod size tries the path as it is. */
    if (on == 0) continue;
    /* Round-robin over the node's new ranks, counting the parts of that node so far. */
    int k = 0;
    for (int s = 0; s < r; s++) k += m->parts[s].where == WHERE_SHM && !strcmp(m->parts[s].node, p->node);
    k %= on;
    for (int q = 0; q < E.size; q++)
      if (!strcmp(nodes[q], p->node) && k-- == 0) {
        loader[r] = q;
        break;
      }
  }
}

static int restore(const char *dir, int cleanup) {
  double t0 = seconds();
  manifest_t m;
  int rc = agree(read_manifest(dir, &m));
  if (rc != EBB_OK) return rc;
  char(*nodes)[64] = calloc((size_t)E.size, 64);
  int *loader = malloc(sizeof(int) * (size_t)m.size);
  void **loaded = calloc((size_t)m.size, sizeof(void *));
  long long *sizes = calloc((size_t)m.size, sizeof(long long));
  MPI_Allgather(E.node, 64, MPI_CHAR, nodes, 64, MPI_CHAR, MPI_COMM_WORLD);
  assign_loaders(&m, (const char(*)[64])nodes, loader);
  rc = EBB_OK;
  for (int r = 0; r < m.size && rc == EBB_OK; r++) {
    if (loader[r] != E.rank) continue;
    long long want = part_bytes(m.arrays, m.narrays, m.size, r);
    if (want != m.parts[r].bytes) rc = fail(EBB_ERR_IO, "part %d: the manifest says %lld bytes, its arrays %lld", r, m.parts[r].bytes, want);
    if (rc == EBB_OK) rc = map_file(m.parts[r].path, &loaded[r], want);
    sizes[r] = want;
  }
  rc = agree(rc);
  timing("read: parts loaded", t0);
  E.restored = rc == EBB_OK ? calloc((size_t)(m.narrays > 0 ? m.narrays : 1), sizeof(ebb_array)) : NULL;
  long long *offset = calloc((size_t)m.size, sizeof(long long)); /* where the current array starts in each part */
  runs_t *out = calloc((size_t)E.size, sizeof(runs_t)), *in = calloc((size_t)E.size, sizeof(runs_t));
  char **packed = calloc((size_t)E.size, sizeof(char *)), **unpack = calloc((size_t)E.size, sizeof(char *));
  reqs_t reqs = {0};
  for (int a = 0; a < m.narrays && rc == EBB_OK; a++) {
    reg_t *old = &m.arrays[a];
    size_t elem = old->elem;
    lay_t A = lay_of(old, m.size);
    reg_t now = *old;
    if (now.layout == EBB_BLOCK_CYCLIC_2D) ebb_grid(E.size, &now.pr, &now.pc);
    lay_t B = lay_of(&now, E.size);
    long long mine = lay_count(&B, E.rank);
    char *dst = malloc(mine > 0 ? (size_t)(mine * (long long)elem) : 1);
    /* The runs I send (the parts I loaded, by destination) and those I receive (by loader), computed alike on both sides. */
    int oom = dst == NULL;
    for (int q = 0; q < E.size; q++) out[q].n = in[q].n = 0;
    for (int r = 0; r < m.size; r++) {
      collect_t k = {loader[r] == E.rank ? out : &in[loader[r]], loader[r] == E.rank ? -1 : E.rank, r, 0};
      walk(&A, r, &B, collect_piece, &k);
      oom |= k.oom;
    }
    rc = agree(oom ? fail(EBB_ERR_IO, "out of memory redistributing %s", old->name) : EBB_OK);
    if (rc != EBB_OK) {
      free(dst);
      break;
    }
    /* Receives first, then sends: few runs straight into place, many packed into one message. */
    reqs.n = 0;
    for (int l = 0; l < E.size && rc == EBB_OK; l++) {
      if (l == E.rank || in[l].n == 0) continue;
      if (in[l].n <= DIRECT_RUNS) {
        for (size_t i = 0; i < in[l].n && rc == EBB_OK; i++) rc = post(&reqs, dst + in[l].v[i].to * (long long)elem, in[l].v[i].len * (long long)elem, l, a, 0);
      } else {
        long long b = runs_bytes(&in[l], elem);
        unpack[l] = malloc(b > 0 ? (size_t)b : 1);
        rc = unpack[l] ? post(&reqs, unpack[l], b, l, a, 0) : EBB_ERR_MPI;
      }
    }
    for (int q = 0; q < E.size && rc == EBB_OK; q++) {
      runs_t *rs = &out[q];
      if (rs->n == 0) continue;
      if (q == E.rank) {
        for (size_t i = 0; i < rs->n; i++) memcpy(dst + rs->v[i].to * (long long)elem, (char *)loaded[rs->v[i].r] + offset[rs->v[i].r] + rs->v[i].from * (long long)elem, (size_t)(rs->v[i].len * (long long)elem));
      } else if (rs->n <= DIRECT_RUNS) {
        for (size_t i = 0; i < rs->n && rc == EBB_OK; i++) rc = post(&reqs, (char *)loaded[rs->v[i].r] + offset[rs->v[i].r] + rs->v[i].from * (long long)elem, rs->v[i].len * (long long)elem, q, a, 1);
      } else {
        long long b = runs_bytes(rs, elem), at = 0;
        packed[q] = malloc(b > 0 ? (size_t)b : 1);
        if (!packed[q]) rc = EBB_ERR_MPI;
        for (size_t i = 0; i < rs->n && rc == EBB_OK; i++) {
          long long n = rs->v[i].len * (long long)elem;
          memcpy(packed[q] + at, (char *)loaded[rs->v[i].r] + offset[rs->v[i].r] + rs->v[i].from * (long long)elem, (size_t)n);
          at += n;
        }
        if (rc == EBB_OK) rc = post(&reqs, packed[q], b, q, a, 1);
      }
    }
    if (rc == EBB_OK && reqs.n > 0 && MPI_Waitall(reqs.n, reqs.v, MPI_STATUSES_IGNORE) != MPI_SUCCESS) rc = EBB_ERR_MPI;
    for (int l = 0; l < E.size; l++) {
      if (unpack[l] && rc == EBB_OK) {
        long long at = 0;
        for (size_t i = 0; i < in[l].n; i++) {
          long long n = in[l].v[i].len * (long long)elem;
          memcpy(dst + in[l].v[i].to * (long long)elem, unpack[l] + at, (size_t)n);
          at += n;
        }
      }
      free(unpack[l]), free(packed[l]);
      unpack[l] = packed[l] = NULL;
    }
    rc = agree(rc == EBB_OK ? EBB_OK : fail(rc, "moving %s to its new owners failed (MPI)", old->name));
    timing("read: moved", t0);
    for (int r = 0; r < m.size; r++) offset[r] += lay_count(&A, r) * (long long)elem;
    if (rc != EBB_OK) {
      free(dst);
      break;
    }
    ebb_array *o = &E.restored[E.nrestored++];
    char *name = malloc(strlen(old->name) + 1);
    strcpy(name, old->name);
    *o = (ebb_array){name, dst, elem, now.layout, now.rows, now.cols, now.mb, now.nb, now.pr, now.pc};
  }
  for (int q = 0; q < E.size; q++) free(out[q].v), free(in[q].v);
  free(offset), free(out), free(in), free(packed), free(unpack), free(reqs.v);
  /* The replicated state: rank 0 reads it, everyone gets it. */
  if (rc == EBB_OK && m.state_bytes > 0) {
    int st = EBB_OK;
    if (E.rank == 0) {
      char path[PATH_MAX + 16];
      size_t got;
      snprintf(path, sizeof path, "%s/state", dir);
      st = read_file(path, &E.rstate, &got, (long long)m.state_bytes);
    }
    rc = agree(st);
    if (rc == EBB_OK) {
      if (E.rank != 0) E.rstate = malloc(m.state_bytes);
      MPI_Bcast(E.rstate, (int)m.state_bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
      E.rstate_bytes = m.state_bytes;
    }
  }
  for (int r = 0; r < m.size; r++)
    if (loaded[r]) munmap(loaded[r], sizes[r] > 0 ? (size_t)sizes[r] : 1);
  free(sizes);
  /* A resize's checkpoint is spent once every rank has its data; a periodic one stays the latest. */
  if (rc == EBB_OK && cleanup) {
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < m.size; r++)
      if (loader[r] == E.rank) unlink(m.parts[r].path);
    MPI_Barrier(MPI_COMM_WORLD);
    if (E.rank == 0) remove_dir(dir);
  }
  timing("read: done", t0);
  int old_size = m.size;
  free(nodes), free(loader), free(loaded);
  manifest_free(&m);
  return rc == EBB_OK ? old_size : rc;
}

/* ---- the API ---- */

static const char *env(const char *k) {
  const char *v = getenv(k);
  return v && *v ? v : NULL;
}

/* A path relative to the working directory made absolute (a manifest names its parts wherever it is read). */
static void absolute(char *path, size_t cap) {
  char cwd[PATH_MAX], was[PATH_MAX];
  if (path[0] == '/' || !getcwd(cwd, sizeof cwd)) return;
  snprintf(was, sizeof was, "%s", path);
  if ((size_t)snprintf(path, cap, "%s/%s", cwd, was) >= cap) snprintf(path, cap, "%s", was);
}

/* The part of ebb_init that talks to the agent: the probe slots, the KVS flag, the checkpoint root. */
static int attach_agent(void) {
  const char *shm = env("EBB_ADAPT_SHM");
  const char *proto = env("EBB_ADAPT_PROTOCOL");
  int theirs = proto ? atoi(proto) : 0;
  if (theirs != EBB_PROTOCOL)
    return fail(EBB_ERR_AGENT, "the agent speaks adaptation protocol %d, this program's libebb protocol %d: %s", theirs, EBB_PROTOCOL,
                theirs > EBB_PROTOCOL ? "rebuild the program with the agent's newer ebb (ebb mpicc)" : "upgrade the node's ebb, or rebuild the program with the ebb of its release");
  const char *fd = env("PMI_FD");
  if (!fd) return fail(EBB_ERR_AGENT, "checkpoint-restart talks to the agent on PMI_FD; run the step without --pmi-port");
  E.pmi_fd = atoi(fd);
  int slot = env("EBB_ADAPT_SLOT") ? atoi(env("EBB_ADAPT_SLOT")) : -1;
  if (slot < 0 || slot >= MAX_LOCAL_RANKS) return fail(EBB_ERR_AGENT, "EBB_ADAPT_SLOT is missing or out of range");
  int f = open(shm, O_RDWR | O_CLOEXEC);
  if (f < 0) return fail(EBB_ERR_AGENT, "cannot open the probe slots %s: %s", shm, strerror(errno));
  void *p = mmap(NULL, SLOTS_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
  close(f);
  if (p == MAP_FAILED) return fail(EBB_ERR_AGENT, "cannot map the probe slots %s: %s", shm, strerror(errno));
  E.target = (volatile int32_t *)p + TARGET_WORD;
  E.myslot = (volatile int32_t *)p + SLOT_WORD(slot);
  char reply[PMI_LINE];
  int rc = pmi_call("cmd=get_my_kvsname\n", reply, sizeof reply);
  if (rc != EBB_OK) return rc;
  if (!pmi_get(reply, "kvsname", E.kvs, sizeof E.kvs)) return fail(EBB_ERR_AGENT, "no kvsname in the agent's answer");
  /* The launcher pre-puts where checkpoints go; rank 0 tells it that this world restarts to resize
     (a restarted world's launcher knows: it started it). */
  char dir[PATH_MAX];
  if (kvs_get("ebbcr.dir", dir, sizeof dir) == EBB_OK) {
    snprintf(E.root, sizeof E.root, "%s", dir);
    absolute(E.root, sizeof E.root);
  }
  E.elastic = 1;
  E.joining = env("EBB_ADAPT_STATUS") && !strcmp(env("EBB_ADAPT_STATUS"), "joining");
  if (E.joining) return EBB_OK;
  if (E.rank == 0 && (rc = kvs_put("ebbcr", "1")) != EBB_OK) return rc;
  return kvs_fence();
}

/* Joining ranks of a restart: every rank has read its data (ebb-begin, held until all have), then the window closes (ebb-commit). */
static int join_window(void) {
  char reply[PMI_LINE];
  int rc = pmi_call("cmd=ebb-begin\n", reply, sizeof reply);
  if (rc == EBB_OK) rc = pmi_call("cmd=ebb-commit\n", reply, sizeof reply);
  return rc;
}

int ebb_init(int *argc, char ***argv, ebb_info *info) {
  if (E.inited) return fail(EBB_ERR_STATE, "ebb_init was called already");
  int mpi;
  MPI_Initialized(&mpi);
  if (!mpi && MPI_Init(argc, argv) != MPI_SUCCESS) return fail(EBB_ERR_MPI, "MPI_Init failed");
  MPI_Comm_rank(MPI_COMM_WORLD, &E.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &E.size);
  E.inited = 1;
  snprintf(E.node, sizeof E.node, "%s", env("EBB_NODENAME") ? env("EBB_NODENAME") : "");
  if (!E.node[0]) gethostname(E.node, sizeof E.node - 1);
  snprintf(E.job, sizeof E.job, "%s", env("EBB_JOB_ID") ? env("EBB_JOB_ID") : "0");
  snprintf(E.step, sizeof E.step, "%s", env("EBB_STEP_ID") ? env("EBB_STEP_ID") : "0");
  snprintf(E.shm, sizeof E.shm, "%s", env("EBB_CKPT_SHM") ? env("EBB_CKPT_SHM") : "/dev/shm");
  if (env("EBB_CKPT_DIR")) snprintf(E.root, sizeof E.root, "%s", env("EBB_CKPT_DIR"));
  else snprintf(E.root, sizeof E.root, ".ebb-ckpt/job-%s", E.job);
  absolute(E.root, sizeof E.root);
  if (env("EBB_CHECKPOINT_EVERY")) ebb_checkpoint_every(atoi(env("EBB_CHECKPOINT_EVERY")));
  int rc = env("EBB_ADAPT_SHM") ? attach_agent() : EBB_OK;
  rc = agree(rc);
  if (rc != EBB_OK) return rc;
  /* The job's newest periodic checkpoint so far (taken before a resize, say) goes after the next one. */
  if (E.rank == 0) {
    char path[PATH_MAX + 16], tag[64];
    snprintf(path, sizeof path, "%s/latest", E.root);
    FILE *f = fopen(path, "r");
    if (f && fgets(tag, sizeof tag, f) && tag[0] == 'p') snprintf(E.last_periodic, sizeof E.last_periodic, "%.*s", (int)strcspn(tag, "\n"), tag);
    if (f) fclose(f);
  }
  /* Where to resume from: the launcher's restart, or a checkpoint named by hand (EBB_RESUME). */
  char from[PATH_MAX] = "";
  int cleanup = 0;
  if (E.joining) {
    rc = kvs_get("ebbcr.resume", from, sizeof from);
    if (rc != EBB_OK) {
      char why[sizeof E.error];
      snprintf(why, sizeof why, "%s", E.error);
      fail(rc, "a restarted rank found no checkpoint to resume (ebbcr.resume): %s", why);
    }
    const char *tag = strrchr(from, '/');
    cleanup = tag && tag[1] == 'a';
    if (tag && tag[1] == 'p') snprintf(E.last_periodic, sizeof E.last_periodic, "%s", tag + 1);
    rc = agree(rc);
    if (rc != EBB_OK) return rc;
  } else if (env("EBB_RESUME")) {
    snprintf(from, sizeof from, "%s", env("EBB_RESUME"));
  }
  int old = 0;
  if (from[0]) {
    old = restore(from, cleanup);
    if (old < 0) return old;
  }
  if (E.joining && (rc = agree(join_window())) != EBB_OK) return rc;
  E.count = 0;
  if (E.myslot) __atomic_store_n(E.myslot, 0, __ATOMIC_SEQ_CST);
  if (info) {
    memset(info, 0, sizeof *info);
    info->resumed = from[0] != 0;
    info->rank = E.rank;
    info->size = E.size;
    info->old_size = old;
    info->elastic = E.elastic;
    info->state = E.rstate;
    info->state_bytes = E.rstate_bytes;
  }
  return EBB_OK;
}

static int valid_name(const char *s) {
  size_t n = 0;
  for (; s[n]; n++)
    if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '_' || s[n] == '-' || s[n] == '.')) return 0;
  return n > 0 && n <= NAME_MAX_LEN;
}

/* The registered bytes of this rank, told to the agent when they change (the scheduler prices a restart by them). */
static void report_bytes(void) {
  if (!E.elastic) return;
  size_t b = E.state ? E.state_bytes : 0;
  for (int a = 0; a < E.narrays; a++) {
    lay_t L = lay_of(&E.arrays[a], E.size);
    b += (size_t)lay_count(&L, E.rank) * E.arrays[a].elem;
  }
  if (b == E.reported_bytes) return;
  E.reported_bytes = b;
  char line[PMI_LINE], reply[PMI_LINE];
  snprintf(line, sizeof line, "cmd=ebb-perf iterations=0 loop_ns=0 comm_ns=0 state_bytes=%zu\n", b);
  pmi_call(line, reply, sizeof reply);
}

int ebb_register(const ebb_array *a) {
  if (!E.inited) return fail(EBB_ERR_STATE, "ebb_register before ebb_init");
  if (!a || !a->name || !valid_name(a->name)) return fail(EBB_ERR_ARG, "ebb_register: a name of letters, digits, '_', '-', '.' (at most 63) is needed");
  if (a->elem_size == 0 || a->rows < 0 || a->cols <= 0) return fail(EBB_ERR_ARG, "ebb_register(%s): elem_size, rows and cols must be positive", a->name);
  if (a->layout != EBB_BLOCK && a->layout != EBB_BLOCK_CYCLIC_2D) return fail(EBB_ERR_ARG, "ebb_register(%s): layout must be EBB_BLOCK or EBB_BLOCK_CYCLIC_2D", a->name);
  if (a->layout == EBB_BLOCK_CYCLIC_2D && (a->mb <= 0 || a->nb <= 0 || a->pr <= 0 || a->pc <= 0 || a->pr * a->pc != E.size))
    return fail(EBB_ERR_ARG, "ebb_register(%s): 2-D block-cyclic needs positive mb, nb and a pr x pc grid of all %d ranks", a->name, E.size);
  reg_t *r = NULL;
  for (int i = 0; i < E.narrays; i++)
    if (!strcmp(E.arrays[i].name, a->name)) r = &E.arrays[i];
  if (!r) {
    if (E.narrays == E.cap) {
      int cap = E.cap ? E.cap * 2 : 8;
      reg_t *more = realloc(E.arrays, sizeof(reg_t) * (size_t)cap);
      if (!more) return fail(EBB_ERR_ARG, "out of memory");
      E.arrays = more;
      E.cap = cap;
    }
    r = &E.arrays[E.narrays++];
    snprintf(r->name, sizeof r->name, "%s", a->name);
  }
  int changed = r->data == NULL || r->rows != a->rows || r->cols != a->cols || r->elem != a->elem_size;
  r->data = a->data;
  r->elem = a->elem_size;
  r->layout = a->layout;
  r->rows = a->rows;
  r->cols = a->cols;
  r->mb = a->mb, r->nb = a->nb, r->pr = a->pr, r->pc = a->pc;
  if (changed) report_bytes();
  return EBB_OK;
}

int ebb_register_state(const void *state, size_t bytes) {
  if (!E.inited) return fail(EBB_ERR_STATE, "ebb_register_state before ebb_init");
  int changed = bytes != E.state_bytes;
  E.state = bytes ? state : NULL;
  E.state_bytes = bytes;
  if (changed) report_bytes();
  return EBB_OK;
}

int ebb_checkpoint_every(int n) {
  if (n < 0) return fail(EBB_ERR_ARG, "ebb_checkpoint_every: n must be >= 0");
  E.every = n;
  E.until = n;
  return EBB_OK;
}

/* At the target: the agent holds the answer until every rank of the job waits at this call. */
static int slow_probe(int c) {
  char line[128], reply[PMI_LINE], v[32];
  snprintf(line, sizeof line, "cmd=ebb-probe index=%d\n", c);
  if (pmi_call(line, reply, sizeof reply) != EBB_OK) {
    fprintf(stderr, "ebb_probe_adapt: %s\n", E.error);
    return 0;
  }
  if (!pmi_get(reply, "pending", v, sizeof v) || strcmp(v, "1") != 0) return 0;
  E.adapt_id = pmi_get(reply, "adapt", v, sizeof v) ? atoi(v) : 0;
  E.pending = 1;
  return 1;
}

static void periodic(void) {
  char tag[64];
  snprintf(tag, sizeof tag, "p%s-%d", E.step, E.count);
  int rc = write_checkpoint(tag, 0);
  if (rc != EBB_OK) {
    if (E.rank == 0) fprintf(stderr, "ebb: periodic checkpoint %s failed: %s\n", tag, E.error);
    return;
  }
  if (E.rank != 0) return;
  /* The newest complete checkpoint is `latest`; the one before it goes. */
  char path[PATH_MAX + 16];
  snprintf(path, sizeof path, "%s/latest", E.root);
  if (write_file(path, tag, strlen(tag)) != EBB_OK) {
    fprintf(stderr, "ebb: periodic checkpoint %s: %s\n", tag, E.error);
    return;
  }
  if (E.last_periodic[0]) {
    snprintf(path, sizeof path, "%s/%s", E.root, E.last_periodic);
    remove_dir(path);
  }
  snprintf(E.last_periodic, sizeof E.last_periodic, "%s", tag);
}

int ebb_probe_adapt(void) {
  int c = ++E.count;
  if (E.myslot) {
    /* Store, then load (sequentially consistent): the agent stores the target, then reads the slots. */
    __atomic_store_n(E.myslot, c, __ATOMIC_SEQ_CST);
    int t = __atomic_load_n(E.target, __ATOMIC_SEQ_CST);
    if (__builtin_expect(t != 0 && c >= t, 0) && slow_probe(c)) return 1;
  }
  if (__builtin_expect(E.every > 0 && --E.until == 0, 0)) {
    E.until = E.every;
    periodic();
  }
  return 0;
}

int ebb_adapt(void) {
  if (!E.pending) return fail(EBB_ERR_STATE, "no adaptation is pending: call ebb_adapt() when ebb_probe_adapt() returns 1");
  char key[64], plan[64], v[32], reply[PMI_LINE];
  snprintf(key, sizeof key, "ebbcr.a%d", E.adapt_id);
  int rc = kvs_get(key, plan, sizeof plan);
  int stay = rc == EBB_OK && pmi_get(plan, "stay", v, sizeof v) ? atoi(v) : -1;
  if (rc == EBB_OK && stay < 0) rc = fail(EBB_ERR_AGENT, "the adaptation's plan (%s) says nothing of the ranks that stay: %s", key, plan);
  rc = agree(rc);
  char tag[32];
  snprintf(tag, sizeof tag, "a%d", E.adapt_id);
  if (rc == EBB_OK) rc = write_checkpoint(tag, stay);
  /* The outcome reaches the launcher before any rank commits: one key, one fence. */
  snprintf(key, sizeof key, "ebbcr.w%d", E.adapt_id);
  int told = E.rank == 0 ? kvs_put(key, rc == EBB_OK ? "ok" : E.error) : EBB_OK;
  if (told == EBB_OK) told = kvs_fence();
  if (told == EBB_OK) told = pmi_call("cmd=ebb-commit\n", reply, sizeof reply);
  E.pending = 0;
  E.count = 0;
  E.until = E.every;
  if (E.myslot) __atomic_store_n(E.myslot, 0, __ATOMIC_SEQ_CST);
  if (told != EBB_OK) {
    fprintf(stderr, "ebb_adapt: %s\n", E.error);
    exit(1);
  }
  if (rc == EBB_OK) {
    MPI_Finalize();
    exit(EBB_EXIT_RESTART);
  }
  return rc;
}

int ebb_restored(const char *name, ebb_array *out) {
  if (!name || !out) return fail(EBB_ERR_ARG, "ebb_restored: name and out are needed");
  for (int i = 0; i < E.nrestored; i++) {
    if (!E.restored[i].name || strcmp(E.restored[i].name, name) != 0) continue;
    *out = E.restored[i];
    E.restored[i].data = NULL;
    return EBB_OK;
  }
  return fail(EBB_ERR_ARG, "the checkpoint has no array %s (or it was taken already)", name);
}

int ebb_finalize(void) {
  if (!E.inited) return fail(EBB_ERR_STATE, "ebb_finalize before ebb_init");
  /* A job that ends needs its periodic checkpoints no more. */
  if (E.rank == 0 && E.last_periodic[0]) {
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/latest", E.root);
    unlink(path);
    snprintf(path, sizeof path, "%s/%s", E.root, E.last_periodic);
    remove_dir(path);
  }
  /* The job's directory, and the default one's parent, go when they are empty. */
  if (E.rank == 0 && rmdir(E.root) == 0 && !env("EBB_CKPT_DIR")) {
    char *slash = strrchr(E.root, '/');
    if (slash && !strncmp(slash, "/job-", 5)) *slash = 0, rmdir(E.root);
  }
  for (int i = 0; i < E.nrestored; i++) {
    free((void *)E.restored[i].name);
    free(E.restored[i].data);
  }
  free(E.restored), free(E.arrays), free(E.rstate);
  E.inited = 0;
  int fin;
  MPI_Finalized(&fin);
  return !fin && MPI_Finalize() != MPI_SUCCESS ? fail(EBB_ERR_MPI, "MPI_Finalize failed") : EBB_OK;
}

/* ---- shims for the Fortran module (ebb.f90): no C structs or argv cross the language line ---- */

int ebb_init_f(int *resumed, int *rank, int *size, int *old_size) {
  ebb_info info;
  int rc = ebb_init(NULL, NULL, &info);
  *resumed = info.resumed, *rank = info.rank, *size = info.size, *old_size = info.old_size;
  return rc;
}

int ebb_register_f(const char *name, void *data, long long elem_size, int layout, long long rows, long long cols, int mb, int nb, int pr, int pc) {
  ebb_array a = {name, data, (size_t)elem_size, layout, rows, cols, mb, nb, pr, pc};
  return ebb_register(&a);
}

int ebb_restored_f(const char *name, void **data, long long *count, int *pr, int *pc) {
  ebb_array a;
  int rc = ebb_restored(name, &a);
  if (rc != EBB_OK) return rc;
  *data = a.data;
  *count = (long long)ebb_local_count(&a, E.rank);
  *pr = a.pr, *pc = a.pc;
  return EBB_OK;
}

/* Resumed: copies the checkpoint's replicated state into `state` (bytes must match). */
int ebb_restored_state_f(void *state, long long bytes) {
  if (!E.rstate || (size_t)bytes != E.rstate_bytes) return fail(EBB_ERR_ARG, "the checkpoint's state is %zu bytes, not %lld", E.rstate_bytes, bytes);
  memcpy(state, E.rstate, E.rstate_bytes);
  return EBB_OK;
}

void ebb_free_f(void *data) { free(data); }
