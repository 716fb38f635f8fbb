import { describe, expect, test } from "bun:test";
import { resourceFill } from "../../src/sched/fill.ts";

const jobs = [
  { id: 1, nodes: 4, hi: 8, remaining: 100 },
  { id: 2, nodes: 2, hi: 4, remaining: 900 },
  { id: 3, nodes: 8, hi: 16, remaining: 500 },
];

describe("resource filling", () => {
  test("longest remaining time first, each up to its range top, one job at a time", () => {
    const f = resourceFill(jobs, 5);
    // job 2 (900 s) takes 2 to reach 4; job 3 (500 s) takes the other 3.
    expect([...f.grants]).toEqual([
      [2, 4],
      [3, 11],
    ]);
    expect(f.left).toBe(0);
  });

  test("nodes nobody can take are left over", () => {
    const f = resourceFill(jobs, 100);
    expect(f.grants.get(1)).toBe(8);
    expect(f.left).toBe(100 - 2 - 8 - 4);
  });

  test("a vetoed job is skipped and the next one gets the nodes", () => {
    const f = resourceFill(jobs, 3, (j) => (j.id === 2 ? "payoff" : undefined));
    expect(f.grants.get(2)).toBeUndefined();
    expect(f.grants.get(3)).toBe(11);
    expect(f.refused.get(2)).toBe("payoff");
  });

  test("ties on remaining time go to the lower id", () => {
    const f = resourceFill([{ id: 9, nodes: 1, hi: 2, remaining: 5 }, { id: 4, nodes: 1, hi: 2, remaining: 5 }], 1);
    expect([...f.grants.keys()]).toEqual([4]);
  });
});
