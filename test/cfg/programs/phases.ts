/**
 * Rank program with two phases of known shape, for CFG monitoring:
 *   A: compute-heavy — busy compute, then a small allreduce and a bcast;
 *   B: communication-heavy — a little compute, then a ring exchange (even ranks send first, odd
 *      ranks receive first: the parity branch) of a large array and an alltoall.
 * Measures its own MPI time and compute time per phase and reports them with a checksum of
 * everything it received (which must not change with monitoring on or off).
 * argv: itersA itersB computeA_ms computeB_ms ringBytes
 */
import { startWorld } from "../../support/comm-boot.ts";
import { report } from "../../support/comm-report.ts";

const [itersA, itersB, computeA, computeB, ringBytes] = process.argv.slice(2).map(Number) as [number, number, number, number, number];
const { world, done } = await startWorld();
const r = world.rank;
const n = world.size;
let sum = 0;

function compute(ms: number): void {
  const until = performance.now() + ms;
  let x = 0;
  while (performance.now() < until) x += Math.sqrt(x + 1);
  if (x < 0) console.log(x);
}

async function timedCall<T>(acc: { comm: number }, f: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const v = await f();
  acc.comm += performance.now() - t0;
  return v;
}

// Own measurement from the second iteration on (the first makes the connections; the detector
// sees a loop from its second head visit): MPI time = time awaiting comm calls, compute time =
// the rest of the wall time.
const phase = { A: { comm: 0, compute: 0 }, B: { comm: 0, compute: 0 } };
const scratch = { comm: 0 };

let t0 = 0;
for (let i = 0; i < itersA; i++) {
  if (i === 1) t0 = performance.now();
  const acc = i === 0 ? scratch : phase.A;
  compute(computeA);
  const v = await timedCall(acc, () => world.allreduce(new Float64Array([r + i, 1, 2, 3]), "sum"));
  sum += v[0]!;
  const b = await timedCall(acc, () => world.bcast(r === 0 ? i * 2 : undefined, 0));
  sum += b as number;
}
phase.A.compute = performance.now() - t0 - phase.A.comm;

const ring = new Float64Array(ringBytes / 8).fill(r + 1);
const next = (r + 1) % n;
const prev = (r - 1 + n) % n;
for (let i = 0; i < itersB; i++) {
  if (i === 1) t0 = performance.now();
  const acc = i === 0 ? scratch : phase.B;
  compute(computeB);
  if (r % 2 === 0) {
    await timedCall(acc, () => world.send(next, ring, 5));
    const m = await timedCall(acc, () => world.recv<Float64Array>(prev, 5));
    sum += m.data[0]!;
  } else {
    const m = await timedCall(acc, () => world.recv<Float64Array>(prev, 5));
    sum += m.data[0]!;
    await timedCall(acc, () => world.send(next, ring, 5));
  }
  const parts = Array.from({ length: n }, (_, k) => new Float64Array(4096).fill(r * 100 + k));
  const all = await timedCall(acc, () => world.alltoall(parts));
  sum += all.reduce((a, x) => a + (x as Float64Array)[0]!, 0);
}
phase.B.compute = performance.now() - t0 - phase.B.comm;

report({ rank: r, size: n, job: process.env.EBB_JOB_ID, sum, phase });
await done();
