/**
 * Rank program (n = 2): every message size at the transport's chunk boundaries, 0 B .. 8 MiB,
 * both ways; first all sent at once before the receiver posts anything (unexpected, many
 * outstanding), then with the receives posted first. Also typed arrays of 8-byte elements (views
 * must be aligned) and `recv(..., into)`. Each receiver checks every byte and reports a summary.
 * The boundaries: header 24 B, the codec's 16 KiB part and 64 KiB coalescing limits, the shared
 * memory ring (EBB_COMM_SHM_RING, see the test) and its halves, 1, 4 and 8 MiB. Last, hundreds of
 * small frames of uneven sizes, which cross the ring's end in every way.
 */
import { startWorld } from "../../support/comm-boot.ts";
import { report } from "../../support/comm-report.ts";

const { world, done } = await startWorld();
const r = world.rank;
const peer = 1 - r;
const ring = Number(process.env.EBB_COMM_SHM_RING ?? 65536);
const around = (x: number) => [x - 25, x - 24, x - 23, x - 1, x, x + 1];
const sizes = [
  ...new Set(
    [0, 1, 7, 8, 9, 23, 24, 25, 4096, ...around(16384), ...around(65536), ...around(ring / 2), ...around(ring), ...around(2 * ring), ...around(1 << 20), 4 << 20, (8 << 20) - 1, 8 << 20].filter((x) => x >= 0),
  ),
].sort((a, b) => a - b);
const fill = (n: number, seed: number) => {
  const a = new Uint8Array(n);
  for (let i = 0; i < n; i++) a[i] = (i * 131 + seed * 7 + (i >>> 8)) & 255;
  return a;
};
const bad = (a: Uint8Array, n: number, seed: number) => {
  if (!(a instanceof Uint8Array) || a.length !== n) return `length ${a?.length} type ${a?.constructor?.name}`;
  let wrong = 0;
  for (let i = 0; i < n; i++) if (a[i] !== ((i * 131 + seed * 7 + (i >>> 8)) & 255)) wrong++;
  return wrong === 0 ? "" : `${wrong} bytes wrong`;
};
const errors: string[] = [];

// Phase 1: rank 0 sends everything without waiting; rank 1 receives only after a barrier.
if (r === 0) {
  await Promise.all(sizes.map((n, i) => world.send(peer, fill(n, i), i)));
} else {
  // Receive in reverse tag order: every message is queued (unexpected) before its receive.
  const got = new Map<number, Uint8Array>();
  for (let i = sizes.length - 1; i >= 0; i--) got.set(i, (await world.recv(peer, i)).data as Uint8Array);
  sizes.forEach((n, i) => {
    const e = bad(got.get(i)!, n, i);
    if (e) errors.push(`phase1 ${n} B: ${e}`);
  });
}
await world.barrier();

// Phase 2: rank 0 posts every receive first, then rank 1 sends, one after the other.
if (r === 0) {
  const recvs = sizes.map((_, i) => world.recv(peer, 1000 + i));
  await world.barrier();
  const got = await Promise.all(recvs);
  sizes.forEach((n, i) => {
    const e = bad(got[i]!.data as Uint8Array, n, i + 1);
    if (e) errors.push(`phase2 ${n} B: ${e}`);
  });
} else {
  await world.barrier();
  for (const [i, n] of sizes.entries()) await world.send(peer, fill(n, i + 1), 1000 + i);
}

// Phase 3: Float64Array messages (aligned views) and receives into the caller's buffer.
const f64 = (n: number, s: number) => new Float64Array(n).map((_, i) => i * 0.5 + s);
const elems = [0, 1, 3, 2047, 2048, 2049, 8189, 8192, 131072, 524288];
if (r === 0) {
  for (const [i, n] of elems.entries()) await world.send(peer, f64(n, i), 2000 + i);
} else {
  for (const [i, n] of elems.entries()) {
    const into = new Float64Array(n);
    const m = await world.recv(peer, 2000 + i, i % 2 === 0 ? into : undefined);
    const a = m.data as Float64Array;
    const want = f64(n, i);
    if (!(a instanceof Float64Array) || a.length !== n || a.some((x, j) => x !== want[j])) errors.push(`f64 ${n}: wrong`);
    if (i % 2 === 0 && a !== into) errors.push(`f64 ${n}: not received into the given buffer`);
  }
}
await world.barrier();

// Phase 4: many small frames (written into the ring straight from the payload) of uneven sizes,
// so frames straddle the ring's end many times; first all sent at once with the receiver late (the
// ring fills and later frames queue behind the ones waiting), then one by one with replies.
const small = [...Array.from({ length: 300 }, (_, i) => (i * 997) % 4073), ...Array.from({ length: 3000 }, (_, i) => (i * 7) % 41)];
if (r === 0) {
  await Promise.all(small.map((n, i) => world.send(peer, fill(n, i), 10000 + i)));
  await world.barrier();
  for (const [i, n] of small.entries()) {
    await world.send(peer, fill(n, i + 2), 20000 + i);
    await world.recv(peer, 20000 + i);
  }
} else {
  await world.barrier();
  for (const [i, n] of small.entries()) {
    const e = bad((await world.recv(peer, 10000 + i)).data as Uint8Array, n, i);
    if (e) errors.push(`phase4 ${n} B: ${e}`);
  }
  for (const [i, n] of small.entries()) {
    const into = new Uint8Array(n);
    const m = await world.recv(peer, 20000 + i, i % 2 ? into : undefined);
    const e = bad(m.data as Uint8Array, n, i + 2);
    if (e) errors.push(`phase4 one by one ${n} B: ${e}`);
    await world.send(peer, undefined, 20000 + i);
  }
}
await world.barrier();
report({ rank: r, sizes: sizes.length, errors });
await done();
