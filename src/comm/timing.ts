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
 * While the rings' polling loop runs a turn (or a receive reads the rings before it waits): the
 * time that turn began (or the receive was entered), taken as the end of the calls it settles, so
 * that no clock read (~40 ns) lies between a message's arrival and the program's resumption. Such a
 * call is counted up to at most one polling turn (32 reads of the rings, well under a microsecond)
 * short. 0 outside them: a call then ends at a clock read.
 */
let settleAt = 0;

/** The polling loop's turn (or a receive's look at the rings) begins at `at`; 0 when it ends. */
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
