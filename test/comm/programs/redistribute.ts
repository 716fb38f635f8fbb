/**
 * Rank program: every (old size, new size) pair from 1 to the world size, for block, 1-D and 2-D
 * block-cyclic layouts and two element types, moved with redistribute() over the real world
 * (old and new ranks are subsets of it). Each rank checks its new part against the layout and
 * reports the moves it checked and every mismatch; the round count of each plan too.
 */
import { blockCyclic2dLayout, blockCyclicLayout, blockLayout, commMover, planMove, redistribute, squarestGrid, type Layout, type TypedArray } from "../../../src/comm/index.ts";
import { startWorld } from "../../support/comm-boot.ts";
import { report } from "../../support/comm-report.ts";

const { world, done } = await startWorld();
const n = world.size;

/** This rank's part of the global array i -> f(i) under `layout`. */
function part<T extends TypedArray>(layout: Layout, rank: number, make: (n: number) => T, f: (i: number) => number): T {
  const out = make(rank >= 0 && rank < layout.size ? layout.localLength(rank) : 0);
  if (out.length === 0) return out;
  const runs = layout.runs();
  for (let k = 0; k < runs.length; k += 4) if (runs[k + 2] === rank) for (let t = 0; t < runs[k + 1]!; t++) out[runs[k + 3]! + t] = f(runs[k]! + t);
  return out;
}

const kinds: [string, (p: number) => Layout][] = [
  ["block", (p) => blockLayout(41, p, 3)],
  ["cyclic1d", (p) => blockCyclicLayout(53, 4, p, 2)],
  ["cyclic2d", (p) => { const [pr, pc] = squarestGrid(p); return blockCyclic2dLayout({ rows: 19, cols: 23, mb: 3, nb: 2, pr, pc }); }],
];
const mismatches: string[] = [];
let moves = 0;
let tag = 100;
for (const [name, layout] of kinds)
  for (const [dtype, make, f] of [
    ["f64", (k: number): TypedArray => new Float64Array(k), (i: number) => i + 0.25],
    ["i32", (k: number): TypedArray => new Int32Array(k), (i: number) => -i],
  ] as const)
    for (let p = 1; p <= n; p++)
      for (let q = 1; q <= n; q++) {
        const from = layout(p);
        const to = layout(q);
        const plan = planMove(from, to);
        const mover = commMover(world, p, q);
        const mine = part(from, mover.oldRank, make, f);
        const got = await redistribute(mover, plan, mine, tag++);
        const want = mover.newRank >= 0 ? part(to, mover.newRank, make, f) : null;
        moves++;
        if (want === null ? got !== null : got === null || got.constructor !== want.constructor || got.length !== want.length || got.some((x, i) => x !== want[i]))
          mismatches.push(`${name} ${dtype} ${p}->${q}`);
      }

// A large move: 4 MiB of Float64 in block rows, n -> 1 -> n.
const big = blockLayout(4096, n, 128);
const one = blockLayout(4096, 1, 128);
const f = (i: number) => (i * 7) % 1000;
const start = part(big, world.rank, (k) => new Float64Array(k), f);
const gathered = await redistribute(commMover(world, n, 1), planMove(big, one), start, 1);
const back = await redistribute(commMover(world, 1, n), planMove(one, big), gathered ?? new Float64Array(0), 2);
const bigOk = back !== null && back.every((x, i) => x === start[i]) && (world.rank !== 0 || gathered!.every((x, i) => x === f(i)));
report({ rank: world.rank, moves, mismatches, bigOk });
await done();
