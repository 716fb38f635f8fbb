/**
 * The redistribution plans (pure): for every old and new size from 1 to 8, block, 1-D and 2-D
 * block-cyclic layouts move a global array so that every new rank holds exactly what the new
 * layout says, and the rounds are contention-free (one send and one receive per rank per round)
 * and as few as the busiest rank allows.
 */
import { describe, expect, test } from "bun:test";
import { blockCyclic2dLayout, blockCyclicLayout, blockLayout, blockRange, cyclicLocal, localShape, numroc, squarestGrid, type Layout } from "../../src/comm/layout.ts";
import { applyPlan, planMove, type Plan } from "../../src/comm/schedule.ts";

const SIZES = [1, 2, 3, 4, 5, 6, 7, 8];

/** The global array 0, 1, 2, ... spread over the ranks of `layout` using its runs. */
function scatterByRuns(layout: Layout, global: Float64Array): Float64Array[] {
  const locals = Array.from({ length: layout.size }, (_, r) => new Float64Array(layout.localLength(r)).fill(-1));
  const runs = layout.runs();
  for (let k = 0; k < runs.length; k += 4) locals[runs[k + 2]!]!.set(global.subarray(runs[k]!, runs[k]! + runs[k + 1]!), runs[k + 3]!);
  return locals;
}

function expectLayoutSound(layout: Layout): void {
  const runs = layout.runs();
  let pos = 0;
  const seen = Array.from({ length: layout.size }, (_, r) => new Uint8Array(layout.localLength(r)));
  for (let k = 0; k < runs.length; k += 4) {
    expect(runs[k]).toBe(pos);
    expect(runs[k + 1]).toBeGreaterThan(0);
    const s = seen[runs[k + 2]!]!;
    for (let t = 0; t < runs[k + 1]!; t++) s[runs[k + 3]! + t]!++;
    pos += runs[k + 1]!;
  }
  expect(pos).toBe(layout.length);
  for (const s of seen) expect(s.every((x) => x === 1)).toBe(true);
}

function expectContentionFree(plan: Plan): void {
  const remote = plan.messages.filter((m) => !(m.src === m.dst && m.src < plan.staying));
  expect(plan.rounds.flat().length).toBe(remote.length);
  expect(new Set(plan.rounds.flat()).size).toBe(remote.length);
  for (const round of plan.rounds) {
    expect(new Set(round.map((m) => m.src)).size).toBe(round.length);
    expect(new Set(round.map((m) => m.dst)).size).toBe(round.length);
  }
  // König: as many rounds as the busiest sender or receiver has messages.
  const deg = (key: (m: (typeof remote)[number]) => number) => Math.max(0, ...Object.values(Object.groupBy(remote, key)).map((g) => g!.length));
  expect(plan.rounds.length).toBe(Math.max(deg((m) => m.src), deg((m) => m.dst)));
  for (const m of plan.messages) expect(m.count).toBe(m.pieces.filter((_, i) => i % 3 === 2).reduce((a, b) => a + b, 0));
}

function expectMove(from: Layout, to: Layout, staying?: number): Plan {
  expectLayoutSound(from);
  expectLayoutSound(to);
  const global = Float64Array.from({ length: from.length }, (_, i) => i);
  const plan = planMove(from, to, staying);
  const moved = applyPlan(plan, scatterByRuns(from, global), (n) => new Float64Array(n).fill(-1));
  expect(moved).toEqual(scatterByRuns(to, global));
  expectContentionFree(plan);
  return plan;
}

describe("layouts agree with their closed forms", () => {
  test("block: ranges, uneven and empty ranks", () => {
    expect([0, 1, 2, 3].map((r) => blockRange(10, 4, r))).toEqual([[0, 3], [3, 6], [6, 8], [8, 10]]);
    expect([0, 1, 2].map((r) => blockRange(2, 3, r))).toEqual([[0, 1], [1, 2], [2, 2]]);
    const l = blockLayout(10, 4, 3);
    expect([0, 1, 2, 3].map((r) => l.localLength(r))).toEqual([9, 9, 6, 6]);
  });

  test("NUMROC and the 2-D local index of each element", () => {
    expect([0, 1, 2].map((p) => numroc(10, 2, p, 3))).toEqual([4, 4, 2]);
    expect([0, 1, 2].map((p) => numroc(11, 2, p, 3))).toEqual([4, 4, 3]);
    const g = { rows: 13, cols: 11, mb: 2, nb: 3, pr: 2, pc: 3 };
    const layout = blockCyclic2dLayout(g);
    const global = Float64Array.from({ length: g.rows * g.cols }, (_, i) => i);
    const locals = scatterByRuns(layout, global);
    for (let i = 0; i < g.rows; i++)
      for (let j = 0; j < g.cols; j++) {
        const rank = (Math.floor(i / g.mb) % g.pr) * g.pc + (Math.floor(j / g.nb) % g.pc);
        const [, cols] = localShape(g, rank);
        expect(locals[rank]![cyclicLocal(i, g.mb, g.pr) * cols + cyclicLocal(j, g.nb, g.pc)]).toBe(i * g.cols + j);
      }
    expect(squarestGrid(12)).toEqual([3, 4]);
    expect(squarestGrid(7)).toEqual([1, 7]);
    expect(squarestGrid(16)).toEqual([4, 4]);
  });

  test("bad arguments are refused naming the field", () => {
    expect(() => blockLayout(-1, 2)).toThrow("rows");
    expect(() => blockCyclicLayout(4, 0, 2)).toThrow("block");
    expect(() => blockCyclic2dLayout({ rows: 4, cols: 4, mb: 1, nb: 1, pr: 0, pc: 1 })).toThrow("pr");
    expect(() => planMove(blockLayout(4, 2), blockLayout(5, 2))).toThrow("elements");
  });
});

describe("every old and new size from 1 to 8", () => {
  test("block, uneven rows of 3 elements (23 rows, so some sizes leave ranks short)", () => {
    for (const p of SIZES) for (const q of SIZES) expectMove(blockLayout(23, p, 3), blockLayout(23, q, 3));
  });

  test("block with fewer rows than ranks", () => {
    for (const p of SIZES) for (const q of SIZES) expectMove(blockLayout(5, p), blockLayout(5, q));
  });

  test("1-D block-cyclic, 37 rows of 2 in blocks of 3", () => {
    for (const p of SIZES) for (const q of SIZES) expectMove(blockCyclicLayout(37, 3, p, 2), blockCyclicLayout(37, 3, q, 2));
  });

  test("2-D block-cyclic, 13 x 11 in 2 x 3 blocks on the squarest grids", () => {
    for (const p of SIZES)
      for (const q of SIZES) {
        const [pr, pc] = squarestGrid(p);
        const [qr, qc] = squarestGrid(q);
        expectMove(blockCyclic2dLayout({ rows: 13, cols: 11, mb: 2, nb: 3, pr, pc }), blockCyclic2dLayout({ rows: 13, cols: 11, mb: 2, nb: 3, pr: qr, pc: qc }));
      }
  });

  test("2-D block-cyclic between transposed grids (2 x 4 -> 4 x 2) and from block to block-cyclic", () => {
    expectMove(blockCyclic2dLayout({ rows: 16, cols: 16, mb: 2, nb: 2, pr: 2, pc: 4 }), blockCyclic2dLayout({ rows: 16, cols: 16, mb: 2, nb: 2, pr: 4, pc: 2 }));
    for (const p of SIZES) for (const q of SIZES) expectMove(blockLayout(29, p, 4), blockCyclicLayout(29, 2, q, 4));
  });

  test("ranks leaving and joining in one window (fewer staying than either size)", () => {
    for (const [p, q, s] of [[4, 3, 2], [5, 5, 1], [3, 6, 0], [8, 2, 1]] as const) {
      const plan = expectMove(blockLayout(31, p, 2), blockLayout(31, q, 2), s);
      // Only staying ranks copy locally.
      for (const m of plan.messages) if (m.round < 0) expect(m.src === m.dst && m.src < s).toBe(true);
    }
  });

  test("a move to the same layout copies locally and sends nothing", () => {
    const plan = expectMove(blockCyclicLayout(40, 4, 4), blockCyclicLayout(40, 4, 4));
    expect(plan.rounds).toEqual([]);
    expect(plan.messages).toHaveLength(4);
  });

  test("block 4 -> 8 -> 4 takes two rounds each way; contiguous pieces are one piece", () => {
    // Old rank 1 (rows 16..31) feeds new ranks 2 and 3; back, new rank 1 hears from old 2 and 3.
    const plan = expectMove(blockLayout(64, 4, 8), blockLayout(64, 8, 8));
    expect(plan.rounds.length).toBe(2);
    for (const m of plan.messages) expect(m.pieces.length).toBe(3);
    expect(expectMove(blockLayout(64, 8, 8), blockLayout(64, 4, 8)).rounds.length).toBe(2);
    // 1-D cyclic 2 -> 4, same blocks: old 0 keeps its blocks 0 mod 4 and sends 2 mod 4 to new 2; one round.
    const cyc = expectMove(blockCyclicLayout(64, 4, 2), blockCyclicLayout(64, 4, 4));
    expect(cyc.rounds.map((r) => r.map((m) => [m.src, m.dst]))).toEqual([[[0, 2], [1, 3]]]);
  });
});
