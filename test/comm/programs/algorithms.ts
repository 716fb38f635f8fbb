/**
 * Rank program: allreduce and bcast at the sizes where their algorithms change (recursive
 * doubling / ring; binomial tree / scatter + allgather), with every op and several dtypes, from
 * every root, lengths not divisible by the rank count. Values are small integers so every
 * association order gives the same bits; each rank computes what it must get and reports the
 * mismatches, plus a digest of every result so the test can check that all ranks agree.
 */
import { OPS, type TypedArray } from "../../../src/comm/index.ts";
import { startWorld } from "../../support/comm-boot.ts";
import { report } from "../../support/comm-report.ts";

const { world, done } = await startWorld();
const r = world.rank;
const n = world.size;
const errors: string[] = [];
const digests: number[] = [];

type Ctor = new (len: number) => TypedArray;
const types: [string, Ctor][] = [
  ["f64", Float64Array],
  ["i32", Int32Array],
  ["u8", Uint8Array],
  ["i64", BigInt64Array],
];
// Element counts: below and above RING_BYTES (64 KiB) and BCAST_LARGE_BYTES (128 KiB) for each
// element size, one under n, odd counts.
const lengths = (bytes: number) => [
  ...new Set([1, Math.max(1, n - 1), n, 1001, 65536 / bytes - 1, 65536 / bytes + 3, 131072 / bytes - 1, 131072 / bytes + 5, ...(bytes === 8 ? [(1 << 20) / bytes + 7] : [])]),
];

const value = (q: number, i: number) => ((i * 7 + q * 3) % 11) + 1; // 1..11: products stay small below
const digest = (a: TypedArray) => {
  let h = 0;
  for (let i = 0; i < a.length; i++) h = (h * 31 + Number(a[i]!) * ((i % 5) + 1)) % 1_000_003;
  return h;
};

for (const [name, Ctor] of types) {
  const bytes = (Ctor as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
  const big = Ctor === BigInt64Array;
  const cast = (x: number) => (big ? BigInt(x) : x) as never;
  // The 1-byte and 8-byte integer types only at the small sizes (the switches are size-based and
  // already crossed by f64 and i32): keeps the test light on a loaded machine.
  for (const len of lengths(bytes).filter((l) => (Ctor !== Uint8Array && !big) || l < 2000)) {
    for (const op of len > 2000 && Ctor !== Float64Array ? (["sum", "max"] as const) : OPS) {
      // prod over many ranks of values up to 11 overflows u8/f32 exactness: use values 1..2 there.
      const v = (q: number, i: number) => (op === "prod" ? (i + q) % 2 + 1 : value(q, i));
      const mine = new Ctor(len);
      for (let i = 0; i < len; i++) mine[i] = cast(v(r, i));
      const before = digest(mine);
      const got = await world.allreduce(mine, op);
      const want = new Ctor(len);
      for (let i = 0; i < len; i++) {
        let acc = v(0, i);
        for (let q = 1; q < n; q++) {
          const x = v(q, i);
          acc = op === "sum" ? acc + x : op === "prod" ? acc * x : op === "min" ? Math.min(acc, x) : Math.max(acc, x);
        }
        want[i] = cast(acc);
      }
      if (got.constructor !== Ctor || got.length !== len) errors.push(`allreduce ${name}[${len}] ${op}: got ${got.constructor.name}[${got.length}]`);
      else if (digest(got) !== digest(want) || got.some((x, i) => x !== want[i])) errors.push(`allreduce ${name}[${len}] ${op}: wrong values`);
      if (digest(mine) !== before) errors.push(`allreduce ${name}[${len}] ${op}: input modified`);
      digests.push(digest(got));
    }
    for (const root of len > 2000 ? [n - 1] : Array.from({ length: n }, (_, q) => q)) {
      const src = new Ctor(len);
      for (let i = 0; i < len; i++) src[i] = cast(value(root, i));
      const got = await world.bcast(r === root ? src : undefined, root);
      if (got.constructor !== Ctor || got.length !== len || got.some((x, i) => x !== src[i])) errors.push(`bcast ${name}[${len}] from ${root}: wrong`);
      digests.push(digest(got));
    }
  }
}
// A large JSON value stays on the tree (only typed arrays are split).
const text = "x".repeat(200_000);
const j = await world.bcast(r === n - 1 ? { text } : undefined, n - 1);
if ((j as { text: string }).text !== text) errors.push("bcast json: wrong");
report({ rank: r, size: n, errors, digests });
await done();
