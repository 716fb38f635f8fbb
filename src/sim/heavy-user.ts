/**
 * A trace rewritten so that one user submits a given part of the work (bench fairshare, and the
 * fair-share tests): the heavy user of a lab, whose jobs are like everyone's.
 */
import { stream } from "./random.ts";
import type { TraceJob } from "./swf.ts";

/** Users drawn for a trace without user ids (lublin_256's model has none). */
export const DRAWN_USERS = 16;

/**
 * The trace with one heavy user submitting `share` of the work (processors x run time), its jobs
 * like everyone's: each job draws a number (seeded) and goes to the heavy user (a new id, above
 * every other) when it is below a threshold, the threshold found by bisection so that the heavy
 * user's work is `share` of the whole (the sets are nested, so the part grows with the threshold).
 * Jobs without a user id get one of `DRAWN_USERS` by a seeded draw first. Deterministic.
 */
export function withHeavyUser(trace: readonly TraceJob[], share: number, seed = 1): { jobs: TraceJob[]; heavy: number } {
  const draw = stream(seed, "users");
  const users = trace.map((t) => (t.user === undefined || t.user < 0 ? Math.floor(draw.next() * DRAWN_USERS) : t.user));
  const pick = stream(seed, "heavy");
  const u = trace.map(() => pick.next());
  const heavy = Math.max(0, ...users) + 1;
  let total = 0;
  for (const t of trace) total += t.procs * t.runtime;
  const partBelow = (q: number): number => {
    let w = 0;
    for (let i = 0; i < trace.length; i++) if (u[i]! < q) w += trace[i]!.procs * trace[i]!.runtime;
    return w / total;
  };
  let lo = 0;
  let hi = 1;
  for (let k = 0; k < 50; k++) {
    const mid = (lo + hi) / 2;
    if (partBelow(mid) < share) lo = mid;
    else hi = mid;
  }
  const q = Math.abs(partBelow(lo) - share) <= Math.abs(partBelow(hi) - share) ? lo : hi;
  return { jobs: trace.map((t, i) => ({ ...t, user: u[i]! < q ? heavy : users[i]! })), heavy };
}
