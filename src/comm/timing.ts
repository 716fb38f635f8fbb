/**
 * Wall time spent inside comm calls, for the per-iteration (probe to probe) accounting of the
 * adaptation code. The clock runs while at least one public operation is unsettled, so
 * overlapping calls (Promise.all of sends, a collective that runs p2p inside) count once.
 * Process-wide: one counter, whatever the number of communicators.
 */
import { cfgTime } from "./cfg.ts";

let depth = 0;
let since = 0;
let total = 0;
/**
 * While a receive reads the rings before it waits (comm.ts): its entry time, taken as the end of
 * the calls that settle meanwhile (a message that was already there: an instant, as a small send
 * is), with no clock read more (~40 ns). 0 otherwise: a call then ends at a clock read.
 */
let settleAt = 0;

/** Calls settled from now on end at `at` (a time already read), until settling(0). */
export function settling(at: number): void {
  settleAt = at;
}

/** A public call begins; returns the time (ns) for its CFG step. */
export function enter(): number {
  const now = Bun.nanoseconds();
  if (depth++ === 0) since = now;
  return now;
}

export function leave(): void {
  if (--depth === 0) {
    const dt = (settleAt >= since ? settleAt : Bun.nanoseconds()) - since;
    total += dt;
    cfgTime(dt);
  }
}

/** Runs `op` as one public comm call: counted from call to settlement. */
export async function timed<T>(op: () => Promise<T>): Promise<T> {
  enter();
  try {
    return await op();
  } finally {
    leave();
  }
}

/** Nanoseconds spent inside comm calls since the last reset (an open interval counts up to now). */
export function commTime(): number {
  return depth > 0 ? total + (Bun.nanoseconds() - since) : total;
}

/** Returns commTime() and restarts the count from zero (calls in flight keep counting from now). */
export function resetCommTime(): number {
  const now = Bun.nanoseconds();
  const t = depth > 0 ? total + (now - since) : total;
  total = 0;
  if (depth > 0) since = now;
  return t;
}

/** How many public comm calls are in flight (0 outside comm calls). */
export function commCallsInFlight(): number {
  return depth;
}
