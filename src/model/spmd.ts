/**
 * SPMD-phase model (dissertation §10.3.2): the MPI-to-compute time ratio (MTCT) of a job's
 * distributed loop, as an average since the last adaptation and as a recent trend over a window.
 */

/** One timing sample: when it was taken (epoch ms) and the loop's MPI time / compute time. */
export interface MtctSample {
  time: number;
  mtct: number;
  /** Iterations the job's ranks made in the window (summed), when known: its pace (sched/moves.ts). */
  iterations?: number;
}

export interface SpmdPhase {
  /** Mean MTCT over every sample given (the caller passes samples since the last adaptation). */
  average: number;
  /** Mean MTCT of the samples taken in the last `window` seconds (the newest one if none). */
  trend: number;
  /** How many samples the average is over. */
  count: number;
}

/**
 * Samples must be those since the job's last adaptation (the model is reset by an adaptation);
 * samples taken after `now` are ignored. Returns undefined when there are none.
 */
export function spmdPhase(samples: readonly MtctSample[], now: number, windowSec: number): SpmdPhase | undefined {
  let sum = 0;
  let count = 0;
  let recentSum = 0;
  let recentCount = 0;
  let newest: MtctSample | undefined;
  const from = now - windowSec * 1000;
  for (const s of samples) {
    if (s.time > now || !Number.isFinite(s.mtct) || s.mtct < 0) continue;
    sum += s.mtct;
    count++;
    if (s.time >= from) {
      recentSum += s.mtct;
      recentCount++;
    }
    if (!newest || s.time >= newest.time) newest = s;
  }
  if (count === 0 || !newest) return undefined;
  return { average: sum / count, trend: recentCount > 0 ? recentSum / recentCount : newest.mtct, count };
}
