/**
 * The dissertation's scheduler (policy `ers`): the elastic batch scheduler the dissertation left unbuilt (moldable starts in
 * FCFS order, a reservation for the first job that cannot start, EASY backfilling around it),
 * then the elastic runtime scheduler (planElastic) on what the batch pass left.
 */
import { planElastic, type ElasticPlan } from "../elastic.ts";
import type { PassInput, PassPlan } from "../types.ts";
import { batch, countStarts, firstWaiting, queue } from "./common.ts";

export interface ErsPlan extends PassPlan {
  elastic: ElasticPlan;
}

export function planErs(input: PassInput): ErsPlan {
  const q = queue(input);
  const b = batch(input, q, { scaleLimits: true });
  const elastic = planElastic({
    now: input.now,
    upNodes: input.upNodes,
    idleNodes: b.free,
    running: input.running,
    waiting: firstWaiting(input, q, b.starts, input.config.admitDepth + 1),
    config: input.config,
    limits: input.limits,
    batchReservation: b.reservation,
    batchExtra: b.extra,
  });
  const reservations = [...elastic.reservations];
  if (b.reservation && !reservations.some((r) => r.jobId === b.reservation!.jobId)) reservations.unshift(b.reservation);
  return { starts: countStarts(b), resizes: elastic.resizes, reservations, notes: elastic.notes, elastic };
}
