import { describe, expect, test } from "bun:test";
import { amdahl, apmFromMeasurement, differentialSpeedup, fitRuntime, runtime, speedup } from "../../src/model/amdahl.ts";

describe("runtime models", () => {
  test("Amdahl: T(p) = T1 (s + (1-s)/p)", () => {
    const m = amdahl(100, 0.1);
    expect(runtime(m, 1)).toBeCloseTo(100, 12);
    expect(runtime(m, 10)).toBeCloseTo(19, 12);
    expect(speedup(m, 1e9)).toBeCloseTo(10, 5);
    expect(() => amdahl(1, 1.5)).toThrow();
  });

  test("APM eq. 3 reproduces the measurement it was built from, and its minimum is at sqrt(Tpar / b)", () => {
    const m = apmFromMeasurement(4, 30, 70, 0.02, 0.005);
    expect(runtime(m, 4)).toBeCloseTo(100, 9);
    const best = Math.sqrt(m.c / m.b);
    expect(runtime(m, best)).toBeLessThan(runtime(m, best * 0.9));
    expect(runtime(m, best)).toBeLessThan(runtime(m, best * 1.1));
    expect(differentialSpeedup(m, Math.ceil(best) + 5)).toBeLessThan(0);
  });

  test("least squares recovers a model from its own points", () => {
    const truth = { a: 20, b: 3, c: 900 };
    const fit = fitRuntime([1, 2, 4, 8, 16].map((p) => ({ p, t: runtime(truth, p) })));
    expect(fit.a).toBeCloseTo(20, 6);
    expect(fit.b).toBeCloseTo(3, 6);
    expect(fit.c).toBeCloseTo(900, 6);
    expect(() => fitRuntime([{ p: 1, t: 1 }, { p: 2, t: 1 }])).toThrow();
  });

  test("differential speedup is the speedup the next processor adds", () => {
    const m = amdahl(100, 0.5);
    expect(differentialSpeedup(m, 2)).toBeCloseTo(speedup(m, 2) - 1, 12);
  });
});
