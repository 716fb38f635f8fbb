/**
 * Queue order (batch.ts `queueOrder`) without sorting the whole queue: waiting jobs fall into runs
 * that are already in queue order among themselves, and the runs are merged. A pass orders every
 * waiting job, and a deep queue is mostly jobs of a few users (issue 36).
 *
 * Why a run is in order: without the size factor, a job's priority is its age factor (which falls
 * as its submit time grows, flat once capped) plus its user's fair-share factor, and its tier is
 * its partition's. So among the jobs of one user and one tier, a later submit time never has the
 * higher priority (floating-point addition of the same fair share keeps the order of the ages),
 * and ties fall to the submit time and the id: submit order is their queue order. The caller says
 * which run each job is in; with the size factor weighing anything, priorities differ by job and
 * the caller sorts instead. Pure.
 */
import { queueOrder } from "./batch.ts";
import type { PendingJob } from "./types.ts";

/** Submit order: earlier submitted first, then the lower id. */
export const submitOrder = (a: Pick<PendingJob, "submitTime" | "id">, b: Pick<PendingJob, "submitTime" | "id">): number => a.submitTime - b.submitTime || a.id - b.id;

/** The name of the run of a user's jobs in a tier (user names hold no NUL: tier 0's runs are named by the user alone). */
export const runKey = (user: string, tier: number | undefined): string => (tier ? `${tier}\0${user}` : user);

/**
 * `jobs` (their `priority` and `tier` set) in queue order; `runOf(i)` names the run of
 * `jobs[i]` (its user and tier), within which submit order must be queue order. The same array
 * as `[...jobs].sort(queueOrder)`, in O(n log runs) when the jobs come in submit order.
 */
export function queueOrderByRuns<J extends PendingJob>(jobs: readonly J[], runOf: (i: number) => string): J[] {
  const byRun = new Map<string, J[]>();
  for (let i = 0; i < jobs.length; i++) {
    const key = runOf(i);
    const run = byRun.get(key);
    if (run) run.push(jobs[i]!);
    else byRun.set(key, [jobs[i]!]);
  }
  const runs = [...byRun.values()];
  // Jobs usually come in id order, which is submit order; a run that does not is sorted.
  for (const run of runs) if (!inOrder(run)) run.sort(submitOrder);
  return mergeRuns(runs);
}

/** Runs, each in queue order (their `priority` and `tier` set), merged into one in queue order. */
export function mergeRuns<J extends PendingJob>(runs: J[][]): J[] {
  while (runs.length > 1) {
    const next: J[][] = [];
    for (let i = 0; i < runs.length; i += 2) next.push(i + 1 < runs.length ? merge(runs[i]!, runs[i + 1]!) : runs[i]!);
    runs = next;
  }
  return runs[0] ?? [];
}

function inOrder(run: readonly PendingJob[]): boolean {
  for (let i = 1; i < run.length; i++) if (submitOrder(run[i - 1]!, run[i]!) > 0) return false;
  return true;
}

function merge<J extends PendingJob>(a: readonly J[], b: readonly J[]): J[] {
  const out: J[] = new Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = queueOrder(a[i]!, b[j]!) <= 0 ? a[i++]! : b[j++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}
