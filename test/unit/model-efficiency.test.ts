import { describe, expect, test } from "bun:test";
import { efficiency } from "../../src/model/efficiency.ts";
import { kneeNodes, relativeEfficiency, timeRatio } from "../../src/model/scaling.ts";

describe("kneeNodes: where efficiency per run time is best", () => {
  test("it is the integer maximum of E(m)/T(m) under timeRatio's reading (brute force)", () => {
    for (const n of [1, 2, 3, 8, 16]) {
      for (const k of [0.01, 0.1, 0.37, 1, 2.5, 9]) {
        let best = 1;
        let bestScore = -1;
        for (let m = 1; m <= 2000; m++) {
          const score = relativeEfficiency(n, m, k) / timeRatio(n, m, k);
          if (score > bestScore + 1e-15) [best, bestScore] = [m, score];
        }
        expect(kneeNodes(n, k)).toBe(best);
      }
    }
  });

  test("MPI time equal to compute time is the knee: 4 nodes at MTCT 1 stay at 4; no MPI time has no knee", () => {
    expect(kneeNodes(4, 1)).toBe(4);
    expect(kneeNodes(2, 0.1)).toBe(20);
    expect(kneeNodes(2, 4)).toBe(1);
    expect(kneeNodes(2, 0)).toBe(Number.POSITIVE_INFINITY);
    expect(() => kneeNodes(0, 1)).toThrow(/node count/);
  });
});

describe("efficiency summary of a run", () => {
  test("per loop shares and best sizes; the job over outermost loops by time, nested loops not counted twice", () => {
    const e = efficiency(2, [
      { key: "A", parent: null, loopTime: 100, mpiTime: 10 },
      { key: "B", parent: null, loopTime: 300, mpiTime: 200 },
      { key: "B.inner", parent: "B", loopTime: 50, mpiTime: 50 },
    ])!;
    expect(e.loops.map((l) => [l.key, l.commShare, l.bestNodes])).toEqual([
      ["A", 0.1, 18],
      ["B", 2 / 3, 1],
      ["B.inner", 1, 1],
    ]);
    expect(e.commShare).toBeCloseTo(210 / 400, 12);
    expect(e.mtct).toBeCloseTo(210 / 190, 12);
    expect(e.bestNodes).toBe(kneeNodes(2, 210 / 190));
    expect(efficiency(2, [{ key: "A", parent: null, loopTime: 5, mpiTime: 0 }])!.bestNodes).toBeNull();
    expect(efficiency(2, [{ key: "A", parent: null, loopTime: 0, mpiTime: 0 }])).toBeUndefined();
  });
});
