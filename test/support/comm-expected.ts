import { expect } from "bun:test";
/** What the collectives test program must report on rank r of n, computed the plain way. */
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const product = (xs: number[]) => xs.reduce((a, b) => a * b, 1);
const ta = (t: string, v: (number | string)[]) => ({ t, v });

type Op = "sum" | "min" | "max" | "prod";
const OPS: Op[] = ["sum", "min", "max", "prod"];

/** Element-wise reduction of per-rank vectors, computed the plain way. */
function fold(vectors: number[][], op: Op): number[] {
  return vectors[0]!.map((_, i) => {
    const col = vectors.map((v) => v[i]!);
    if (op === "sum") return col.reduce((a, b) => a + b, 0);
    if (op === "prod") return product(col);
    return op === "min" ? Math.min(...col) : Math.max(...col);
  });
}

export function expected(n: number, r: number): Record<string, unknown> {
  const ranks = range(n);
  const e: Record<string, unknown> = {};
  for (const root of ranks) {
    e[`bcast.json.${root}`] = { root, text: "héllo ✓", list: [root, root * 2] };
    e[`bcast.f64.${root}`] = ta("Float64Array", [root + 0.5, root * 3]);
  }
  for (const op of OPS) {
    const atRoot = r === n - 1;
    const num = fold(ranks.map((q) => [q + 1]), op)[0]!;
    const i32 = fold(ranks.map((q) => [q + 1, -(q + 1), 2]), op);
    e[`reduce.num.${op}`] = atRoot ? num : undefined;
    e[`reduce.i32.${op}`] = atRoot ? ta("Int32Array", i32) : undefined;
    e[`reduce.f64.${op}`] = atRoot ? ta("Float64Array", fold(ranks.map((q) => [(q + 1) * 0.5]), op)) : undefined;
    e[`allreduce.num.${op}`] = num;
    e[`allreduce.arr.${op}`] = fold(ranks.map((q) => [q + 1, 10 - q]), op);
    e[`allreduce.i32.${op}`] = ta("Int32Array", i32);
    e[`allreduce.f32.${op}`] = ta("Float32Array", fold(ranks.map((q) => [q + 1, (q + 1) / 4]), op));
    e[`allreduce.i64.${op}`] = ta("BigInt64Array", i32.slice(0, 2).map(String));
    e[`allreduce.u8.${op}`] = ta("Uint8Array", [fold(ranks.map((q) => [q + 1]), op)[0]! % 256]);
    const big = range(10_000).map((i) => fold(ranks.map((q) => [(i % 7) + q]), op)[0]!);
    e[`allreduce.big.${op}`] = { len: 10_000, hash: big.reduce((h, v, i) => h + v * ((i % 13) + 1), 0), first: big.slice(0, 8) };
    e[`allreduce.big.input-untouched.${op}`] = true;
  }
  const groot = 1 % n;
  e["gather.json"] = r === groot ? ranks.map((q) => ({ r: q })) : undefined;
  e["gather.i16"] = r === groot ? ranks.map((q) => ta("Int16Array", Array(q + 1).fill(q))) : undefined;
  e["allgather.str"] = ranks.map((q) => `s${q}`);
  e["allgather.f64"] = ranks.map((q) => ta("Float64Array", [q, q * q]));
  e["scatter.json"] = { to: r };
  e["scatter.u32"] = ta("Uint32Array", [r, 100 + r]);
  e["alltoall.str"] = ranks.map((j) => `${j}->${r}`);
  e["alltoall.i8"] = ranks.map((j) => ta("Int8Array", [j, r]));
  const mates = ranks.filter((q) => q % 2 === r % 2).sort((a, b) => b - a);
  e["split"] = { rank: mates.indexOf(r), size: mates.length, oldRanks: mates, sum: mates.reduce((a, b) => a + b, 0), ctxDiffers: true };
  e["split.undefined"] = r === 0 ? null : { rank: r - 1, size: n - 1 };
  e["dup"] = { rank: r, size: n, sum: n, ctxDiffers: true };
  if (n > 1 && r === 1) e["dup.separation"] = ["W", "D"];
  e["concurrent"] = { s: (n * (n - 1)) / 2, b: "last", g: ranks.map((q) => q * 10) };
  return e;
}

/** Checks one rank's report of the collectives program against `expected`, and that it reports nothing more. */
export function expectCollectives(got: { rank: number; size: number; results: Record<string, unknown> }, n: number, r: number): void {
  expect(got.rank).toBe(r);
  expect(got.size).toBe(n);
  const want = expected(n, r);
  for (const key of Object.keys(want)) expect({ key, value: got.results[key] }).toEqual({ key, value: want[key] });
  expect(Object.keys(got.results).sort()).toEqual(Object.keys(want).filter((k) => want[k] !== undefined).sort());
}
