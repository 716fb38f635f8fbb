/** The static baselines: every job rigid at its requested size, never resized. */
import type { PassInput, PassPlan } from "../types.ts";
import { batch, countStarts, queue } from "./common.ts";

function planRigid(input: PassInput, backfill: boolean): PassPlan {
  const b = batch(input, queue(input), { rigid: true, backfill });
  return { starts: countStarts(b), resizes: [], reservations: b.reservation ? [b.reservation] : [], notes: [] };
}

/** First come, first served: nothing starts ahead of a blocked job. */
export const planFcfs = (input: PassInput): PassPlan => planRigid(input, false);

/** FCFS with EASY backfilling. */
export const planEasy = (input: PassInput): PassPlan => planRigid(input, true);
