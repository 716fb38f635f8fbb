import type { BalanceJob } from "../../src/sched/balance.ts";

/**
 * Time balancing as the dissertation solves it (eq. 10.4-10.6): rows i < n-1 say
 * x_i'/t_i - x_{i+1}'/t_{i+1} = 0, the last says sum n_i x_i' = sum n_i + idle; dense Gaussian
 * elimination with partial pivoting, then back substitution. Returns the unrounded node counts
 * x_i' * n_i. The reference the O(n) closed form is tested and benchmarked against.
 */
export function gaussianBalance(jobs: readonly BalanceJob[], idle: number): number[] {
  const n = jobs.length;
  const a = Array.from({ length: n }, () => new Float64Array(n + 1));
  for (let i = 0; i < n - 1; i++) {
    a[i]![i] = 1 / jobs[i]!.remaining;
    a[i]![i + 1] = -1 / jobs[i + 1]!.remaining;
  }
  let total = idle;
  for (let j = 0; j < n; j++) {
    a[n - 1]![j] = jobs[j]!.nodes;
    total += jobs[j]!.nodes;
  }
  a[n - 1]![n] = total;
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    [a[c], a[p]] = [a[p]!, a[c]!];
    for (let r = c + 1; r < n; r++) {
      const f = a[r]![c]! / a[c]![c]!;
      for (let k = c; k <= n; k++) a[r]![k]! -= f * a[c]![k]!;
    }
  }
  const x = new Float64Array(n);
  for (let i = n - 1; i >= 0; i--) {
    let s = a[i]![n]!;
    for (let k = i + 1; k < n; k++) s -= a[i]![k]! * x[k]!;
    x[i] = s / a[i]![i]!;
  }
  return jobs.map((j, i) => x[i]! * j.nodes);
}
