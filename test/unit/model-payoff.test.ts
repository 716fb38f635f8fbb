import { describe, expect, test } from "bun:test";
import { payoff, paybackIterations } from "../../src/model/payoff.ts";
import { relativeEfficiency, timeRatio } from "../../src/model/scaling.ts";

describe("payoff rule (DRMS)", () => {
  test("n_p = ceil(t_r / (t_P1 - t_P2)) reproduces DRMS Table 8 (Jacobi)", () => {
    expect(paybackIterations(12.99, 0.123, 0.063)).toBe(217);
    expect(paybackIterations(12.99, 0.126, 0.063)).toBe(207);
    expect(paybackIterations(5, 1, 1)).toBe(Number.POSITIVE_INFINITY);
  });

  test("grow only if the time saved over the remaining run exceeds the cost", () => {
    // 8 -> 16 with MTCT 0: time halves, saving half the remaining time.
    expect(payoff({ from: 8, to: 16, remaining: 100, mtct: 0, cost: 49.9 }).pays).toBe(true);
    expect(payoff({ from: 8, to: 16, remaining: 100, mtct: 0, cost: 50 }).pays).toBe(false);
    expect(payoff({ from: 8, to: 16, remaining: 100, mtct: 0, cost: 50 }).gain).toBeCloseTo(50, 10);
    // A larger MTCT means less gain from the same grow.
    expect(payoff({ from: 8, to: 16, remaining: 100, mtct: 1, cost: 0 }).gain).toBeCloseTo(25, 10);
    // A shrink never "pays" as a grow.
    expect(payoff({ from: 8, to: 4, remaining: 100, mtct: 0, cost: 0 }).pays).toBe(false);
  });

  test("MTCT reading: the MPI part does not shrink, so efficiency only falls with more nodes", () => {
    expect(timeRatio(8, 16, 0)).toBe(0.5);
    expect(timeRatio(8, 16, 0.1)).toBeCloseTo((0.5 + 0.1) / 1.1, 12);
    expect(relativeEfficiency(8, 4, 0.1)).toBeGreaterThan(1);
    expect(relativeEfficiency(8, 16, 0.1)).toBeLessThan(1);
    expect(() => timeRatio(0, 4, 0)).toThrow();
  });
});
