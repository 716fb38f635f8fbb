/** The estimated cost of a checkpoint-restart resize (sched/restart-cost.ts) as the ebb policy's price reads it. */
import { describe, expect, test } from "bun:test";
import { bestShrink, type Priced } from "../../src/sched/price.ts";
import { CHECKPOINT_BANDWIDTH, restartCost } from "../../src/sched/restart-cost.ts";

describe("restartCost", () => {
  test("a start as long as the job's own, plus its largest node's state written and read once", () => {
    expect(restartCost({ coldStart: 1.5, nodeBytes: 0 })).toBe(1.5);
    expect(restartCost({ coldStart: 1.5, nodeBytes: CHECKPOINT_BANDWIDTH })).toBe(3.5);
    expect(restartCost({ coldStart: 0, nodeBytes: 4e9 }, 2e9)).toBe(4);
  });

  test("the price shrinks a job for a waiting queue only when the gain pays for its restart", () => {
    // 8 nodes, 600 s left, perfectly parallel: at m nodes 600 * 8 / m s. Two jobs wait on 16 nodes.
    const job = (cost: number): Priced => ({ n: 8, rem: 600, ratio: (m) => 8 / m, cost: () => cost });
    const lambda = 2 / 16;
    const cheap = bestShrink(job(restartCost({ coldStart: 2, nodeBytes: 64 << 20 })), 1, lambda);
    expect(cheap).toBeUndefined(); // perfectly parallel: no size uses fewer node-seconds, so nothing pays
    // Amdahl with a serial half: fewer nodes save node-seconds; a cheap restart pays, a very dear one does not.
    const amdahl = (cost: number): Priced => ({ n: 8, rem: 600, ratio: (m) => (0.5 + 0.5 / m) / (0.5 + 0.5 / 8), cost: () => cost });
    const pays = bestShrink(amdahl(restartCost({ coldStart: 2, nodeBytes: 64 << 20 })), 1, lambda);
    expect(pays?.to).toBeLessThan(8);
    expect(bestShrink(amdahl(restartCost({ coldStart: 2, nodeBytes: 4e12 })), 1, lambda)).toBeUndefined();
  });
});
