/**
 * Gaussian elimination on EPOP (dissertation §14.2): solves A x = b for a diagonally dominant A
 * (no pivoting needed). The augmented rows [A | b] are distributed by row blocks (--block 0) or
 * 1-D block-cyclic in blocks of --block rows (default 1: cyclic, which keeps the work balanced
 * as the active rows shrink). One elastic phase: iteration k broadcasts pivot row k from its owner
 * and eliminates column k below it; a window moves the rows to the new distribution. A rigid
 * phase gathers the triangular system on rank 0, back-substitutes, and (--check 1) compares with
 * a serial elimination: each row sees the same operations in the same order whatever the number
 * of ranks, so the solution must be equal bit for bit ("ge: check ok").
 *
 *   ebb run -N 2 --elastic --min-nodes 1 --max-nodes 8 -- bun examples/epop/ge.ts --n 1024 --block 4
 *
 * Flags: --n N (default 200), --block B (default 1; 0 = row blocks), --sleep MS, --check 0|1.
 */
import { blockCyclicLayout, blockLayout, type Layout } from "ebb/comm";
import { defineProgram, runEpop } from "ebb/epop";
import { fingerprint, numberFlags, pause } from "./args.ts";

interface Data {
  n: number;
  block: number;
  sleep: number;
  check: number;
  /** Local rows of n + 1 values, in increasing global row order. */
  rows: Float64Array;
  /** Global index of each local row; owner of each global row. */
  mine: number[];
  owner: Int32Array;
}

const entry = (n: number, i: number, j: number) => (j === n ? (i % 5) + 1 : i === j ? 6 * n + 1 : ((i * 13 + j * 7) % 11) - 5);
const layout = (d: { n: number; block: number }, size: number): Layout => (d.block === 0 ? blockLayout(d.n, size, d.n + 1) : blockCyclicLayout(d.n, d.block, size, d.n + 1));

/** Which rank holds each row, and which rows `rank` holds, from the layout's runs. */
function place(d: Data, rank: number, size: number): void {
  const runs = layout(d, size).runs();
  const W = d.n + 1;
  d.owner = new Int32Array(d.n);
  d.mine = [];
  for (let k = 0; k < runs.length; k += 4)
    for (let r = runs[k]! / W; r < (runs[k]! + runs[k + 1]!) / W; r++) {
      d.owner[r] = runs[k + 2]!;
      if (runs[k + 2] === rank) d.mine.push(r);
    }
}

function eliminate(row: Float64Array, off: number, pivot: Float64Array, k: number, n: number): void {
  const f = row[off + k]! / pivot[k]!;
  for (let j = k; j <= n; j++) row[off + j] = row[off + j]! - f * pivot[j]!;
}

function backSubstitute(a: Float64Array, n: number): Float64Array {
  const x = new Float64Array(n);
  for (let i = n - 1; i >= 0; i--) {
    let s = a[i * (n + 1) + n]!;
    for (let j = i + 1; j < n; j++) s -= a[i * (n + 1) + j]! * x[j]!;
    x[i] = s / a[i * (n + 1) + i]!;
  }
  return x;
}

function serial(n: number): Float64Array {
  const W = n + 1;
  const a = Float64Array.from({ length: n * W }, (_, x) => entry(n, Math.floor(x / W), x % W));
  for (let k = 0; k < n - 1; k++) {
    const pivot = a.slice(k * W, (k + 1) * W);
    for (let i = k + 1; i < n; i++) eliminate(a, i * W, pivot, k, n);
  }
  return backSubstitute(a, n);
}

const program = defineProgram<Data>({
  name: "ge",
  init: (args, { rank, size }) => {
    const f = numberFlags("ge", args, { n: 200, block: 1, sleep: 0, check: 1 });
    if (f.n < 2) throw new Error("ge: --n must be at least 2");
    const d: Data = { ...f, rows: new Float64Array(0), mine: [], owner: new Int32Array(0) };
    place(d, rank, size);
    const W = d.n + 1;
    d.rows = new Float64Array(d.mine.length * W);
    d.mine.forEach((i, l) => {
      for (let j = 0; j < W; j++) d.rows[l * W + j] = entry(d.n, i, j);
    });
    return d;
  },
  phases: [
    {
      kind: "elastic",
      name: "eliminate",
      exec: async (d, { world, iteration: k }) => {
        if (k === 0 && world.rank === 0) console.log(`ge: started n=${d.n} on ${world.size} ranks`);
        const W = d.n + 1;
        const root = d.owner[k]!;
        const at = d.mine.indexOf(k);
        const pivot = (await world.bcast(root === world.rank ? d.rows.slice(at * W, (at + 1) * W) : undefined, root)) as Float64Array;
        d.mine.forEach((i, l) => {
          if (i > k) eliminate(d.rows, l * W, pivot, k, d.n);
        });
        await pause(d.sleep);
      },
      adapt: async (d, w) => {
        d.rows = await w.move(layout(d, w.oldSize), layout(d, w.newSize), d.rows);
        if (w.newRank >= 0) place(d, w.newRank, w.newSize);
        if (w.newRank === 0) console.log(`ge: iteration ${w.iteration}: now ${w.newSize} ranks (was ${w.oldSize})`);
      },
      loop: (d, { iteration }) => iteration < d.n - 1,
      bound: (d) => d.n - 1,
    },
    {
      kind: "rigid",
      name: "solve",
      exec: async (d, { world, rank }) => {
        // One message per rank: its global row indices, then its rows.
        const mine = new Float64Array(d.mine.length + d.rows.length);
        mine.set(d.mine);
        mine.set(d.rows, d.mine.length);
        const parts = (await world.gather(mine, 0)) as Float64Array[] | undefined;
        if (rank !== 0) return;
        const W = d.n + 1;
        const a = new Float64Array(d.n * W);
        for (const p of parts!) {
          const count = p.length / (W + 1);
          for (let l = 0; l < count; l++) a.set(p.subarray(count + l * W, count + (l + 1) * W), p[l]! * W);
        }
        const x = backSubstitute(a, d.n);
        let residual = 0;
        for (let i = 0; i < d.n; i++) {
          let s = -entry(d.n, i, d.n);
          for (let j = 0; j < d.n; j++) s += entry(d.n, i, j) * x[j]!;
          residual = Math.max(residual, Math.abs(s));
        }
        console.log(`ge: done n=${d.n} block=${d.block} ranks=${world.size} checksum=${fingerprint([x])} residual=${residual.toExponential(2)}`);
        if (d.check) {
          const want = serial(d.n);
          const bad = x.findIndex((v, i) => v !== want[i]);
          if (bad >= 0) throw new Error(`x[${bad}] = ${x[bad]}, serial says ${want[bad]}`);
          console.log("ge: check ok (equal to the serial elimination, bit for bit)");
        }
      },
    },
  ],
});

await runEpop(program);
