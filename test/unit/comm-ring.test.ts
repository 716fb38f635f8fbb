/**
 * The shared-memory ring's stamped records (src/comm/shm.ts): a consumer between records may take a
 * record from the line it polls, before the tail, only when its producer stamped it whole; a byte
 * left from an earlier lap never reads as a stamp. Both ends in this process, over a /dev/shm file;
 * the last test runs two transports through 4 KiB rings.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ring, STAMP_OFFSET, STAMPED } from "../../src/comm/shm.ts";
import { Transport } from "../../src/comm/transport.ts";
import { createWorld } from "../../src/comm/world.ts";

const dir = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "ebbring-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function pair(size = 4096): { w: Ring; r: Ring } {
  const path = join(dir, `ring-${n++}`);
  const w = Ring.create(path, size);
  return { w, r: Ring.open(path) };
}

/** A record of `len` bytes (>= STAMP_OFFSET + 1) whose stamped byte is `type` and the rest `fill`. */
function record(len: number, type: number, fill: number): Uint8Array {
  const b = new Uint8Array(len).fill(fill);
  b[STAMP_OFFSET] = type;
  return b;
}

/** What the consumer takes through the tail, concatenated. */
function readAll(r: Ring): Uint8Array {
  const parts: Uint8Array[] = [];
  r.read((ring, start, end) => parts.push(ring.slice(start, end)));
  return Uint8Array.from(parts.flatMap((p) => [...p]));
}

test("a stale byte with the stamp's bit, left from an earlier lap, is not read as a stamp", () => {
  const { w, r } = pair();
  // Laps of records of bytes 0xff (every bit set), written unstamped and read through the tail: the
  // ring's memory is all 0xff behind the reader, wherever it stops.
  for (let lap = 0; lap < 3; lap++) {
    for (const len of [1000, 1500, 999, 7, 33]) {
      expect(w.write(new Uint8Array(len).fill(0xff))).toBe(len);
      expect(readAll(r).every((x) => x === 0xff)).toBe(true);
      expect(r.stamped()).toBe(false); // the producer cleared the byte past each tail it published
      expect(r.available()).toBe(0);
    }
  }
});

test("a record stamped whole is taken at the read position before its tail, anywhere around the ring", () => {
  const { w, r } = pair();
  for (let i = 0; i < 600; i++) {
    const len = 24 + (i % 41); // frames of 24..64 bytes: every offset, and across the ring's end
    const start = w.position;
    const at = w.reserve(len);
    const rec = record(len, 1, i & 0x7f);
    if (at >= 0) w.bytes.set(rec, at);
    else w.put(rec);
    expect(r.stamped()).toBe(false); // written, not stamped yet
    w.commitStamped(start);
    expect(r.stamped()).toBe(true);
    const from = r.readAt;
    if (from + len <= r.size) {
      const got = r.bytes.slice(from, from + len);
      expect(got[STAMP_OFFSET]).toBe(1 | STAMPED);
      got[STAMP_OFFSET] = 1;
      expect(got).toEqual(rec);
      r.consumed(len);
      expect(r.available()).toBe(0); // its tail, published after the stamp, is not counted again
    } else {
      const got = readAll(r); // across the ring's end: through the tail, as before
      got[STAMP_OFFSET] = 1;
      expect(got).toEqual(rec);
    }
    expect(r.stamped()).toBe(false);
  }
});

test("the producer keeps slack: a full ring still leaves the stamp byte past its tail to it", () => {
  const { w, r } = pair();
  const wrote = w.write(new Uint8Array(5000).fill(0xff));
  expect(wrote).toBeLessThan(4096);
  expect(w.free()).toBe(0);
  expect(readAll(r).length).toBe(wrote);
  expect(r.stamped()).toBe(false);
});

test("small (stamped) and large (streamed) messages mixed through 4 KiB rings arrive whole and in order", async () => {
  process.env.EBB_COMM_SHM_RING = "4096";
  let a: Transport, b: Transport;
  try {
    a = Transport.open({ node: "n", runDir: dir, host: "127.0.0.1" });
    b = Transport.open({ node: "n", runDir: dir, host: "127.0.0.1" });
  } finally {
    delete process.env.EBB_COMM_SHM_RING;
  }
  const cards = [a.card, b.card];
  const [w0, w1] = [createWorld(a, cards), createWorld(b, cards)];
  const pattern = (i: number, n: number) => Uint8Array.from({ length: n }, (_, k) => (i * 7 + k) & 0xff);
  const sizes = Array.from({ length: 300 }, (_, i) => [8, 1, 40, 3000, 5000, 100, 9000, 17][i % 8]! + (i % 5));
  const sends = sizes.map((n, i) => w0.send(1, pattern(i, n), 3));
  for (let i = 0; i < sizes.length; i++) {
    const m = await w1.recv(0, 3);
    expect(m.data).toEqual(pattern(i, sizes[i]!));
  }
  await Promise.all(sends);
  // 8 B ping-pong both ways, received into buffers: the stamped frames' own path, many laps of the ring.
  const into0 = new Uint8Array(8), into1 = new Uint8Array(8);
  const side1 = (async () => {
    for (let i = 0; i < 500; i++) {
      await w1.recv(0, 0, into1);
      await w1.send(0, into1);
    }
  })();
  for (let i = 0; i < 500; i++) {
    await w0.send(1, pattern(i, 8));
    await w0.recv(1, 0, into0);
    expect(into0).toEqual(pattern(i, 8));
  }
  await side1;
  await Promise.all([a.close(), b.close()]);
});
