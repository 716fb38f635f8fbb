/**
 * Admit-by-shrink for jobs that would backfill (issue 35). Behind a blocked head, a short job that
 * EASY would backfill if the nodes were free (it ends before the head's reservation, or fits in the
 * nodes the reservation leaves over) waits for a running job to end: on a machine whose malleable
 * jobs grew into the idle nodes, that can be many minutes, where a shrink takes seconds. Such a job
 * is admitted by shrinking running jobs when its wait is worth more than their stretch (ebb.ts
 * prices it as it prices the head's admit), taking nodes only where the head's reservation holds:
 * from a job the reservation does not count on (it runs past it), or from one it counts on only as
 * far as that job, shrunk, is still predicted to end before it. A malleable job too few nodes can
 * be freed for is admitted at its minimum if that pays, the time it loses there priced in
 * (`atMinimum`). This file picks the jobs, when each would start otherwise, and how far each
 * running job may give. Pure.
 */
import { preferredSize, type EndColumns } from "../batch.ts";
import type { CountStart, PassInput, PendingJob, Reservation } from "../types.ts";

/** A job behind the head that would backfill if `need` more nodes were free, and when it would start otherwise (ms). */
export interface BackfillWant {
  job: PendingJob;
  need: number;
  otherwise: number;
  /** Nodes of the reservation's extra it takes (it would run past the reservation). */
  fromExtra: number;
}

/**
 * The waiting jobs behind the head (in the pass's order) that would backfill but for the nodes:
 * each ends (by its limit, started after `delay` ms) before the reservation, or fits in `extra`.
 * `free` nodes (idle, and those shrinks under way hand back) serve them in that order first; a job
 * they serve is not listed. `otherwise` is when enough running jobs are expected to end for it
 * (`endings`, in end order), the reservation's start at least if it would run past it. At most
 * `limit` jobs.
 */
export function backfillWants(q: readonly PendingJob[], started: ReadonlySet<number>, headId: number, res: Reservation, now: number, free: number, extra: number, delay: number, endings: EndColumns, limit = Number.POSITIVE_INFINITY): BackfillWant[] {
  const out: BackfillWant[] = [];
  let behind = false;
  for (const j of q) {
    if (out.length >= limit) break;
    if (j.id === headId) {
      behind = true;
      continue;
    }
    if (!behind || started.has(j.id)) continue;
    const size = preferredSize(j);
    const inTime = now + delay + j.timeLimit * 1000 <= res.start;
    if (!inTime && size > extra) continue;
    if (size <= free) {
      free -= size;
      if (!inTime) extra -= size;
      continue;
    }
    let otherwise = Number.POSITIVE_INFINITY;
    let got = free;
    for (let i = 0; i < endings.length; i++) {
      got += endings.nodes[i]!;
      if (got >= size) {
        otherwise = endings.ends[i]!;
        break;
      }
    }
    if (!inTime) otherwise = Math.max(otherwise, res.start);
    out.push({ job: j, need: size - free, otherwise, fromExtra: inTime ? 0 : size });
  }
  return out;
}

/**
 * The same want at the job's minimum, where a malleable job may start: the nodes it lacks at k =
 * its minimum, the reservation still holding (it ends before it by its limit at k, `bound` × its
 * limit, or fits in `extra`), and its start otherwise moved earlier by the time it loses running
 * on k (`ratio` = T(k) / T(asked)), so that pricing the admit by `otherwise` prices that loss too.
 * Undefined if it cannot start below its size, lacks nothing there, or the reservation would not
 * hold.
 */
export function atMinimum(w: BackfillWant, now: number, delay: number, res: Reservation, extra: number, ratio: number, bound: number): (BackfillWant & { nodes: number }) | undefined {
  const j = w.job;
  const want = preferredSize(j);
  const k = j.minNodes;
  if (!j.elastic || j.moldable || (j.sizes && j.sizes.length > 0) || k >= want || !(ratio >= 1) || !Number.isFinite(ratio)) return undefined;
  const need = w.need - (want - k);
  if (need <= 0) return undefined;
  const inTime = now + delay + j.timeLimit * bound * 1000 <= res.start;
  if (!inTime && k > extra) return undefined;
  const otherwise = w.otherwise - j.timeLimit * (ratio - 1) * 1000;
  return { job: j, need, otherwise, fromExtra: inTime ? 0 : k, nodes: k };
}

/**
 * The fewest nodes a running job may keep when it gives nodes for a backfill: its minimum if the
 * reservation does not count on it (`endNow` after `resStart`), else the smallest size at which it
 * is still predicted to end (`endAt`, ms, not earlier for fewer nodes) before the reservation;
 * its current size if none.
 */
export function donorFloor(nodes: number, minNodes: number, endNow: number, resStart: number, endAt: (k: number) => number): number {
  if (endNow > resStart) return minNodes;
  // Fewer nodes never end sooner: the smallest size still in time, by bisection.
  let lo = minNodes;
  let hi = nodes;
  if (endAt(lo) <= resStart) return lo;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (endAt(mid) <= resStart) hi = mid;
    else lo = mid;
  }
  return hi;
}
