import { describe, expect, test } from "bun:test";
import { resourceRange } from "../../src/sched/rrv.ts";

const job = { nodes: 16, minNodes: 4, maxNodes: 24 };
const at = (average: number, trend: number, j = job) => resourceRange(j, { average, trend, count: 5 }, 0.1, 0.01);
const eps = 1e-9;

describe("resource range vector", () => {
  test("above the upper threshold (either value): halve, mandatory", () => {
    expect(at(0.1 + eps, 0.05)).toMatchObject({ kind: "shrink", lo: 4, hi: 8 });
    expect(at(0.05, 0.1 + eps)).toMatchObject({ kind: "shrink", hi: 8 });
    expect(at(0.005, 0.5).kind).toBe("shrink");
  });

  test("exactly at the upper threshold is inside the band", () => {
    expect(at(0.1, 0.1)).toMatchObject({ kind: "hold", lo: 4, hi: 16 });
    expect(at(0.1 - eps, 0.05).kind).toBe("hold");
  });

  test("halving never goes below minNodes and floors odd sizes", () => {
    expect(at(0.5, 0.5, { nodes: 6, minNodes: 4, maxNodes: 8 })).toMatchObject({ kind: "shrink", hi: 4 });
    expect(at(0.5, 0.5, { nodes: 7, minNodes: 1, maxNodes: 8 }).hi).toBe(3);
    expect(at(0.5, 0.5, { nodes: 4, minNodes: 4, maxNodes: 8 }).hi).toBe(4);
  });

  test("both below the lower threshold: up to double, never above maxNodes", () => {
    expect(at(0.01 - eps, 0.001)).toMatchObject({ kind: "grow", lo: 4, hi: 24 });
    expect(at(0.001, 0.001, { nodes: 5, minNodes: 1, maxNodes: 100 }).hi).toBe(10);
  });

  test("exactly at the lower threshold is inside the band", () => {
    expect(at(0.01, 0.01).kind).toBe("hold");
    expect(at(0.01, 0.005).kind).toBe("unsteady");
  });

  test("one in the band, one below: not a candidate", () => {
    expect(at(0.05, 0.005)).toMatchObject({ kind: "unsteady", lo: 16, hi: 16 });
    expect(at(0.005, 0.05).kind).toBe("unsteady");
  });

  test("the reason carries the numbers", () => {
    expect(at(0.2, 0.3).why).toContain("0.20");
    expect(at(0.2, 0.3).why).toContain("0.30");
  });
});
