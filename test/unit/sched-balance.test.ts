import { describe, expect, test } from "bun:test";
import { balanceBounded, balanceExact, timeBalance, type BalanceJob } from "../../src/sched/balance.ts";
import { mulberry32 } from "../../src/sim/random.ts";
import { gaussianBalance as gaussian } from "../support/gaussian.ts";


/** Bisection on u for sum clamp(w_i u, lo_i, hi_i) = total: an independent bounded solver. */
function bisect(jobs: readonly BalanceJob[], total: number): number[] {
  const at = (u: number) => jobs.map((j) => Math.min(j.hi ?? Infinity, Math.max(j.lo ?? 0, j.nodes * j.remaining * u)));
  let lo = 0;
  let hi = 1;
  while (at(hi).reduce((x, y) => x + y, 0) < total && hi < 1e12) hi *= 2;
  for (let k = 0; k < 200; k++) {
    const mid = (lo + hi) / 2;
    if (at(mid).reduce((x, y) => x + y, 0) < total) lo = mid;
    else hi = mid;
  }
  return at((lo + hi) / 2);
}

function randomJobs(rand: () => number, n: number, bounded: boolean): BalanceJob[] {
  return Array.from({ length: n }, () => {
    const nodes = 1 + Math.floor(rand() * 32);
    const job: BalanceJob = { nodes, remaining: 10 + rand() * 5000 };
    if (bounded) {
      job.lo = Math.max(1, Math.floor(nodes / (1 + rand() * 4)));
      job.hi = nodes + Math.floor(rand() * nodes * 2);
    }
    return job;
  });
}

describe("time balancing", () => {
  test("the closed form equals Gaussian elimination of the dissertation's system, idle nodes included", () => {
    const rand = mulberry32(7).next;
    for (let round = 0; round < 200; round++) {
      const jobs = randomJobs(rand, 2 + Math.floor(rand() * 12), false);
      const idle = Math.floor(rand() * 20);
      const total = jobs.reduce((a, j) => a + j.nodes, 0) + idle;
      const ours = balanceExact(jobs, total);
      const ref = gaussian(jobs, idle);
      ours.forEach((x, i) => expect(x).toBeCloseTo(ref[i]!, 6));
      // Equal finishing times under linear scaling.
      const finish = jobs.map((j, i) => (j.nodes * j.remaining) / ours[i]!);
      for (const f of finish) expect(f).toBeCloseTo(finish[0]!, 6);
    }
  });

  test("bounded balancing matches a bisection solver for random bounds", () => {
    const rand = mulberry32(11).next;
    for (let round = 0; round < 300; round++) {
      const jobs = randomJobs(rand, 1 + Math.floor(rand() * 15), true);
      const sumLo = jobs.reduce((a, j) => a + j.lo!, 0);
      const sumHi = jobs.reduce((a, j) => a + j.hi!, 0);
      const total = sumLo + Math.floor(rand() * (sumHi - sumLo + 1));
      const ours = balanceBounded(jobs, total);
      const ref = bisect(jobs, total);
      ours.forEach((x, i) => {
        expect(x).toBeGreaterThanOrEqual(jobs[i]!.lo! - 1e-9);
        expect(x).toBeLessThanOrEqual(jobs[i]!.hi! + 1e-9);
        expect(x).toBeCloseTo(ref[i]!, 4);
      });
      expect(ours.reduce((a, b) => a + b, 0)).toBeCloseTo(total, 6);
    }
  });

  test("whole nodes: floors within the bounds, the remainder is what the floors left (< one per job)", () => {
    const rand = mulberry32(3).next;
    for (let round = 0; round < 300; round++) {
      const jobs = randomJobs(rand, 1 + Math.floor(rand() * 10), rand() < 0.5);
      const total = jobs.reduce((a, j) => a + (j.lo ?? 0), 0) + Math.floor(rand() * 60);
      const real = balanceBounded(jobs, total);
      const b = timeBalance(jobs, total);
      b.sizes.forEach((s, i) => {
        expect(Number.isInteger(s)).toBe(true);
        expect(s).toBe(Math.max(jobs[i]!.lo ?? 0, Math.floor(real[i]! + 1e-9)));
      });
      const used = b.sizes.reduce((a, s) => a + s, 0);
      if (real.reduce((a, x) => a + x, 0) >= total - 1e-6) {
        expect(used + b.remainder).toBe(total);
        expect(b.remainder).toBeLessThan(jobs.length);
      }
    }
  });

  test("two jobs: the longer one gets the nodes (Fig. 10.7 shape)", () => {
    const b = timeBalance([{ nodes: 4, remaining: 300 }, { nodes: 4, remaining: 100 }], 8);
    expect(b.sizes).toEqual([6, 2]);
    expect(b.finish).toBeCloseTo(200, 9);
  });

  test("bounds that cannot be met clamp to them", () => {
    expect(balanceBounded([{ nodes: 4, remaining: 10, lo: 3, hi: 6 }], 2)).toEqual([3]);
    expect(balanceBounded([{ nodes: 4, remaining: 10, lo: 3, hi: 6 }], 9)).toEqual([6]);
  });
});
