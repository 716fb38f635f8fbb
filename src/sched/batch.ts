/**
 * One batch scheduling pass: FCFS by submit time with EASY backfilling (Lifka 1995; Mu'alem &
 * Feitelson 2001). Jobs start in queue order while they fit; the first that does not fit gets a
 * reservation at the earliest time enough nodes are sure to be free (the shadow time); a later job
 * may then start only if it ends before the shadow time or uses nodes the reservation leaves over.
 * Pure: no clock, no I/O. Nodes are handed out in name order.
 */
import type { BatchInput, BatchPlan, PendingJob, Reservation, RunningJob, Start } from "./types.ts";

export function queueOrder(a: PendingJob, b: PendingJob): number {
  return a.submitTime - b.submitTime || a.id - b.id;
}

export function planBatch(input: BatchInput): BatchPlan {
  const free = input.nodes
    .filter((n) => n.up && n.jobId === undefined)
    .map((n) => n.name)
    .sort(compareNames);
  const upCount = input.nodes.filter((n) => n.up).length;
  const queue = [...input.pending].sort(queueOrder);
  const starts: Start[] = [];
  const waiting = new Map<number, string>();
  let reservation: Reservation | undefined;
  let extra = 0;
  // Jobs started in this pass end by now + limit; they count toward the shadow time.
  const running: RunningJob[] = [...input.running];

  for (const job of queue) {
    if (job.minNodes > upCount) {
      waiting.set(job.id, `needs ${job.minNodes} nodes, ${upCount} are up`);
      continue;
    }
    if (!reservation) {
      const size = Math.min(job.maxNodes, free.length);
      if (size >= job.minNodes) {
        const nodes = free.splice(0, size);
        starts.push({ jobId: job.id, nodes, reason: "fcfs" });
        running.push({ id: job.id, nodes, expectedEnd: input.now + job.timeLimit * 1000 });
        continue;
      }
      const shadow = shadowTime(running, free.length, job.minNodes, input.now);
      reservation = { jobId: job.id, start: shadow.time, nodes: job.minNodes };
      extra = shadow.extra;
      waiting.set(job.id, "resources: first in line, nodes reserved");
      continue;
    }
    // EASY backfill behind the reservation.
    if (job.minNodes > free.length) {
      waiting.set(job.id, "resources");
      continue;
    }
    const endsInTime = input.now + job.timeLimit * 1000 <= reservation.start;
    const size = endsInTime ? Math.min(job.maxNodes, free.length) : Math.min(job.maxNodes, free.length, extra);
    if (size < job.minNodes) {
      waiting.set(job.id, `priority: would delay job ${reservation.jobId}`);
      continue;
    }
    const nodes = free.splice(0, size);
    if (!endsInTime) extra -= size;
    starts.push({ jobId: job.id, nodes, reason: "backfill" });
  }
  return { starts, reservation, waiting };
}

/**
 * The earliest time `need` nodes are free, given `free` idle nodes now and running jobs releasing
 * theirs at their expected ends; `extra` is how many nodes beyond `need` are free at that time.
 */
export function shadowTime(running: readonly RunningJob[], free: number, need: number, now: number): { time: number; extra: number } {
  if (free >= need) return { time: now, extra: free - need };
  const byEnd = [...running].sort((a, b) => a.expectedEnd - b.expectedEnd);
  let avail = free;
  for (const r of byEnd) {
    avail += r.nodes.length;
    if (avail >= need) return { time: Math.max(now, r.expectedEnd), extra: avail - need };
  }
  return { time: Number.POSITIVE_INFINITY, extra: 0 };
}

/** node2 < node10: digits compare as numbers. */
export const compareNames: (a: string, b: string) => number = new Intl.Collator("en", { numeric: true }).compare;
