/**
 * What resizing a checkpoint-restart job (libebb, docs/adaptation.md §12) costs before one of its
 * resizes was measured: the program started again at the new size, which takes about as long as its
 * own start took, plus every node writing its part of the state and the new ranks reading it, at
 * `bandwidth` bytes per second per node. Once a resize was measured, that measure is its cost. Pure.
 */

/** Bytes per second a node writes or reads a checkpoint at (/dev/shm or a shared file system), on the low side. */
export const CHECKPOINT_BANDWIDTH = 1e9;

export interface RestartEstimate {
  /** Seconds from the job's start to its ranks' first registration (ebb_init with MPI_Init, and set-up). */
  coldStart: number;
  /** The largest state one node holds (bytes). */
  nodeBytes: number;
}

/** Seconds a checkpoint-restart adaptation is expected to take. */
export function restartCost(e: RestartEstimate, bandwidth = CHECKPOINT_BANDWIDTH): number {
  return e.coldStart + (2 * e.nodeBytes) / bandwidth;
}
