/**
 * Cannon's matrix multiplication on EPOP (dissertation §14.1), on a q x q process grid: the job
 * must run on a square number of ranks (submit it with `--sizes square`). Each iteration computes
 * C = A * B with Cannon's algorithm (skew, q multiply-and-shift steps, unskew), then sets
 * A = C mod 10, so every iteration depends on the one before. Entries are small integers, so every
 * product and sum is exact in float64 and the result must equal the serial one exactly; rank 0
 * computes the serial product at the end (--check 1) and says "cannon: check ok".
 *
 *   ebb run -N 4 --elastic --min-nodes 1 --max-nodes 16 --sizes square -- bun examples/epop/cannon.ts --n 256 --iters 20
 *
 * A, B and C are in a 2-D block distribution (ScaLAPACK's, mb = nb = ceil(n / q)); a window
 * moves them to the new grid with the redistribution helpers, straight between owners.
 * Flags: --n N (default 96), --iters K (default 10), --sleep MS, --check 0|1 (default 1).
 */
import { blockCyclic2dLayout, localShape, numroc, type Comm, type Grid2d } from "ebb/comm";
import { defineProgram, runEpop } from "ebb/epop";
import { fingerprint, numberFlags, pause } from "./args.ts";

interface Data {
  n: number;
  iters: number;
  sleep: number;
  check: number;
  q: number;
  a: Float64Array;
  b: Float64Array;
  c: Float64Array;
}

function side(size: number): number {
  const q = Math.round(Math.sqrt(size));
  if (q * q !== size) throw new Error(`cannon needs a square number of ranks, got ${size} (submit with --sizes square)`);
  return q;
}

const grid = (n: number, q: number): Grid2d => ({ rows: n, cols: n, mb: Math.ceil(n / q), nb: Math.ceil(n / q), pr: q, pc: q });
const initialA = (i: number, j: number) => (i * 7 + j * 3) % 10;
const initialB = (i: number, j: number) => (i * 2 + j * 5 + 1) % 10;

function fill(g: Grid2d, rank: number, f: (i: number, j: number) => number): Float64Array {
  const [rows, cols] = localShape(g, rank);
  const out = new Float64Array(rows * cols);
  const r0 = Math.floor(rank / g.pc) * g.mb;
  const c0 = (rank % g.pc) * g.nb;
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[i * cols + j] = f(r0 + i, c0 + j);
  return out;
}

/** c += a (r x k) * b (k x s). */
function multiplyAdd(c: Float64Array, a: Float64Array, b: Float64Array, r: number, k: number, s: number): void {
  for (let i = 0; i < r; i++)
    for (let t = 0; t < k; t++) {
      const x = a[i * k + t]!;
      if (x === 0) continue;
      for (let j = 0; j < s; j++) c[i * s + j] = c[i * s + j]! + x * b[t * s + j]!;
    }
}

/** Sends `mine` to `to` and receives from `from` (a shift along a ring of the grid). */
async function shift(world: Comm, mine: Float64Array, to: number, from: number, tag: number): Promise<Float64Array> {
  if (to === world.rank) return mine;
  const [, got] = await Promise.all([world.send(to, mine, tag), world.recv<Float64Array>(from, tag)]);
  return got.data;
}

async function cannon(d: Data, world: Comm): Promise<void> {
  const q = d.q;
  const g = grid(d.n, q);
  const row = Math.floor(world.rank / q);
  const col = world.rank % q;
  const at = (r: number, c: number) => (((r % q) + q) % q) * q + (((c % q) + q) % q);
  const dim = (p: number) => numroc(d.n, g.mb, p, q);
  // Skew: A(i, j) left by i, B(i, j) up by j.
  let a = await shift(world, d.a, at(row, col - row), at(row, col + row), 11);
  let b = await shift(world, d.b, at(row - col, col), at(row + col, col), 12);
  const c = new Float64Array(dim(row) * dim(col));
  for (let s = 0; s < q; s++) {
    const k = (row + col + s) % q; // this rank holds A(row, k) and B(k, col)
    multiplyAdd(c, a, b, dim(row), dim(k), dim(col));
    if (s < q - 1) {
      a = await shift(world, a, at(row, col - 1), at(row, col + 1), 13);
      b = await shift(world, b, at(row - 1, col), at(row + 1, col), 14);
    }
  }
  // Unskew B: after q - 1 steps B(row+col+q-1, col) is here; send it home. (A is replaced by C mod 10.)
  const k = (row + col + q - 1) % q;
  d.b = await shift(world, b, at(k, col), at((row - col - (q - 1)) % q + 2 * q, col), 16);
  d.c = c;
}

function serial(d: Data): Float64Array {
  const n = d.n;
  let a = Float64Array.from({ length: n * n }, (_, x) => initialA(Math.floor(x / n), x % n));
  const b = Float64Array.from({ length: n * n }, (_, x) => initialB(Math.floor(x / n), x % n));
  let c = new Float64Array(n * n);
  for (let it = 0; it < d.iters; it++) {
    c = new Float64Array(n * n);
    multiplyAdd(c, a, b, n, n, n);
    a = c.map((x) => x % 10);
  }
  return c;
}

const program = defineProgram<Data>({
  name: "cannon",
  init: (args, { rank, size }) => {
    const f = numberFlags("cannon", args, { n: 96, iters: 10, sleep: 0, check: 1 });
    const q = side(size);
    const g = grid(f.n, q);
    return { ...f, q, a: fill(g, rank, initialA), b: fill(g, rank, initialB), c: new Float64Array(localShape(g, rank).reduce((x, y) => x * y)) };
  },
  phases: [
    {
      kind: "elastic",
      name: "multiply",
      exec: async (d, { world, iteration }) => {
        if (iteration === 0 && world.rank === 0) console.log(`cannon: started n=${d.n} on ${world.size} ranks`);
        await cannon(d, world);
        d.a = d.c.map((x) => x % 10);
        await pause(d.sleep);
      },
      adapt: async (d, w) => {
        const q = side(w.newSize);
        const from = blockCyclic2dLayout(grid(d.n, side(w.oldSize)));
        const to = blockCyclic2dLayout(grid(d.n, q));
        d.a = await w.move(from, to, d.a);
        d.b = await w.move(from, to, d.b, 0x7e90_0002);
        d.c = await w.move(from, to, d.c, 0x7e90_0003);
        d.q = q;
        if (w.newRank === 0) console.log(`cannon: iteration ${w.iteration}: now ${w.newSize} ranks (${q}x${q}, was ${w.oldSize})`);
      },
      loop: (d, { iteration }) => iteration < d.iters,
      bound: (d) => d.iters,
    },
    {
      kind: "rigid",
      name: "check",
      exec: async (d, { world, rank }) => {
        const parts = (await world.gather(d.c, 0)) as Float64Array[] | undefined;
        if (rank !== 0) return;
        // Assemble C from the blocks of the q x q grid.
        const g = grid(d.n, d.q);
        const full = new Float64Array(d.n * d.n);
        parts!.forEach((p, r) => {
          const [rows, cols] = localShape(g, r);
          const r0 = Math.floor(r / d.q) * g.mb;
          const c0 = (r % d.q) * g.nb;
          for (let i = 0; i < rows; i++) full.set(p.subarray(i * cols, (i + 1) * cols), (r0 + i) * d.n + c0);
        });
        console.log(`cannon: done n=${d.n} iterations=${d.iters} ranks=${world.size} checksum=${fingerprint([full])}`);
        if (d.check) {
          const want = serial(d);
          const bad = full.findIndex((x, i) => x !== want[i]);
          if (bad >= 0) throw new Error(`C[${Math.floor(bad / d.n)}][${bad % d.n}] = ${full[bad]}, serial says ${want[bad]}`);
          console.log("cannon: check ok (equal to the serial product, exactly)");
        }
      },
    },
  ],
});

await runEpop(program);
