/** What the p2p test program must report on each of its 3 ranks, wherever they ran. */
import { expect } from "bun:test";

const MiB4 = 4 * 1024 * 1024;

function dtypes(from: number) {
  return [
    { t: "Int8Array", v: [-128, 127, from] },
    { t: "Uint8Array", v: [0, 255, from] },
    { t: "Uint8ClampedArray", v: [0, 255, from] },
    { t: "Int16Array", v: [-32768, 32767, from] },
    { t: "Uint16Array", v: [0, 65535, from] },
    { t: "Int32Array", v: [-(2 ** 31), 2 ** 31 - 1, from] },
    { t: "Uint32Array", v: [0, 2 ** 32 - 1, from] },
    { t: "Float16Array", v: [0.5, -2, from] },
    { t: "Float32Array", v: [0.25, Math.fround(-1e30), from] },
    { t: "Float64Array", v: [Math.PI, -Number.MAX_VALUE, from] },
    { t: "BigInt64Array", v: [String(-(2n ** 63n)), String(2n ** 63n - 1n), String(from)] },
    { t: "BigUint64Array", v: ["0", String(2n ** 64n - 1n), String(from)] },
    { t: "Float64Array", v: [] },
  ];
}

/** `transport`: how the ranks must have connected (one node: Unix sockets only; several: TCP only). */
export function expectP2p(res: Record<string, any>[], transport: "unix" | "tcp"): void {
  const n = res.length;
  expect(res[1]!.tags).toEqual([
    ["tag2", 0, 2],
    ["tag1", 0, 1],
    ["tag3", 0, 3],
  ]);
  expect(res[2]!.order).toEqual(Array.from({ length: 200 }, (_, i) => i));
  expect(res[0]!.anysource).toEqual([
    [1, { from: 1 }, 9],
    [2, { from: 2 }, 9],
  ]);
  for (let r = 0; r < n; r++) {
    expect(res[r]!.dtypes).toEqual(dtypes((r - 1 + n) % n));
    expect(res[r]!.json).toEqual([{ a: [1, { b: null }], s: "ünï ✓ 😀", t: true }, null, 0, -1.5, "", [], [[]], false, "<undefined>"]);
    expect(res[r]!.self).toEqual({ t: "Int32Array", v: [r, 1, 2] });
    // Every rank talked to both others: one node means Unix sockets only, three nodes TCP only.
    const conns = res[r]!.conns as { total: number; tcp: number };
    expect(conns.total).toBeGreaterThanOrEqual(2);
    expect(conns.tcp).toBe(transport === "unix" ? 0 : conns.total);
  }
  expect(res[n - 1]!["4MiB"]).toEqual({ len: MiB4, bad: 0, type: "Uint8Array" });
  expect(res[0]!["4MiB.sendResolved"]).toBe(true);
  expect(res[0]!["4MiB.back"]).toEqual({ len: MiB4 / 8, type: "Float64Array", first: 0, last: (MiB4 / 8 - 1) * 0.5 });
}
