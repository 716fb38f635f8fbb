/** The node price (sched/price.ts) on plain data, hand-computed. */
import { describe, expect, test } from "bun:test";
import { bestShrink, moldableWorth, nodePrice, price, queueReach, sizesBetween, type Priced } from "../../src/sched/price.ts";

const cost = (d: number) => (d === 0 ? 0 : 10);
/** No speedup at all: its work takes as long at any size (serial fraction 1). */
const serial: Priced = { n: 4, rem: 1000, ratio: () => 1, cost };
/** Perfect speedup: time ∝ 1/m, the same node-seconds at every size. */
const perfect: Priced = { n: 4, rem: 1000, ratio: (m) => 4 / m, cost };

describe("node price", () => {
  test("λ is the jobs a saved node-second reaches over the nodes, and nothing when no job waits", () => {
    expect(nodePrice(8, 16)).toBe(0.5);
    expect(nodePrice(0, 16)).toBe(0);
    expect(nodePrice(3, 0)).toBe(0);
  });

  test("F(m) = R(m) + c + λ (m R(m) + max(n, m) c)", () => {
    expect(price(serial, 4, 0.1)).toBe(1000 + 0.1 * 4000);
    // 1 node: 1000 s + 10 s adaptation + 0.1 × (1 × 1000 + 4 × 10) = 1114 s.
    expect(price(serial, 1, 0.1)).toBeCloseTo(1114, 9);
    // 8 nodes (perfect): 500 s + 10 s + 0.1 × (8 × 500 + 8 × 10) = 918 s.
    expect(price(perfect, 8, 0.1)).toBeCloseTo(918, 9);
  });

  test("the reach: the waiting jobs plus those expected to arrive before the backlog clears", () => {
    // 2 waiting, the oldest submitted 200 s ago: 0.01 jobs/s. Backlog (2×100 + 4×50 + 10×30) / 10 nodes = 70 s.
    expect(queueReach(1000, 10, 2, 800, 700, 60)).toBeCloseTo(2.7, 12);
    // A queue younger than the minimum span is read over the minimum span: 2 / 600 s.
    expect(queueReach(1000, 10, 2, 800, 700, 600)).toBeCloseTo(2 + (2 / 600) * 70, 12);
    expect(queueReach(1000, 10, 0, 1000, 300, 60)).toBe(0);
  });
});

describe("shrinks by price", () => {
  test("nothing shrinks while no job waits", () => {
    expect(bestShrink(serial, 1, 0)).toBeUndefined();
  });

  test("a job that does not speed up shrinks to its minimum when the queue's gain pays its adaptation twice", () => {
    // λ 0.1: F(4) = 1400, F(1) = 1114: gain 286 > adaptation 10. Stretch: only the adaptation, 10 s.
    expect(bestShrink(serial, 1, 0.1)).toEqual({ to: 1, gain: 286, stretch: 10, cost: 10, saved: 3000 });
    // λ 0.005: F(4) = 1020, F(1) = 1015.2: gain 4.8 < 10, kept.
    expect(bestShrink(serial, 1, 0.005)).toBeUndefined();
  });

  test("a job that scales perfectly never shrinks: its work takes the same node-seconds at every size", () => {
    for (const l of [0.01, 1, 100]) expect(bestShrink(perfect, 1, l)).toBeUndefined();
  });

  test("sizes priced: all of them when few, else 65 spread evenly with both ends", () => {
    expect(sizesBetween(3, 6)).toEqual([3, 4, 5, 6]);
    expect(sizesBetween(5, 4)).toEqual([]);
    const many = sizesBetween(1, 1001);
    expect(many.length).toBe(65);
    expect(many[0]).toBe(1);
    expect(many[64]).toBe(1001);
  });
});

describe("moldable starts", () => {
  test("a start below its size that ends sooner than waiting is always worth it", () => {
    // Now 0, its size free at 1000, 600 s at its size, twice as long at k = 8: ends 1200 < 1600.
    expect(moldableWorth(0, 1000, 600, 2, 8, 0)).toEqual({ ownLoss: -400, queueGain: 0, ok: true });
  });

  test("one that ends later starts only if the queue gains more: the work done on nodes idle until then", () => {
    // Its size is free at 100: ends 1200 instead of 700, a loss of 500 s; the 8 nodes would idle 100 s.
    expect(moldableWorth(0, 100, 600, 2, 8, 0.5)).toEqual({ ownLoss: 500, queueGain: 400, ok: false });
    expect(moldableWorth(0, 100, 600, 2, 8, 1)).toEqual({ ownLoss: 500, queueGain: 800, ok: true });
  });
});
