import { describe, expect, test } from "bun:test";
import {
  Bundle,
  DTYPES,
  FLAG_COLL,
  FrameParser,
  FrameType,
  type Header,
  type Payload,
  type TypedArray,
  concat,
  decodePayload,
  encodePayload,
  frameChunks,
} from "../../src/comm/codec.ts";
import { CommUsageError } from "../../src/comm/errors.ts";

const HEAD = { type: FrameType.DATA, flags: 0, ctx: 7, src: 3, tag: 11, seq: 0 };

/** Encodes into frame bytes, feeds them to a parser in pieces of the given sizes, decodes. */
function roundTrip(p: Payload | Bundle, pieces: (i: number) => number = () => 1 << 30): { h: Header; data: Payload | Bundle } {
  const bytes = concat(frameChunks(HEAD, encodePayload(p)));
  const frames: { h: Header; data: Payload | Bundle }[] = [];
  const parser = new FrameParser((h, body) => frames.push({ h, data: decodePayload(h.kind, body) }));
  for (let off = 0, i = 0; off < bytes.length; i++) {
    const n = Math.max(1, pieces(i));
    parser.push(bytes.subarray(off, off + n));
    off += n;
  }
  expect(frames.length).toBe(1);
  return frames[0]!;
}

function sample(Ctor: (typeof DTYPES)[number], n: number): TypedArray {
  const a = new Ctor(n);
  const big = a instanceof BigInt64Array || a instanceof BigUint64Array;
  for (let i = 0; i < n; i++) (a as unknown as unknown[])[i] = big ? BigInt(i * 3 + 1) : (i * 3 + 1) % 100;
  return a;
}

describe("typed arrays", () => {
  for (const Ctor of DTYPES) {
    test(`${Ctor.name}: values, type and alignment survive, in one piece or byte by byte`, () => {
      for (const n of [0, 1, 5, 1000]) {
        const a = sample(Ctor, n);
        for (const pieces of [undefined, () => 1, (i: number) => (i % 3) + 5]) {
          const { h, data } = roundTrip(a, pieces);
          expect(h).toMatchObject({ ...HEAD, bodyLen: a.byteLength });
          expect(data).toBeInstanceOf(Ctor);
          expect(data).toEqual(a);
          expect((data as TypedArray).byteOffset % Ctor.BYTES_PER_ELEMENT).toBe(0);
        }
      }
    });
  }

  test("a view sends only its own bytes", () => {
    const whole = new Int32Array([1, 2, 3, 4, 5, 6]);
    const { data } = roundTrip(whole.subarray(2, 5));
    expect(data).toEqual(new Int32Array([3, 4, 5]));
  });

  test("a 4 MiB Float64Array arrives intact through odd-sized pieces, its bytes not copied on the way out", () => {
    const a = new Float64Array(512 * 1024).map((_, i) => i * 1.25 - 7);
    const chunks = frameChunks(HEAD, encodePayload(a));
    expect(chunks.some((c) => c.buffer === a.buffer)).toBe(true);
    const { data } = roundTrip(a, (i) => 65_536 + (i % 7) * 1001);
    expect(data).toBeInstanceOf(Float64Array);
    expect(Buffer.compare(Buffer.from((data as Float64Array).buffer), Buffer.from(a.buffer))).toBe(0);
  });

  test("a 4 MiB Uint8Array in one piece", () => {
    const a = new Uint8Array(4 * 1024 * 1024).map((_, i) => (i * 7) & 255);
    const { data } = roundTrip(a);
    expect(Buffer.compare(data as Uint8Array, a)).toBe(0);
  });
});

describe("JSON values", () => {
  const values: Payload[] = [null, true, false, 0, -1.5, 1e300, "", "ünï ✓ 😀", [], [1, [2, [3]]], {}, { a: { b: [null, "x"] } }];
  for (const v of values) {
    test(`${JSON.stringify(v)}`, () => {
      expect(roundTrip(v, () => 2).data).toEqual(v);
    });
  }

  test("undefined travels as an empty body", () => {
    const { h, data } = roundTrip(undefined);
    expect(h.bodyLen).toBe(0);
    expect(data).toBeUndefined();
  });

  test("a large JSON value", () => {
    const v = { list: Array.from({ length: 100_000 }, (_, i) => ({ i, s: `v${i}` })) };
    expect(roundTrip(v, () => 4096).data).toEqual(v);
  });

  test("what JSON cannot carry is refused, not mangled", () => {
    expect(() => encodePayload(new ArrayBuffer(8) as never)).toThrow(CommUsageError);
    expect(() => encodePayload(new DataView(new ArrayBuffer(8)) as never)).toThrow(CommUsageError);
    expect(() => encodePayload((() => 1) as never)).toThrow(CommUsageError);
  });
});

describe("bundles and frames", () => {
  test("a bundle of mixed payloads decodes to aligned views of one buffer", () => {
    const items: Payload[] = [new Uint8Array([1, 2, 3]), "x", new Float64Array([1.5, 2.5]), undefined, new Int16Array(0), { k: [1] }, new BigInt64Array([-5n])];
    const { data } = roundTrip(new Bundle(items), (i) => (i % 5) + 1);
    expect(data).toBeInstanceOf(Bundle);
    const got = (data as Bundle).items;
    expect(got).toEqual(items);
    const f64 = got[2] as Float64Array;
    const i64 = got[6] as BigInt64Array;
    expect(f64.byteOffset % 8).toBe(0);
    expect(i64.byteOffset % 8).toBe(0);
    expect(f64.buffer).toBe(i64.buffer);
  });

  test("header fields round-trip, negative ranks and tags included", () => {
    const h = { type: FrameType.DATA, flags: FLAG_COLL, ctx: 2 ** 32 - 1, src: -1, tag: -7, seq: 123_456 };
    const frames: Header[] = [];
    const parser = new FrameParser((x) => frames.push(x));
    parser.push(concat(frameChunks(h, encodePayload("x"))));
    expect(frames[0]).toMatchObject(h);
  });

  test("many frames in one chunk and frames split across chunks come out in order", () => {
    const bytes = concat(Array.from({ length: 50 }, (_, i) => concat(frameChunks({ ...HEAD, tag: i }, encodePayload(i % 2 ? i : new Uint16Array([i]))))));
    for (const step of [bytes.length, 1, 23, 24, 25]) {
      const tags: number[] = [];
      const parser = new FrameParser((h, body) => {
        tags.push(h.tag);
        const v = decodePayload(h.kind, body);
        expect(h.tag % 2 ? v : (v as Uint16Array)[0]).toBe(h.tag);
      });
      for (let off = 0; off < bytes.length; off += step) parser.push(bytes.subarray(off, off + step));
      expect(tags).toEqual(Array.from({ length: 50 }, (_, i) => i));
    }
  });

  test("ranges of a larger buffer parse like views of them (the ring hands its memory as ranges)", () => {
    const bytes = concat(Array.from({ length: 20 }, (_, i) => concat(frameChunks({ ...HEAD, tag: i }, encodePayload(new Uint8Array(i * 7).fill(i))))));
    const around = new Uint8Array(bytes.length + 100).fill(0xee);
    around.set(bytes, 50);
    for (const step of [bytes.length, 1, 23, 24, 25, 97]) {
      const got: [number, number[]][] = [];
      const parser = new FrameParser((h, body) => got.push([h.tag, [...body]]));
      for (let off = 0; off < bytes.length; off += step) parser.push(around, 50 + off, 50 + Math.min(off + step, bytes.length));
      expect(got).toEqual(Array.from({ length: 20 }, (_, i) => [i, Array.from({ length: i * 7 }, () => i)]));
    }
  });

  test("a small frame whole in its chunk is offered to `direct` first: taken ones skip onFrame, split ones are never offered", () => {
    const bytes = concat(Array.from({ length: 10 }, (_, i) => concat(frameChunks({ ...HEAD, tag: i }, encodePayload(new Uint8Array(8).fill(i))))));
    for (const step of [bytes.length, 1, 23, 32, 33]) {
      const order: string[] = [];
      const parser = new FrameParser(
        (h, body) => order.push(`frame ${h.tag} ${body[0]}`),
        undefined,
        (h, chunk, at) => {
          if (h.tag % 2 === 1) return false; // declined: parsed as usual
          order.push(`direct ${h.tag} ${chunk[at]} ${h.bodyLen}`);
          return true;
        },
      );
      for (let off = 0; off < bytes.length; off += step) parser.push(bytes.subarray(off, off + step));
      const whole = (i: number) => Math.floor((i * 32) / step) === Math.floor((i * 32 + 31) / step); // frame i in one chunk
      expect(order).toEqual(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 && whole(i) ? `direct ${i} ${i} 8` : `frame ${i} ${i}`)));
    }
  });

  test("a body that is not whole elements is a protocol error", () => {
    expect(() => decodePayload(16 + DTYPES.indexOf(Float64Array as never), new Uint8Array(12))).toThrow();
    expect(() => decodePayload(250, new Uint8Array(1))).toThrow();
  });
});
