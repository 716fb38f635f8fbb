/** Rank program: every collective with every op; reports raw results, the test checks them. */
import { OPS } from "../../../src/comm/index.ts";
import { startWorld } from "../../support/comm-boot.ts";
import { plain, report } from "../../support/comm-report.ts";

const { world, done } = await startWorld();
const r = world.rank;
const n = world.size;
const out: Record<string, unknown> = {};

/** Weighted sum so one report line covers a large array element by element. */
function hash(a: Float64Array): number {
  let h = 0;
  for (let i = 0; i < a.length; i++) h += a[i]! * ((i % 13) + 1);
  return h;
}

await world.barrier();
await world.barrier();

for (let root = 0; root < n; root++) {
  const mine = root === r;
  out[`bcast.json.${root}`] = await world.bcast(mine ? { root, text: "héllo ✓", list: [root, root * 2] } : undefined, root);
  out[`bcast.f64.${root}`] = await world.bcast(mine ? new Float64Array([root + 0.5, root * 3]) : undefined, root);
}

for (const op of OPS) {
  out[`reduce.num.${op}`] = await world.reduce(r + 1, op, n - 1);
  out[`reduce.i32.${op}`] = await world.reduce(new Int32Array([r + 1, -(r + 1), 2]), op, n - 1);
  out[`reduce.f64.${op}`] = await world.reduce(new Float64Array([(r + 1) * 0.5]), op, n - 1);

  out[`allreduce.num.${op}`] = await world.allreduce(r + 1, op);
  out[`allreduce.arr.${op}`] = await world.allreduce([r + 1, 10 - r], op);
  out[`allreduce.i32.${op}`] = await world.allreduce(new Int32Array([r + 1, -(r + 1), 2]), op);
  out[`allreduce.f32.${op}`] = await world.allreduce(new Float32Array([r + 1, (r + 1) / 4]), op);
  out[`allreduce.i64.${op}`] = await world.allreduce(new BigInt64Array([BigInt(r + 1), -BigInt(r + 1)]), op);
  out[`allreduce.u8.${op}`] = await world.allreduce(new Uint8Array([r + 1]), op);
  // 80 kB: the ring algorithm when n > 2.
  const big = new Float64Array(10_000).map((_, i) => (i % 7) + r);
  const red = await world.allreduce(big, op);
  out[`allreduce.big.${op}`] = { len: red.length, hash: hash(red), first: Array.from(red.subarray(0, 8)) };
  out[`allreduce.big.input-untouched.${op}`] = big[3] === 3 + r;
}

const groot = 1 % n;
out["gather.json"] = await world.gather({ r }, groot);
out["gather.i16"] = await world.gather(new Int16Array(r + 1).fill(r), groot);
out["allgather.str"] = await world.allgather(`s${r}`);
out["allgather.f64"] = await world.allgather(new Float64Array([r, r * r]));
const sroot = n - 1;
const toAll = <T>(f: (i: number) => T) => Array.from({ length: n }, (_, i) => f(i));
out["scatter.json"] = await world.scatter(r === sroot ? toAll((i) => ({ to: i })) : undefined, sroot);
out["scatter.u32"] = await world.scatter(r === sroot ? toAll((i) => new Uint32Array([i, 100 + i])) : undefined, sroot);
out["alltoall.str"] = await world.alltoall(toAll((j) => `${r}->${j}`));
out["alltoall.i8"] = await world.alltoall(toAll((j) => new Int8Array([r, j])));

// split: two colors, reversed order inside each (key = -rank); rank 0 opts out of a second split.
const half = (await world.split(r % 2, -r))!;
out["split"] = {
  rank: half.rank,
  size: half.size,
  oldRanks: await half.allgather(r),
  sum: await half.allreduce(r, "sum"),
  ctxDiffers: half.ctx !== world.ctx,
};
const some = await world.split(r === 0 ? null : 1);
out["split.undefined"] = some === null ? null : { rank: some.rank, size: some.size };

// dup: same ranks, separate traffic. Rank 0 sends "D" on dup then "W" on world to rank 1;
// rank 1 receives on world first and must get "W".
const dup = await world.dup();
out["dup"] = { rank: dup.rank, size: dup.size, sum: await dup.allreduce(1, "sum"), ctxDiffers: dup.ctx !== world.ctx && dup.ctx !== half.ctx };
if (n > 1 && r === 0) {
  await dup.send(1, "D", 4);
  await world.send(1, "W", 4);
}
if (n > 1 && r === 1) {
  out["dup.separation"] = [(await world.recv(0, 4)).data, (await dup.recv(0, 4)).data];
}

// Collectives started together without awaiting one another must not mix.
const [s, b, , g] = await Promise.all([world.allreduce(r, "sum"), world.bcast(n - 1 === r ? "last" : undefined, n - 1), world.barrier(), world.allgather(r * 10)]);
out["concurrent"] = { s, b, g };

report({ rank: r, size: n, results: plain(out) as Record<string, unknown> });
await done();
