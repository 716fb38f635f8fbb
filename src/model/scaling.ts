/**
 * Predicted run-time ratio T(m)/T(n) for a job going from n to m nodes, from its MTCT at n.
 * An iteration at n nodes is compute c plus MPI time c*mtct; compute scales as n/m, the MPI part
 * is taken as constant (Amdahl with the MPI time as the serial part). This is conservative for
 * growth (real MPI time often grows with nodes) and makes shrinking never lower efficiency.
 */
export function timeRatio(n: number, m: number, mtct: number): number {
  if (n <= 0 || m <= 0) throw new RangeError(`node counts must be positive (got ${n} -> ${m})`);
  const k = Math.max(0, mtct);
  return (n / m + k) / (1 + k);
}

/** Parallel efficiency at m nodes relative to n nodes under the same reading. */
export function relativeEfficiency(n: number, m: number, mtct: number): number {
  return n / (m * timeRatio(n, m, mtct));
}

/**
 * The node count at which the model predicts the best efficiency for the time spent: the knee of
 * the execution-time/efficiency profile (Eager, Zahorjan & Lazowska 1989), where efficiency over
 * run time E(m)/T(m) — equivalently speedup times efficiency — is largest. Under `timeRatio`'s
 * reading (compute c*n/m, MPI time c*mtct constant) E/T ∝ m / (n + mtct*m)², largest at
 * m = n / mtct: the size where an iteration's MPI time equals its compute time. Returns the
 * better of the two whole numbers around it (at least 1), or Infinity when the loop spends no
 * time in MPI (the model sees no limit).
 */
export function kneeNodes(n: number, mtct: number): number {
  if (n <= 0) throw new RangeError(`node count must be positive (got ${n})`);
  if (!(mtct > 0)) return Number.POSITIVE_INFINITY;
  const x = n / mtct;
  const score = (m: number) => m / (n + mtct * m) ** 2;
  const lo = Math.max(1, Math.floor(x));
  const hi = Math.max(1, Math.ceil(x));
  return score(hi) > score(lo) ? hi : lo;
}
