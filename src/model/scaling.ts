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
