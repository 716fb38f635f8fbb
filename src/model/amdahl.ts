/**
 * Speedup models. Amdahl's law with a serial fraction s: T(p) = T1 * (s + (1 - s) / p).
 * APM's Amdahl-plus-overhead model (Hungershöfer et al., eq. 3):
 *   T(p) = (1 + (p-1) c1) Tseq + (1 + p (p-1) c2) Tpar / p,
 * which expands to T(p) = a + b p + c / p with b = c1 Tseq + c2 Tpar, c = Tpar, a = Tseq - b.
 * Both are kept in that (a, b, c) form, so one evaluator serves both.
 */

/** T(p) = a + b*p + c/p seconds. */
export interface RuntimeModel {
  a: number;
  b: number;
  c: number;
}

export function runtime(m: RuntimeModel, p: number): number {
  return m.a + m.b * p + m.c / p;
}

/** S(p) = T(1) / T(p). */
export function speedup(m: RuntimeModel, p: number): number {
  return runtime(m, 1) / runtime(m, p);
}

/** DS(p) = S(p) - S(p-1): what the p-th processor adds (APM's greedy key). */
export function differentialSpeedup(m: RuntimeModel, p: number): number {
  return p <= 1 ? speedup(m, 1) : speedup(m, p) - speedup(m, p - 1);
}

/** Amdahl: T1 seconds on one node, serial fraction s in [0, 1]. */
export function amdahl(t1: number, s: number): RuntimeModel {
  if (!(s >= 0 && s <= 1)) throw new RangeError(`serial fraction must be in [0, 1], got ${s}`);
  return { a: t1 * s, b: 0, c: t1 * (1 - s) };
}

/**
 * APM eq. 3 from one measurement: at pj processors the sequential phases took tSeqAt and the
 * parallel ones tParAt; c1, c2 are the machine/application overhead parameters.
 */
export function apmFromMeasurement(pj: number, tSeqAt: number, tParAt: number, c1: number, c2: number): RuntimeModel {
  const tSeq = tSeqAt / (1 + (pj - 1) * c1);
  const tPar = (tParAt * pj) / (1 + pj * (pj - 1) * c2);
  const b = c1 * tSeq + c2 * tPar;
  return { a: tSeq - b, b, c: tPar };
}

/**
 * Least-squares fit of T(p) = a + b p + c / p to measured (p, T) points, relative errors weighted
 * equally (each row divided by its T). Needs three distinct p; b and c are kept non-negative.
 */
export function fitRuntime(points: readonly { p: number; t: number }[]): RuntimeModel {
  const distinct = new Set(points.map((x) => x.p)).size;
  if (distinct < 3) throw new RangeError("fitting needs measurements at three or more sizes");
  const solve = (cols: ((p: number) => number)[]): number[] => {
    const k = cols.length;
    const ata = Array.from({ length: k }, () => new Array<number>(k).fill(0));
    const atb = new Array<number>(k).fill(0);
    for (const { p, t } of points) {
      const row = cols.map((f) => f(p) / t);
      for (let i = 0; i < k; i++) {
        atb[i]! += row[i]!;
        for (let j = 0; j < k; j++) ata[i]![j]! += row[i]! * row[j]!;
      }
    }
    return gauss(ata, atb);
  };
  const [a, b, c] = solve([() => 1, (p) => p, (p) => 1 / p]) as [number, number, number];
  if (b >= 0 && c >= 0) return { a, b, c };
  // Constrained: drop the offending term and refit.
  if (b < 0) {
    const [a2, c2] = solve([() => 1, (p) => 1 / p]) as [number, number];
    return { a: a2, b: 0, c: Math.max(0, c2) };
  }
  const [a3, b3] = solve([() => 1, (p) => p]) as [number, number];
  return { a: a3, b: Math.max(0, b3), c: 0 };
}

/** Small dense Gaussian elimination with partial pivoting (for the 2x2 / 3x3 normal equations). */
function gauss(m: number[][], v: number[]): number[] {
  const n = v.length;
  const a = m.map((row, i) => [...row, v[i]!]);
  for (let col = 0; col < n; col++) {
    let piv = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(a[r]![col]!) > Math.abs(a[piv]![col]!)) piv = r;
    [a[col], a[piv]] = [a[piv]!, a[col]!];
    const d = a[col]![col]!;
    if (d === 0) throw new RangeError("singular system");
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const f = a[r]![col]! / d;
      for (let c = col; c <= n; c++) a[r]![c]! -= f * a[col]![c]!;
    }
  }
  return a.map((row, i) => row[n]! / row[i]!);
}
