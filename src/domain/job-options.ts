/**
 * What a job may ask for beyond its size, as every layer names it: its dependency on other jobs,
 * and its own elastic-scheduler settings. The store keeps both as JSON columns of the job's row,
 * the scheduler reads them (`sched/eligibility.ts`, `sched/config.ts`), the API parses them.
 */

export type DependencyType = "after" | "afterany" | "afterok" | "afternotok" | "singleton";

/** A dependency with every job named by its id (array references expanded when it was submitted). */
export interface Dependency {
  any: boolean;
  /** Cancel the job once the dependency can never be met (sbatch --kill-on-invalid-dep=yes), instead of leaving it waiting. */
  kill?: true;
  terms: ({ type: Exclude<DependencyType, "singleton">; jobs: number[] } | { type: "singleton" })[];
}

/** What a job may set for itself (sched/config.ts bounds it by the admin limits). The interval stays cluster-wide (one timer). */
export interface JobOverrides {
  upper?: number;
  lower?: number;
  window?: number;
  minSamples?: number;
  settle?: number;
  payoff?: boolean;
}

/** sbatch --signal: `signal` (a name such as "SIGUSR1") `seconds` before the time limit, to the batch shell only (`batchOnly`) or to every step. */
export interface JobSignal {
  signal: string;
  seconds: number;
  batchOnly: boolean;
}

/** Signals a job may ask for, by number as `kill -l` numbers them on Linux. */
const SIGNALS: Record<string, number> = { HUP: 1, INT: 2, QUIT: 3, ABRT: 6, KILL: 9, USR1: 10, USR2: 12, ALRM: 14, TERM: 15, CONT: 18, STOP: 19, TSTP: 20, URG: 23, XCPU: 24, XFSZ: 25, VTALRM: 26, PROF: 27, WINCH: 28, POLL: 29, PWR: 30 };
/** Their names as the wire and process.kill take them. */
export const JOB_SIGNALS = Object.keys(SIGNALS).map((n) => `SIG${n}`) as [string, ...string[]];
/** The most seconds before the limit (Slurm's is 0xffff). */
const MAX_SIGNAL_TIME = 65535;

/** sbatch's `--signal=[B:]SIG[@TIME]`: SIG a name (USR1, SIGUSR1) or number, TIME seconds (default 60). */
export function parseSignalSpec(text: string): JobSignal | { error: string } {
  const m = /^(?:([A-Za-z]+):)?([A-Za-z0-9]+)(?:@(\d+))?$/.exec(text.trim());
  if (!m) return { error: `"${text}" is not [B:]SIGNAL[@SECONDS], e.g. B:USR1@90` };
  if (m[1] !== undefined && m[1].toUpperCase() !== "B")
    return { error: `"${m[1]}:" is not B: (the batch shell only)${m[1].toUpperCase() === "R" ? "; R: (a reservation's end) needs reservations, which ebb does not have" : ""}` };
  const raw = m[2]!.toUpperCase();
  const byNumber = /^\d+$/.test(raw) ? Object.entries(SIGNALS).find(([, n]) => n === Number(raw))?.[0] : undefined;
  const name = byNumber ?? raw.replace(/^SIG/, "");
  if (SIGNALS[name] === undefined) return { error: `${m[2]} is not a signal ebb sends (${Object.keys(SIGNALS).join(", ")}, or their numbers)` };
  const seconds = m[3] === undefined ? 60 : Number(m[3]);
  if (seconds > MAX_SIGNAL_TIME) return { error: `@${m[3]}: at most ${MAX_SIGNAL_TIME} seconds before the limit` };
  return { signal: `SIG${name}`, seconds, batchOnly: m[1] !== undefined };
}
