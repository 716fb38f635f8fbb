/**
 * A trace rewritten so that one user submits a given part of the work (bench fairshare, and the
 * fair-share tests): the trace's heaviest user, made to submit exactly that part, every other user
 * lighter.
 */
import { stream } from "./random.ts";
import type { TraceJob } from "./swf.ts";

/** Users drawn for a trace without user ids (lublin_256's model has none). */
export const DRAWN_USERS = 16;

/**
 * The trace with its heaviest user (by work, processors x run time; the lowest id on a tie)
 * submitting `share` of the work. Below it, it takes other users' jobs; above it, it gives jobs
 * away, each to another user drawn uniformly (so no other user becomes a second heavy one; a new
 * user when there is no other). The jobs moved are drawn like-for-like: each job draws a number
 * (seeded), those below a threshold move, the threshold found by bisection so that the part is as
 * close to `share` as whole jobs allow (the sets are nested, so the work moved grows with it).
 * Jobs without a user id get one of `DRAWN_USERS` by a seeded draw first. Deterministic.
 */
export function withHeavyUser(trace: readonly TraceJob[], share: number, seed = 1): { jobs: TraceJob[]; heavy: number } {
  const draw = stream(seed, "users");
  const users = trace.map((t) => (t.user === undefined || t.user < 0 ? Math.floor(draw.next() * DRAWN_USERS) : t.user));
  const work = trace.map((t) => t.procs * t.runtime);
  let total = 0;
  const byUser = new Map<number, number>();
  for (let i = 0; i < trace.length; i++) {
    total += work[i]!;
    byUser.set(users[i]!, (byUser.get(users[i]!) ?? 0) + work[i]!);
  }
  let heavy = -1;
  for (const [u, w] of byUser) if (heavy < 0 || w > byUser.get(heavy)! || (w === byUser.get(heavy)! && u < heavy)) heavy = u;
  if (heavy < 0) return { jobs: [], heavy: 0 };
  const pick = stream(seed, "heavy");
  const u = trace.map(() => pick.next());
  const mine = byUser.get(heavy)!;
  const out = [...users];
  const taking = mine < share * total;
  // Taken from the others, or given away from its own.
  const from = users.flatMap((x, i) => ((x === heavy) !== taking ? [i] : []));
  const q = threshold(from, u, work, Math.abs(share * total - mine));
  const others = [...byUser.keys()].filter((x) => x !== heavy).sort((a, b) => a - b);
  if (others.length === 0) others.push(Math.max(...users) + 1);
  const to = stream(seed, "to");
  for (const i of from) if (u[i]! < q) out[i] = taking ? heavy : others[Math.floor(to.next() * others.length)]!;
  return { jobs: trace.map((t, i) => ({ ...t, user: out[i]! })), heavy };
}

/** The draw below which the jobs `idx` make the work closest to `target`. */
function threshold(idx: readonly number[], u: readonly number[], work: readonly number[], target: number): number {
  const below = (q: number): number => {
    let w = 0;
    for (const i of idx) if (u[i]! < q) w += work[i]!;
    return w;
  };
  let lo = 0;
  let hi = 1;
  for (let k = 0; k < 50; k++) {
    const mid = (lo + hi) / 2;
    if (below(mid) < target) lo = mid;
    else hi = mid;
  }
  return Math.abs(below(lo) - target) <= Math.abs(below(hi) - target) ? lo : hi;
}
