/*
 * ebb.h: malleable MPI programs on a stock MPI, by checkpoint and restart at a safe point.
 *
 *   ebb_info info;
 *   ebb_init(&argc, &argv, &info);          // calls MPI_Init; fresh start or resumed after a resize
 *   if (info.resumed) { ebb_restored("u", &u); memcpy(&st, info.state, sizeof st); }
 *   else              { ...allocate and initialise u at info.size ranks... }
 *   for (;;) {
 *     ebb_register(&u);                      // the arrays as they are now (pointer, layout)
 *     ebb_register_state(&st, sizeof st);    // small state every rank holds alike
 *     if (ebb_probe_adapt()) ebb_adapt();    // a resize is pending: write, end, restart elsewhere
 *     ...one iteration...
 *   }
 *   ebb_finalize();                          // calls MPI_Finalize
 *
 * ebb_probe_adapt() costs a store and a load in shared memory while nothing is pending (no MPI
 * call, no system call); every rank of the job sees a resize at the same call. ebb_adapt() writes
 * each rank's part of the registered arrays (node-local /dev/shm when the rank's node stays, else
 * the job's checkpoint directory) and ends the process with EBB_EXIT_RESTART; ebb restarts the
 * program at the new size, and ebb_init() there reads the parts back and redistributes them to the
 * new layout. Outside ebb (mpiexec) nothing is ever pending. The protocol: docs/adaptation.md §12.
 */
#ifndef EBB_H
#define EBB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The exit status of a rank that wrote its part for a restart (the launcher expects it). */
#define EBB_EXIT_RESTART 75

/** Distributions of a rows x cols array (row-major, elem_size bytes per element) over the ranks. */
enum {
  /** Rows in contiguous ranges, the first rows % size ranks one row more; each rank's rows are contiguous. */
  EBB_BLOCK = 1,
  /** ScaLAPACK's 2-D block-cyclic: mb x nb blocks on a pr x pc grid (rank = grid row * pc + grid col), each local matrix row-major. */
  EBB_BLOCK_CYCLIC_2D = 2
};

/** Error codes (negative); ebb_strerror() says what went wrong in words. */
enum {
  EBB_OK = 0,
  EBB_ERR_ARG = -1,      /* a bad argument */
  EBB_ERR_STATE = -2,    /* called at the wrong time (before ebb_init, without a pending adaptation, ...) */
  EBB_ERR_IO = -3,       /* a checkpoint file could not be written or read */
  EBB_ERR_AGENT = -4,    /* the ebb agent refused or failed a request */
  EBB_ERR_MPI = -5       /* an MPI call failed */
};

typedef struct {
  /** 1: this process resumes from a checkpoint (a resize, or a restart after a node was lost). */
  int resumed;
  /** This rank and the number of ranks (MPI_COMM_WORLD). */
  int rank, size;
  /** Resumed: the number of ranks that wrote the checkpoint. */
  int old_size;
  /** 1 when ebb runs this process as part of an elastic step (resizes can be pending). */
  int elastic;
  /** Resumed: the replicated state as registered when the checkpoint was written (owned by ebb). */
  const void *state;
  size_t state_bytes;
} ebb_info;

typedef struct {
  /** Unique among the arrays: letters, digits, '_', '-', '.', at most 63 characters. */
  const char *name;
  /** This rank's part: ebb_local_count(this, rank) elements. */
  void *data;
  size_t elem_size;
  /** EBB_BLOCK or EBB_BLOCK_CYCLIC_2D. */
  int layout;
  /** The global array: rows x cols elements, row-major. */
  long long rows, cols;
  /** EBB_BLOCK_CYCLIC_2D: block size and process grid (pr * pc = the number of ranks). */
  int mb, nb, pr, pc;
} ebb_array;

/**
 * Initialises MPI (unless the program did) and ebb. A resumed process finds the checkpoint's
 * arrays, redistributed to this size, with ebb_restored(), and the state in info->state.
 */
int ebb_init(int *argc, char ***argv, ebb_info *info);

/**
 * Registers (or, by name, updates) an array ebb writes at a checkpoint: call it again whenever
 * the data pointer changes (a swap of buffers). The descriptor is copied; the data is not.
 */
int ebb_register(const ebb_array *array);

/** Registers the replicated state (rank 0's copy is written); NULL, 0 for none. */
int ebb_register_state(const void *state, size_t bytes);

/**
 * The safe point: 1 when an adaptation is pending (call ebb_adapt() now), else 0. Every rank
 * must call it once per iteration at the same place. With periodic checkpoints (ebb_checkpoint_every
 * or EBB_CHECKPOINT_EVERY=N) every Nth call writes one, collectively, and returns 0.
 */
int ebb_probe_adapt(void);

/**
 * Carries out the pending adaptation: writes every registered array and the state, then ends
 * the process with EBB_EXIT_RESTART (ebb restarts the program at the new size). Returns only if
 * the checkpoint could not be written (the program goes on at its size; the code says why).
 */
int ebb_adapt(void);

/** Periodic checkpoints every n safe points (0: none), for restarts after a node is lost. */
int ebb_checkpoint_every(int n);

/**
 * Resumed: the array `name` in its layout at this size (EBB_BLOCK: the same; 2-D: the same blocks
 * on the grid ebb_grid gives), its data malloc'd for the caller to own and free.
 */
int ebb_restored(const char *name, ebb_array *out);

/** The process grid ebb uses at `size` ranks: pr x pc = size, pr <= pc, as square as it can be. */
void ebb_grid(int size, int *pr, int *pc);

/** Elements `rank` holds of `array`. */
size_t ebb_local_count(const ebb_array *array, int rank);

/** EBB_BLOCK: the first of `rank`'s rows and how many it has. */
void ebb_block_rows(long long rows, int size, int rank, long long *first, long long *count);

/** The last error in words. */
const char *ebb_strerror(void);

/** Ends ebb and MPI (MPI_Finalize); a finished job's periodic checkpoints are removed. */
int ebb_finalize(void);

#ifdef __cplusplus
}
#endif

#endif
