import { describe, expect, test } from "bun:test";
import { GiveOrder, type Giver } from "../../src/sched/policies/give-order.ts";

/** A job of `nodes` nodes whose time grows linearly as nodes drop; 5 s an adaptation. */
const job = (id: number, nodes: number, rem: number, minNodes = 1): Giver => ({ job: { id, nodes, minNodes }, rem, ratio: (m) => nodes / m, cost: () => 5 });
const unweighed = () => 1;
const gives = (o: GiveOrder<Giver>, need: number) => o.given(need).map(({ c, give }) => [c.job.id, give]);

// A (100 s left) stretches 19.3, 19.0, 26.7, 40, 66.7, 133.3 s for its first six nodes, then 400;
// B (900 s left) 133.6 s for its first.
describe("GiveOrder", () => {
  test("takes each node where it stretches least", () => {
    const o = new GiveOrder([job(1, 8, 100), job(2, 8, 900)], unweighed);
    expect(o.surplus).toBe(14);
    expect(o.cheapest).toBe(5);
    expect(gives(o, 6)).toEqual([[1, 6]]);
    expect(gives(o, 7)).toEqual([
      [1, 6],
      [2, 1],
    ]);
  });

  test("a job gives down to its floor only", () => {
    const o = new GiveOrder([job(1, 8, 100), job(2, 8, 900), job(3, 4, 1, 4)], unweighed, [4, 1, 4]);
    expect(o.pool.map((c) => c.job.id)).toEqual([1, 2]);
    expect(o.surplus).toBe(11);
    expect(gives(o, 5)).toEqual([
      [1, 4],
      [2, 1],
    ]);
  });

  test("the stretch is checked where a job stops giving and at the need", () => {
    const o = new GiveOrder([job(1, 8, 100), job(2, 8, 900)], unweighed);
    // Six nodes of A: 100 s x (8/2 - 1) + 5 s.
    expect(o.exceeds(6, 300)).toBeCloseTo(305, 6);
    expect(o.exceeds(6, 310)).toBeUndefined();
    expect(o.exceeds(3, 300)).toBeUndefined();
    expect(o.exceeds(3, 60)).toBeCloseTo(65, 6);
    // Seven nodes stretch 305 + 133.6 s, but the check where A stops giving already fails.
    expect(o.exceeds(7, 300)).toBeCloseTo(305, 6);
    expect(o.exceeds(7, 430)).toBeCloseTo(305 + 900 / 7 + 5, 6);
  });

  test("weighs each job's seconds", () => {
    // B's seconds weigh a tenth: its first node (13.4) now costs less than A's (19.3).
    const o = new GiveOrder([job(1, 8, 100), job(2, 8, 900)], unweighed);
    const w = new GiveOrder([job(1, 8, 100), { ...job(2, 8, 900), job: { id: 2, nodes: 8, minNodes: 1, priority: 1 } }], (p) => (p === 1 ? 0.1 : 1));
    expect(gives(o, 1)).toEqual([[1, 1]]);
    expect(gives(w, 1)).toEqual([[2, 1]]);
  });

  test("an order asked for more nodes first gives the same first ones", () => {
    const o = new GiveOrder([job(1, 8, 100), job(2, 8, 900)], unweighed);
    expect(o.exceeds(9, 1e9)).toBeUndefined();
    expect(gives(o, 2)).toEqual([[1, 2]]);
    expect(gives(new GiveOrder([job(1, 8, 100), job(2, 8, 900)], unweighed), 2)).toEqual([[1, 2]]);
  });
});
