/**
 * Rank program (n >= 3): tags, any-source, ordering, every dtype, JSON values, empty and 4 MiB
 * payloads, self-sends. Reports what arrived; the test checks it.
 */
import { ANY_SOURCE, ANY_TAG, type Payload } from "../../../src/comm/index.ts";
import { startWorld } from "../../support/comm-boot.ts";
import { plain, report } from "../../support/comm-report.ts";

const { world, done } = await startWorld();
const r = world.rank;
const n = world.size;
const out: Record<string, unknown> = {};
const next = (r + 1) % n;
const prev = (r - 1 + n) % n;

// Tags: rank 0 sends tags 3, 1, 2 to rank 1, which receives them in the order 2, 1, 3.
if (r === 0) for (const t of [3, 1, 2]) await world.send(1, `tag${t}`, t);
if (r === 1) {
  const got = [];
  for (const t of [2, 1, 3]) {
    const m = await world.recv(0, t);
    got.push([m.data, m.source, m.tag]);
  }
  out["tags"] = got;
}

// Order per source: 200 messages from rank 0 to rank 2, received with ANY_TAG.
if (r === 0) await Promise.all(Array.from({ length: 200 }, (_, i) => world.send(2, i, i % 5)));
if (r === 2) {
  const seen: number[] = [];
  for (let i = 0; i < 200; i++) seen.push((await world.recv(0, ANY_TAG)).data as number);
  out["order"] = seen;
}

// Any-source: everyone else sends its rank to 0 (tag 9); 0 also posts the receives first.
if (r === 0) {
  const got = await Promise.all(Array.from({ length: n - 1 }, () => world.recv(ANY_SOURCE, 9)));
  out["anysource"] = got.map((m) => [m.source, m.data, m.tag]).sort((a, b) => (a[0] as number) - (b[0] as number));
} else {
  await world.send(0, { from: r }, 9);
}

// Every dtype around the ring (values chosen so every type shows them exactly).
const kinds: Payload[] = [
  new Int8Array([-128, 127, r]),
  new Uint8Array([0, 255, r]),
  new Uint8ClampedArray([0, 255, r]),
  new Int16Array([-32768, 32767, r]),
  new Uint16Array([0, 65535, r]),
  new Int32Array([-(2 ** 31), 2 ** 31 - 1, r]),
  new Uint32Array([0, 2 ** 32 - 1, r]),
  new Float16Array([0.5, -2, r]),
  new Float32Array([0.25, -1e30, r]),
  new Float64Array([Math.PI, -Number.MAX_VALUE, r]),
  new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n, BigInt(r)]),
  new BigUint64Array([0n, 2n ** 64n - 1n, BigInt(r)]),
  new Float64Array(0),
];
await Promise.all(kinds.map((k, i) => world.send(next, k, 100 + i)));
const dtypes = [];
for (let i = 0; i < kinds.length; i++) dtypes.push((await world.recv(prev, 100 + i)).data);
out["dtypes"] = plain(dtypes);

// JSON values, including nothing at all.
const values: Payload[] = [{ a: [1, { b: null }], s: "ünï ✓ 😀", t: true }, null, 0, -1.5, "", [], [[]], false, undefined];
await Promise.all(values.map((v, i) => world.send(next, v, 200 + i)));
const json = [];
for (let i = 0; i < values.length; i++) json.push((await world.recv(prev, 200 + i)).data);
out["json"] = json.map((v) => (v === undefined ? "<undefined>" : v));

// 4 MiB each way between 0 and n-1 (exercises backpressure and reassembly); the receiver checks every byte.
const MiB4 = 4 * 1024 * 1024;
const big = (seed: number) => new Uint8Array(MiB4).map((_, i) => (i * 31 + seed) & 255);
const check = (a: Uint8Array, seed: number) => {
  let bad = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== ((i * 31 + seed) & 255)) bad++;
  return { len: a.length, bad, type: a.constructor.name };
};
if (r === 0) {
  const mine = big(7);
  await world.send(n - 1, mine, 42);
  out["4MiB.sendResolved"] = true;
  const back = (await world.recv(n - 1, 43)).data as Float64Array;
  out["4MiB.back"] = { len: back.length, type: back.constructor.name, first: back[0], last: back[back.length - 1] };
}
if (r === n - 1) {
  out["4MiB"] = check((await world.recv(0, 42)).data as Uint8Array, 7);
  await world.send(0, new Float64Array(MiB4 / 8).map((_, i) => i * 0.5), 43);
}

// Self-send: queued locally, delivered as a copy.
const selfBuf = new Int32Array([r, 1, 2]);
const sent = world.send(r, selfBuf, 77);
selfBuf[1] = 99;
await sent;
out["self"] = plain((await world.recv(r, 77)).data);

// Counted before the barrier: past it, a faster peer may already have closed its connections.
const peers = world.transport.peerStates();
out["conns"] = { total: peers.reduce((a, p) => a + p.conns, 0), tcp: peers.reduce((a, p) => a + p.tcp, 0) };
await world.barrier();
report({ rank: r, size: n, results: out });
await done();
