/** The static baselines: every job rigid at its requested size, never resized. */
import type { PassInput, PassPlan } from "../types.ts";
import { batch, countStarts, queue } from "./common.ts";

/** First come, first served: nothing starts ahead of a blocked job. */
export function planFcfs(input: PassInput): PassPlan {
  const b = batch(input, queue(input), { rigid: true, backfill: false });
  return { starts: countStarts(b), resizes: [], reservations: b.reservation ? [b.reservation] : [], notes: [] };
}

/** FCFS with EASY backfilling. */
export function planEasy(input: PassInput): PassPlan {
  const b = batch(input, queue(input), { rigid: true, backfill: true });
  return { starts: countStarts(b), resizes: [], reservations: b.reservation ? [b.reservation] : [], notes: [] };
}
