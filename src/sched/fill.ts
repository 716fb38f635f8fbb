/**
 * Resource filling (dissertation §10.3.3): hand idle nodes to jobs one job at a time, the job with
 * the longest remaining time first (that lowers the makespan), each up to its range's top, until
 * the nodes or the jobs run out. Completion times need not match; priorities play no part.
 */

export interface FillJob {
  id: number;
  nodes: number;
  /** The most nodes it may have (its RRV range top). */
  hi: number;
  /** Seconds it still needs at `nodes`. */
  remaining: number;
}

export interface Filled {
  /** Job id -> new size, for jobs that grow. */
  grants: Map<number, number>;
  /** Idle nodes nobody took. */
  left: number;
  /** Job id -> why it did not grow (from `accept`). */
  refused: Map<number, string>;
}

/**
 * `accept(job, to)` may veto a grow (e.g. the payoff rule) by returning a reason; it is asked once
 * per job, for the largest size the job could get.
 */
export function resourceFill(jobs: readonly FillJob[], idle: number, accept?: (job: FillJob, to: number) => string | undefined): Filled {
  const order = [...jobs].sort((a, b) => b.remaining - a.remaining || a.id - b.id);
  const grants = new Map<number, number>();
  const refused = new Map<number, string>();
  let left = Math.max(0, idle);
  for (const job of order) {
    if (left === 0) break;
    const add = Math.min(left, job.hi - job.nodes);
    if (add <= 0) continue;
    const veto = accept?.(job, job.nodes + add);
    if (veto) {
      refused.set(job.id, veto);
      continue;
    }
    grants.set(job.id, job.nodes + add);
    left -= add;
  }
  return { grants, left, refused };
}
