/**
 * examples/jacobi.ts on EPOP: the same 2-D Jacobi heat solver (top edge at 100 degrees, interior
 * rows block-distributed, halo exchange every iteration), without any of the adaptation control
 * flow: one elastic phase whose adapt block is one `w.move` of the rows, and a rigid phase that
 * prints the checksum. Same flags, same arithmetic, so the checksum equals the hand-written one's.
 *
 *   ebb run -N 2 --elastic --min-nodes 1 --max-nodes 4 -- bun examples/epop/jacobi.ts --rows 512 --iters 5000
 *
 * Flags: --rows N --cols M (default 256x256), --iters K (default 2000), --sleep MS, --every K.
 */
import { blockLayout, blockRange, type Comm } from "ebb/comm";
import { defineProgram, runEpop } from "ebb/epop";
import { fingerprint, numberFlags, pause } from "./args.ts";

const HOT = 100;

interface Data {
  rows: number;
  cols: number;
  iters: number;
  sleep: number;
  every: number;
  /** Interior rows [first, last) of this rank; u and next hold them plus a halo row above and below. */
  first: number;
  last: number;
  u: Float64Array;
  next: Float64Array;
}

const width = (d: Data) => d.cols + 2;

function place(d: Data, rank: number, size: number, interior?: Float64Array): void {
  [d.first, d.last] = blockRange(d.rows, size, rank);
  const n = d.last - d.first;
  d.u = new Float64Array((n + 2) * width(d));
  d.next = new Float64Array(d.u.length);
  if (interior) d.u.set(interior, width(d));
}

async function exchange(d: Data, world: Comm): Promise<void> {
  const W = width(d);
  const n = d.last - d.first;
  const up = world.rank > 0 ? world.rank - 1 : undefined;
  const down = world.rank < world.size - 1 ? world.rank + 1 : undefined;
  const sends: Promise<void>[] = [];
  if (up !== undefined && n > 0) sends.push(world.send(up, d.u.slice(W, 2 * W), 1));
  if (down !== undefined && n > 0) sends.push(world.send(down, d.u.slice(n * W, (n + 1) * W), 2));
  if (up === undefined) d.u.fill(HOT, 1, W - 1);
  else d.u.set((await world.recv<Float64Array>(up, 2)).data, 0);
  if (down !== undefined) d.u.set((await world.recv<Float64Array>(down, 1)).data, (n + 1) * W);
  await Promise.all(sends);
}

function relax(d: Data): void {
  const W = width(d);
  const { u, next } = d;
  for (let i = 1; i <= d.last - d.first; i++) {
    const row = i * W;
    for (let j = 1; j <= d.cols; j++) {
      const k = row + j;
      next[k] = 0.25 * (u[k - W]! + u[k + W]! + u[k - 1]! + u[k + 1]!);
    }
  }
  [d.u, d.next] = [next, u];
}

const program = defineProgram<Data>({
  name: "jacobi",
  init: (args, { rank, size }) => {
    const f = numberFlags("jacobi", args, { rows: 256, cols: 256, iters: 2000, sleep: 0, every: 0 });
    const d: Data = { ...f, first: 0, last: 0, u: new Float64Array(0), next: new Float64Array(0) };
    place(d, rank, size);
    return d;
  },
  phases: [
    {
      kind: "elastic",
      name: "relax",
      exec: async (d, { world, iteration }) => {
        await exchange(d, world);
        relax(d);
        if (d.every > 0 && (iteration + 1) % d.every === 0 && world.rank === 0) console.log(`jacobi: iteration ${iteration + 1} on ${world.size} ranks`);
        await pause(d.sleep);
      },
      adapt: async (d, w) => {
        const W = width(d);
        const interior = d.u.subarray(W, (d.last - d.first + 1) * W);
        const moved = await w.move(blockLayout(d.rows, w.oldSize, W), blockLayout(d.rows, w.newSize, W), interior);
        if (w.newRank >= 0) place(d, w.newRank, w.newSize, moved);
        if (w.newRank === 0) console.log(`jacobi: iteration ${w.iteration}: now ${w.newSize} ranks (was ${w.oldSize})`);
      },
      loop: (d, { iteration }) => iteration < d.iters,
      bound: (d) => d.iters,
    },
    {
      kind: "rigid",
      name: "report",
      exec: async (d, { world, rank }) => {
        const W = width(d);
        const all = await world.gather(d.u.slice(W, (d.last - d.first + 1) * W), 0);
        if (rank !== 0) return;
        const parts = all as Float64Array[];
        const heat = parts.reduce((t, p) => p.reduce((s, x) => s + x, t), 0);
        console.log(`jacobi: done iterations=${d.iters} ranks=${world.size} checksum=${fingerprint(parts)} heat=${heat.toFixed(6)}`);
      },
    },
  ],
});

await runEpop(program);
