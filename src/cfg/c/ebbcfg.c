/*
 * ebb CFG monitoring for unmodified MPI programs: PMPI wrappers that feed each call to the same
 * online loop detector as src/cfg/detector.ts (see src/cfg/README.md), keyed by the call's
 * return address (one load, no unwinding), normalised to object + offset on first sight so ids
 * match across ranks and nodes.
 *
 * The rank's table goes to EBB_CFG_FILE (node-shared memory, written then renamed) in the JSON
 * form ebb/comm writes: at most once per sampling interval (EBB_SAMPLE_INTERVAL, seconds), when
 * the detector has something to report, and at MPI_Finalize. Without EBB_CFG_FILE every wrapper
 * only forwards to PMPI.
 *
 * Build: mpicc -O2 -shared -fPIC -o libebbcfg.so ebbcfg.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { T_OTHER = 0, T_P2P = 1, T_COLL = 2, T_ONESIDED = 3, T_IO = 4 };
enum { K_OUTSIDE = 0, K_DETECTED = 1, K_INLOOP = 2, K_EXIT = 3, K_BODYRE = 4, K_HEADRE = 5, K_SKIPPED = 6 };
enum { HEAD = 1, BODY = 2 };
#define CAP 4096
#define SLOTS 4
#define TRAIL 8192
#define HASH (CAP * 4)
#define MAX_DEPTH 256

/* Detector state: one per process (MPI calls of one thread are a sequence; MPI_THREAD_MULTIPLE
 * programs interleave steps, which the detector tolerates but reads as branches). */
static struct {
  int on, size, prev, cur, tpos, version, dirty;
  uint64_t skipped;
  double step, next_sample, next_event, interval;
  /* the process's MPI time so far: a loop's TMT is its growth over the loop's span */
  double mpi;
  double origin_ms;
  const char *file;
  int rank;
  /* raw return address -> node (open addressing) */
  uintptr_t haddr[HASH];
  int hnode[HASH];
  /* per node */
  uintptr_t raw[CAP];
  uint64_t site[CAP];
  uint8_t type[CAP], flags[CAP], next_slot[CAP];
  int head_of[CAP], tail_of[CAP], re[CAP], re_src[CAP];
  double visits[CAP], created[CAP], last[CAP], last_step[CAP], iter_start[CAP];
  double mpi_at_det[CAP], tmt_last[CAP], det_t[CAP], det_v[CAP], offset[CAP], offset_n[CAP], s_visits[CAP];
  /* successor cache */
  uintptr_t succ_raw[CAP * SLOTS];
  int succ_node[CAP * SLOTS], succ_ver[CAP * SLOTS];
  uint8_t succ_kind[CAP * SLOTS];
  int trail[TRAIL];
  /* edge set (open addressing on prev*CAP+next) */
  uint32_t edges[CAP * 16];
} D;

static inline double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint32_t mix32(uint32_t h) {
  h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
  return h;
}

/* Object + offset: the same call in the same binary gets the same id on every rank and node. */
static uint64_t normalise(uintptr_t ra) {
  Dl_info info;
  if (dladdr((void *)ra, &info) && info.dli_fbase) {
    const char *name = info.dli_fname ? info.dli_fname : "";
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    uint32_t h = 2166136261u;
    for (const char *p = base; *p; p++) h = (h ^ (uint8_t)*p) * 16777619u;
    return ((uint64_t)(h & 0x1fffff) << 32) | (uint64_t)(uint32_t)(ra - (uintptr_t)info.dli_fbase);
  }
  return (uint64_t)(uint32_t)ra;
}

static int edge_known_add(int p, int n) {
  uint32_t key = (uint32_t)p * CAP + (uint32_t)n + 1;
  uint32_t i = mix32(key) & (CAP * 16 - 1);
  while (D.edges[i]) {
    if (D.edges[i] == key) return 1;
    i = (i + 1) & (CAP * 16 - 1);
  }
  D.edges[i] = key;
  return 0;
}

static int in_loop(int x, int h) {
  for (int d = 0; x >= 0 && d < MAX_DEPTH; d++) {
    if (x == h) return 1;
    x = D.head_of[x];
  }
  return 0;
}

static void write_table(void);

static void structural(double t) {
  D.version = D.version + 1 == 0 ? 1 : D.version + 1;
  D.dirty = 1;
  if (t >= D.next_event) {
    D.next_event = t + D.interval;
    write_table();
    D.dirty = 0;
  }
}

static void apply(int n, int kind, double t0, double t1) {
  D.visits[n] += 1;
  int is_head = (D.flags[n] & HEAD) != 0;
  int h = is_head ? n : D.head_of[n];
  if (is_head) {
    if (t0 >= D.next_sample && D.visits[n] > D.s_visits[n]) {
      D.s_visits[n] = D.visits[n];
      D.next_sample = t0 + D.interval;
      write_table();
    }
    if (D.dirty && t0 >= D.next_event) {
      D.next_event = t0 + D.interval;
      write_table();
      D.dirty = 0;
    }
    D.iter_start[n] = D.step;
    D.tmt_last[n] = D.mpi - D.mpi_at_det[n];
  } else if (h >= 0) {
    if (kind == K_BODYRE) D.iter_start[h] = D.step;
    else if (D.last_step[h] == D.iter_start[h]) {
      D.offset[n] += t0 - D.last[h];
      D.offset_n[n] += 1;
    }
  }
  if (t1 > t0) D.mpi += t1 - t0;
  D.last[n] = t0;
  D.last_step[n] = D.step;
  D.tpos = (D.tpos + 1) & (TRAIL - 1);
  D.trail[D.tpos] = n;
  D.prev = n;
  D.cur = h;
}

static void detect(int n, int p, double t) {
  int ctx = (D.flags[n] & BODY) ? D.head_of[n] : -1;
  D.flags[n] |= HEAD;
  D.tail_of[n] = p;
  double from = D.last_step[n];
  double cnt = D.step - 1 - from;
  if (cnt > TRAIL - 1) cnt = TRAIL - 1;
  for (int k = 0; k < (int)cnt; k++) {
    int x = D.trail[(D.tpos - k + TRAIL) & (TRAIL - 1)];
    if (x < 0 || x == n || D.head_of[x] != ctx) continue;
    if (ctx < 0 && (D.flags[x] & BODY)) continue;
    D.head_of[x] = n;
    D.flags[x] |= BODY;
  }
  D.det_t[n] = t;
  D.mpi_at_det[n] = D.mpi;
  D.det_v[n] = D.visits[n] + 1;
  D.s_visits[n] = D.visits[n] + 1;
  D.iter_start[n] = D.step;
}

static void cache(int p, uintptr_t ra, int n, int kind) {
  int s = p * SLOTS, end = s + SLOTS;
  while (s < end && D.succ_raw[s] != ra) s++;
  if (s == end) {
    s = p * SLOTS + D.next_slot[p];
    D.next_slot[p] = (uint8_t)((D.next_slot[p] + 1) % SLOTS);
  }
  D.succ_raw[s] = ra;
  D.succ_node[s] = n;
  D.succ_kind[s] = (uint8_t)kind;
  D.succ_ver[s] = D.version;
}

static void slow(uintptr_t ra, int type, double t0, double t1) {
  int p = D.prev, n = -1, kind, changed = 0;
  uint32_t i = mix32((uint32_t)ra ^ (uint32_t)((uint64_t)ra >> 32)) & (HASH - 1);
  while (D.haddr[i]) {
    if (D.haddr[i] == ra) { n = D.hnode[i]; break; }
    i = (i + 1) & (HASH - 1);
  }
  if (n < 0) {
    if (D.size >= CAP) {
      D.skipped++;
      if (t1 > t0) D.mpi += t1 - t0;
      D.tpos = (D.tpos + 1) & (TRAIL - 1);
      D.trail[D.tpos] = -1;
      D.prev = -1;
      D.cur = -1;
      return;
    }
    n = D.size++;
    D.haddr[i] = ra;
    D.hnode[i] = n;
    D.raw[n] = ra;
    D.site[n] = normalise(ra);
    D.type[n] = (uint8_t)type;
    D.created[n] = t0;
    D.last_step[n] = -1;
    D.head_of[n] = D.tail_of[n] = D.re_src[n] = -1;
    if (p >= 0) edge_known_add(p, n);
    int from = p < 0 ? -1 : (D.flags[p] & HEAD) ? p : D.head_of[p];
    kind = from >= 0 ? K_EXIT : K_OUTSIDE;
    changed = from >= 0;
  } else {
    int known = p >= 0 ? edge_known_add(p, n) : 0;
    int f = D.flags[n];
    if (p < 0) {
      kind = (f & HEAD) ? K_HEADRE : (f & BODY) ? K_BODYRE : K_OUTSIDE;
    } else if (!(f & (HEAD | BODY))) {
      detect(n, p, t0);
      kind = K_DETECTED;
      changed = 1;
    } else if (f & HEAD) {
      if (D.tail_of[n] == p || in_loop(p, n)) {
        kind = K_INLOOP;
        changed = !known;
      } else {
        kind = K_HEADRE;
        if (!known) { D.re[n]++; D.re_src[n] = p; changed = 1; }
      }
    } else {
      int h = D.head_of[n];
      if (in_loop(p, h)) {
        if (D.last_step[n] >= D.iter_start[h]) {
          detect(n, p, t0);
          kind = K_DETECTED;
          changed = 1;
        } else {
          kind = K_INLOOP;
          changed = !known;
        }
      } else {
        kind = K_BODYRE;
        if (!known) { D.re[n]++; D.re_src[n] = p; changed = 1; }
      }
    }
  }
  if (changed) structural(t0);
  if (p >= 0 && kind != K_DETECTED && kind != K_OUTSIDE && kind != K_EXIT) cache(p, ra, n, kind);
  apply(n, kind, t0, t1);
}

static inline void ebb_step(uintptr_t ra, int type, double t0, double t1) {
  D.step += 1;
  int p = D.prev;
  if (p >= 0) {
    int s = p * SLOTS, end = s + SLOTS;
    while (s < end && D.succ_raw[s] != ra) s++;
    if (s < end && D.succ_ver[s] == D.version) {
      int n = D.succ_node[s], kind = D.succ_kind[s];
      if (kind != K_INLOOP || (D.flags[n] & HEAD) || D.last_step[n] < D.iter_start[D.head_of[n]]) {
        apply(n, kind, t0, t1);
        return;
      }
    }
  }
  slow(ra, type, t0, t1);
}

static void json_site(FILE *f, const char *k, int i) {
  if (i < 0) fprintf(f, "\"%s\":null", k);
  else fprintf(f, "\"%s\":%llu", k, (unsigned long long)D.site[i]);
}

static void write_table(void) {
  if (!D.file) return;
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", D.file);
  FILE *f = fopen(tmp, "w");
  if (!f) return;
  fprintf(f, "{\"rank\":%d,\"origin\":%.3f,\"skipped\":%llu,\"rows\":[", D.rank, D.origin_ms, (unsigned long long)D.skipped);
  for (int i = 0; i < D.size; i++) {
    int hd = (D.flags[i] & HEAD) != 0, bd = (D.flags[i] & BODY) != 0;
    fprintf(f, "%s{\"site\":%llu,\"type\":%d,\"head\":%s,\"body\":%s,\"re\":%d,\"rv\":%.0f,", i ? "," : "", (unsigned long long)D.site[i], D.type[i],
            hd ? "true" : "false", bd ? "true" : "false", D.re[i], D.visits[i] - 1);
    json_site(f, "tail", hd ? D.tail_of[i] : -1);
    fputc(',', f);
    json_site(f, "headOf", bd ? D.head_of[i] : -1);
    fputc(',', f);
    json_site(f, "reentrySource", D.re_src[i]);
    fprintf(f, ",\"created\":%.0f,\"last\":%.0f,\"detected\":%.0f,\"detectedVisits\":%.0f,\"tmt\":%.0f,\"tmtLast\":%.0f,\"offset\":%.0f,\"offsetCount\":%.0f}",
            D.created[i], D.last[i], D.det_t[i], D.det_v[i], hd ? D.mpi - D.mpi_at_det[i] : 0.0, D.tmt_last[i], D.offset[i], D.offset_n[i]);
  }
  fputs("]}", f);
  if (fclose(f) == 0) rename(tmp, D.file);
}

static void start(void) {
  const char *file = getenv("EBB_CFG_FILE");
  if (!file || !*file) return;
  D.file = file;
  const char *r = getenv("EBB_PROCID");
  if (!r) r = getenv("PMI_RANK");
  D.rank = r ? atoi(r) : 0;
  const char *iv = getenv("EBB_SAMPLE_INTERVAL");
  double sec = iv ? atof(iv) : 60;
  if (!(sec >= 0)) sec = 60;
  D.interval = sec * 1e9;
  D.prev = D.cur = -1;
  D.tpos = TRAIL - 1;
  D.version = 1;
  D.step = -1;
  for (int s = 0; s < CAP * SLOTS; s++) D.succ_node[s] = -1;
  double t = now_ns();
  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  D.origin_ms = ((double)rt.tv_sec * 1e3 + (double)rt.tv_nsec / 1e6) - t / 1e6;
  D.next_sample = t + D.interval;
  D.next_event = t;
  D.on = 1;
}

/* ---- the wrappers ---- */

#define RA ((uintptr_t)__builtin_return_address(0))
#define WRAP(type, call)                         \
  do {                                           \
    if (!D.on) return call;                      \
    uintptr_t ra_ = RA;                          \
    double t0_ = now_ns();                       \
    int rc_ = call;                              \
    ebb_step(ra_, type, t0_, now_ns());          \
    return rc_;                                  \
  } while (0)

int MPI_Init(int *argc, char ***argv) {
  int rc = PMPI_Init(argc, argv);
  start();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  start();
  return rc;
}

int MPI_Finalize(void) {
  if (D.on) write_table();
  D.on = 0;
  return PMPI_Finalize();
}

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) { WRAP(T_P2P, PMPI_Send(buf, count, dt, dest, tag, comm)); }
int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) { WRAP(T_P2P, PMPI_Ssend(buf, count, dt, dest, tag, comm)); }
int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st) { WRAP(T_P2P, PMPI_Recv(buf, count, dt, src, tag, comm, st)); }
int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) { WRAP(T_P2P, PMPI_Isend(buf, count, dt, dest, tag, comm, req)); }
int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *req) { WRAP(T_P2P, PMPI_Irecv(buf, count, dt, src, tag, comm, req)); }
int MPI_Wait(MPI_Request *req, MPI_Status *st) { WRAP(T_P2P, PMPI_Wait(req, st)); }
int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[]) { WRAP(T_P2P, PMPI_Waitall(n, reqs, sts)); }
int MPI_Sendrecv(const void *sb, int sc, MPI_Datatype st, int dest, int stag, void *rb, int rc, MPI_Datatype rt, int src, int rtag, MPI_Comm comm, MPI_Status *s) {
  WRAP(T_P2P, PMPI_Sendrecv(sb, sc, st, dest, stag, rb, rc, rt, src, rtag, comm, s));
}
int MPI_Barrier(MPI_Comm comm) { WRAP(T_COLL, PMPI_Barrier(comm)); }
int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) { WRAP(T_COLL, PMPI_Bcast(buf, count, dt, root, comm)); }
int MPI_Reduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) { WRAP(T_COLL, PMPI_Reduce(sb, rb, count, dt, op, root, comm)); }
int MPI_Allreduce(const void *sb, void *rb, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) { WRAP(T_COLL, PMPI_Allreduce(sb, rb, count, dt, op, comm)); }
int MPI_Gather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm) { WRAP(T_COLL, PMPI_Gather(sb, sc, st, rb, rc, rt, root, comm)); }
int MPI_Allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm comm) { WRAP(T_COLL, PMPI_Allgather(sb, sc, st, rb, rc, rt, comm)); }
int MPI_Scatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm) { WRAP(T_COLL, PMPI_Scatter(sb, sc, st, rb, rc, rt, root, comm)); }
int MPI_Alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, MPI_Comm comm) { WRAP(T_COLL, PMPI_Alltoall(sb, sc, st, rb, rc, rt, comm)); }
int MPI_Put(const void *oa, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Win win) { WRAP(T_ONESIDED, PMPI_Put(oa, oc, ot, tr, td, tc, tt, win)); }
int MPI_Get(void *oa, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Win win) { WRAP(T_ONESIDED, PMPI_Get(oa, oc, ot, tr, td, tc, tt, win)); }
int MPI_Win_fence(int assert, MPI_Win win) { WRAP(T_ONESIDED, PMPI_Win_fence(assert, win)); }
int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype dt, MPI_Status *st) { WRAP(T_IO, PMPI_File_read(fh, buf, count, dt, st)); }
int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype dt, MPI_Status *st) { WRAP(T_IO, PMPI_File_write(fh, buf, count, dt, st)); }
