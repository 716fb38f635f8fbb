/**
 * DRMS payoff rule (Moreira & Naik): an expansion P1 -> P2 pays off after
 * n_p = ceil(t_r / (t_P1 - t_P2)) iterations, t_r being the reconfiguration cost. In time form: over
 * the job's remaining run R at P1 nodes the expansion saves R * (1 - T(P2)/T(P1)); it pays off when
 * that saving exceeds t_r. The dissertation's scheduler ignored adaptation time; ebb does not.
 */
import { timeRatio } from "./scaling.ts";

export interface PayoffInput {
  from: number;
  to: number;
  /** Seconds the job still needs at `from` nodes. */
  remaining: number;
  /** The job's MTCT at `from` nodes (drives the predicted speedup). */
  mtct: number;
  /** Seconds one adaptation of this job costs (measured, or the configured default). */
  cost: number;
}

export interface Payoff {
  pays: boolean;
  /** Seconds saved over the remaining run. */
  gain: number;
  cost: number;
}

export function payoff(p: PayoffInput): Payoff {
  const gain = p.to > p.from ? Math.max(0, p.remaining) * (1 - timeRatio(p.from, p.to, p.mtct)) : 0;
  return { pays: gain > p.cost, gain, cost: p.cost };
}

/** DRMS's n_p: iterations needed before an expansion with iteration times tP1 > tP2 pays back tr. */
export function paybackIterations(tr: number, tP1: number, tP2: number): number {
  if (tP2 >= tP1) return Number.POSITIVE_INFINITY;
  return Math.ceil(tr / (tP1 - tP2));
}
