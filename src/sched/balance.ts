/**
 * Time balancing (dissertation §10.3.3): give a set of jobs `total` nodes so that, under linear
 * scaling, they all finish at the same time. The dissertation solves the linear system
 * x_i'/t_i = x_j'/t_j, sum n_i x_i' = total by Gaussian elimination; its solution has a closed
 * form. Job i has work w_i = n_i * t_i node-seconds; at a common finish time T it needs w_i / T
 * nodes, so T = sum w / total and size_i = total * w_i / sum w. O(n).
 *
 * With per-job bounds [lo, hi] the sizes are clamp(w_i * u, lo_i, hi_i) for the u that makes them
 * add up to `total`; found exactly by repeatedly fixing the side that overshoots more (each round
 * fixes at least one job; typically one or two rounds).
 */

export interface BalanceJob {
  /** Nodes now. */
  nodes: number;
  /** Seconds it still needs at `nodes`. */
  remaining: number;
  lo?: number;
  hi?: number;
}

/** Real-valued equal-finish sizes (no bounds). */
export function balanceExact(jobs: readonly BalanceJob[], total: number): number[] {
  let sum = 0;
  for (const j of jobs) sum += j.nodes * j.remaining;
  if (sum <= 0) return jobs.map(() => total / Math.max(1, jobs.length));
  const u = total / sum;
  return jobs.map((j) => j.nodes * j.remaining * u);
}

/** Real-valued sizes within each job's [lo, hi], adding up to `total` where the bounds allow. */
export function balanceBounded(jobs: readonly BalanceJob[], total: number): number[] {
  const n = jobs.length;
  const w = new Float64Array(n);
  const lo = new Float64Array(n);
  const hi = new Float64Array(n);
  let sumLo = 0;
  let sumHi = 0;
  for (let i = 0; i < n; i++) {
    const j = jobs[i]!;
    w[i] = Math.max(0, j.nodes * j.remaining);
    lo[i] = j.lo ?? 0;
    hi[i] = Math.max(lo[i]!, j.hi ?? Number.POSITIVE_INFINITY);
    sumLo += lo[i]!;
    sumHi += hi[i]!;
  }
  if (sumLo >= total) return Array.from(lo);
  if (sumHi <= total) return Array.from(hi);
  // 0 = free, 1 = fixed at lo, 2 = fixed at hi. Jobs without work are fixed at lo.
  const state = new Uint8Array(n);
  let fixedSum = 0;
  let freeW = 0;
  for (let i = 0; i < n; i++) {
    if (w[i]! > 0) freeW += w[i]!;
    else {
      state[i] = 1;
      fixedSum += lo[i]!;
    }
  }
  const out = new Array<number>(n);
  for (;;) {
    if (freeW <= 0) break;
    const u = (total - fixedSum) / freeW;
    let over = 0;
    let under = 0;
    for (let i = 0; i < n; i++) {
      if (state[i] !== 0) continue;
      const x = w[i]! * u;
      if (x > hi[i]!) over += x - hi[i]!;
      else if (x < lo[i]!) under += lo[i]! - x;
    }
    if (over === 0 && under === 0) {
      for (let i = 0; i < n; i++) if (state[i] === 0) out[i] = w[i]! * u;
      break;
    }
    // The side that overshoots more stays clamped at the solution (the sum is monotone in u).
    const fixHigh = over >= under;
    for (let i = 0; i < n; i++) {
      if (state[i] !== 0) continue;
      const x = w[i]! * u;
      if (fixHigh && x > hi[i]!) {
        state[i] = 2;
        fixedSum += hi[i]!;
        freeW -= w[i]!;
      } else if (!fixHigh && x < lo[i]!) {
        state[i] = 1;
        fixedSum += lo[i]!;
        freeW -= w[i]!;
      }
    }
    if (freeW <= 1e-12 * (fixedSum + 1)) freeW = 0;
  }
  for (let i = 0; i < n; i++) {
    if (state[i] === 1) out[i] = lo[i]!;
    else if (state[i] === 2) out[i] = hi[i]!;
  }
  return out;
}

export interface Balanced {
  /** Whole nodes per job: the bounded real sizes, floored (never below lo). */
  sizes: number[];
  /** Nodes of `total` the floors left over (fewer than the number of jobs), for resource filling. */
  remainder: number;
  /** The common finish time in seconds from now for unclamped jobs (real-valued sizes). */
  finish: number;
}

export function timeBalance(jobs: readonly BalanceJob[], total: number): Balanced {
  const bounded = jobs.some((j) => j.lo !== undefined || j.hi !== undefined);
  const real = bounded ? balanceBounded(jobs, total) : balanceExact(jobs, total);
  let used = 0;
  let finish = 0;
  const sizes = real.map((x, i) => {
    const j = jobs[i]!;
    const s = Math.max(j.lo ?? 0, Math.floor(x + 1e-9));
    used += s;
    if (x > 0) finish = Math.max(finish, (j.nodes * j.remaining) / x);
    return s;
  });
  return { sizes, remainder: Math.max(0, total - used), finish };
}
