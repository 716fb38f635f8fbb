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

  test("a bound settles an admit only when every node would add more than the limit allows", () => {
    // A's time is convex (8/m): its nodes add 14.3, 19.0, 26.7 ... s of time; the 5 s adaptation comes once.
    const convex = (id: number, rem: number): Giver => ({ ...job(id, 8, rem), slowerWhenSmaller: true });
    const o = new GiveOrder([convex(1, 100), convex(2, 900)], unweighed);
    // Three nodes: 100 x (8/5 - 1) + 5 = 65 s; every node adds at least 14.3 s, three at least 42.9 s.
    expect(o.surelyExceeds(3, 30)).toBe(true);
    expect(o.exceeds(3, 30)).toBeCloseTo(65, 6);
    expect(o.surelyExceeds(3, 50)).toBe(false);
    // Two nodes stretch 38.3 s: the first node's whole stretch (19.3 s with the adaptation) is no bound per node.
    expect(o.exceeds(2, 38.4)).toBeUndefined();
    expect(o.surelyExceeds(2, 38.4)).toBe(false);
    // The adaptation's steps count as they are, even below zero (not a cost ebb prices; the bound assumes nothing of it).
    const odd = new GiveOrder([{ ...convex(1, 100), cost: () => -5 }], unweighed);
    expect(odd.exceeds(1, 12)).toBeUndefined();
    expect(odd.surelyExceeds(1, 12)).toBe(false);
    // A time that is not known to be convex gives no bound.
    expect(new GiveOrder([job(1, 8, 100), convex(2, 900)], unweighed).surelyExceeds(3, 1)).toBe(false);
  });

  test("the bound fills the need from each job's own step, as far as the job can give", () => {
    const convex = (id: number, rem: number): Giver => ({ ...job(id, 8, rem), slowerWhenSmaller: true });
    // A may give one node (floor 7; at least 14.3 s), B the rest (at least 900 x (8/7 - 1) = 128.6 s a node):
    // three nodes stretch at least 14.3 + 2 x 128.6 = 271.4 s (in truth A's 19.3 s, B's 305 s), not 3 x 14.3.
    const o = new GiveOrder([convex(1, 100), convex(2, 900)], unweighed, [7, 1]);
    expect(o.surelyExceeds(3, 270)).toBe(true);
    expect(o.exceeds(3, 270)).toBeCloseTo(19.29 + 305, 1);
    expect(o.surelyExceeds(3, 272)).toBe(false);
    // Without the floor A gives all three: 65 s, and the bound is 3 x 14.3 s.
    expect(new GiveOrder([convex(1, 100), convex(2, 900)], unweighed).surelyExceeds(3, 50)).toBe(false);
  });

  test("whenever the bound says so, the order exceeds the limit; the order is the same with or without it", () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let round = 0; round < 300; round++) {
      const jobs: Giver[] = Array.from({ length: 1 + Math.floor(rand() * 6) }, (_, i) => {
        const nodes = 2 + Math.floor(rand() * 30);
        const k = rand() * 2;
        const fixed = rand() * 20;
        const perNode = rand() * 4 - 1;
        return { job: { id: i + 1, nodes, minNodes: 1, priority: Math.floor(rand() * 3) }, rem: rand() * 1000, ratio: (m: number) => (nodes / m + k) / (1 + k), cost: (d: number) => fixed + perNode * d, slowerWhenSmaller: true };
      });
      const weight = (p: number | undefined) => 0.5 + (p ?? 0);
      // Half the rounds with donor floors: each job gives only down to its own.
      const floors = round % 2 ? jobs.map((j) => 1 + Math.floor(rand() * j.job.nodes)) : undefined;
      const bounded = new GiveOrder(jobs, weight, floors);
      const plain = new GiveOrder(jobs, weight, floors);
      if (bounded.surplus === 0) continue;
      for (let t = 0; t < 5; t++) {
        const need = 1 + Math.floor(rand() * bounded.surplus);
        const limit = rand() * 2000;
        const sure = bounded.surelyExceeds(need, limit);
        const exceeded = bounded.exceeds(need, limit);
        if (sure) expect(exceeded).toBeDefined();
        expect(exceeded).toBe(plain.exceeds(need, limit));
        expect(gives(bounded, need)).toEqual(gives(plain, need));
      }
    }
  });
});
