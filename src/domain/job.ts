/** A job's states and kinds, and which state may follow which: the one list every layer uses. */

export const JOB_STATES = ["PENDING", "RUNNING", "ADAPTING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"] as const;
export type JobState = (typeof JOB_STATES)[number];

/** States of a job that still holds (or waits for) nodes. */
export const ACTIVE_STATES = ["PENDING", "RUNNING", "ADAPTING"] as const satisfies readonly JobState[];
/**
 * States a job ends in; none of them is ever left, but for one correction: a FAILED job whose OOM
 * kill is reported after its exit (the kernel killed its script) is recorded OUT_OF_MEMORY.
 */
/** OUT_OF_MEMORY: a process of the job went over its memory (the cgroup's OOM killer ended it). */
export const FINAL_STATES = ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"] as const satisfies readonly JobState[];
export type FinalState = (typeof FINAL_STATES)[number];

export const isActive = (s: string): boolean => (ACTIVE_STATES as readonly string[]).includes(s);
export const isFinal = (s: string): s is FinalState => (FINAL_STATES as readonly string[]).includes(s);

/**
 * A batch job runs a script on its first node; a command job (API `argv`) launches its program as
 * step 0; an alloc is an allocation held by an `ebb run` outside a job.
 */
export const JOB_KINDS = ["batch", "command", "alloc"] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/**
 * The legal transitions. A pending job starts, or ends without running (cancelled, or failed at
 * start: its step could not fit the nodes it got); a running job adapts (a resize or a fault)
 * and comes back, or ends in any way; an adapting job ends too (a node lost, a time limit).
 */
const NEXT: Record<JobState, readonly JobState[]> = {
  PENDING: ["RUNNING", "CANCELLED", "FAILED"],
  RUNNING: ["ADAPTING", ...FINAL_STATES],
  ADAPTING: ["RUNNING", ...FINAL_STATES],
  COMPLETED: [],
  FAILED: [],
  CANCELLED: [],
  TIMEOUT: [],
  NODE_FAIL: [],
  OUT_OF_MEMORY: [],
};

export const mayBecome = (from: JobState, to: JobState): boolean => NEXT[from].includes(to);

/** Whose a job is, for per-user counts and shares: a job of no known user counts as this one's. */
export const NOBODY = "(none)";
export const ownerOf = (row: { user: string | null }): string => row.user ?? NOBODY;
