import { expect, test } from "bun:test";
import { DTYPES, Kind } from "../../src/comm/codec.ts";
import { ANY_SOURCE, ANY_TAG, Matcher } from "../../src/comm/matching.ts";

const arrive = (m: Matcher, src: number, tag: number, data: unknown, seq = 0): void => m.deliver(src, tag, seq, data as never);

test("early arrivals wait in the unexpected queue and are taken oldest first", () => {
  const m = new Matcher();
  arrive(m, 1, 5, "a");
  arrive(m, 2, 5, "b");
  arrive(m, 1, 5, "c");
  expect(m.queued).toBe(3);
  expect(m.take(ANY_SOURCE, 5, 0)?.data).toBe("a");
  expect(m.take(1, ANY_TAG, 0)?.data).toBe("c");
  expect(m.take(1, 5, 0)).toBeUndefined();
  expect(m.take(2, 5, 0)?.data).toBe("b");
  expect(m.queued).toBe(0);
});

test("a receive for one tag skips messages with other tags, which stay queued in order", () => {
  const m = new Matcher();
  arrive(m, 0, 1, "t1");
  arrive(m, 0, 2, "t2");
  arrive(m, 0, 1, "t1b");
  expect(m.take(0, 2, 0)?.data).toBe("t2");
  expect(m.take(0, ANY_TAG, 0)?.data).toBe("t1");
  expect(m.take(0, ANY_TAG, 0)?.data).toBe("t1b");
});

test("arrivals go to the oldest matching posted receive", async () => {
  const m = new Matcher();
  const anyA = m.post(ANY_SOURCE, ANY_TAG, 0);
  const from2 = m.post(2, ANY_TAG, 0);
  const anyB = m.post(ANY_SOURCE, 7, 0);
  arrive(m, 2, 3, "first");
  arrive(m, 2, 7, "second");
  arrive(m, 1, 7, "third");
  expect((await anyA).data).toBe("first");
  expect((await from2).data).toBe("second");
  expect((await anyB).data).toBe("third");
  expect(m.pending).toBe(0);
});

test("per-source order holds through any-source receives", async () => {
  const m = new Matcher();
  for (let i = 0; i < 20; i++) arrive(m, i % 2, 0, i);
  const from1: number[] = [];
  const any: number[] = [];
  for (let i = 0; i < 5; i++) from1.push((await m.receive(1, ANY_TAG, 0)).data as number);
  for (let i = 0; i < 15; i++) any.push((await m.receive(ANY_SOURCE, ANY_TAG, 0)).data as number);
  expect(from1).toEqual([1, 3, 5, 7, 9]);
  expect(any).toEqual([0, 2, 4, 6, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
});

test("collective sequence numbers never match each other, even with wildcards", () => {
  const m = new Matcher();
  arrive(m, 0, 0, "seq2", 2);
  expect(m.take(ANY_SOURCE, ANY_TAG, 1)).toBeUndefined();
  expect(m.take(0, 0, 2)?.data).toBe("seq2");
});

test("rejectWhere fails only the selected receives; keep-alive is held while any receive waits", async () => {
  let held = 0;
  const m = new Matcher({ hold: () => held++, release: () => held-- });
  const a = m.post(1, 0, 0);
  const b = m.post(2, 0, 0);
  const c = m.post(ANY_SOURCE, 0, 0);
  expect(held).toBe(3);
  m.rejectWhere((src) => src === 1 || src === ANY_SOURCE, (src) => new Error(`gone ${src}`));
  await expect(a).rejects.toThrow("gone 1");
  await expect(c).rejects.toThrow("gone -1");
  expect(held).toBe(1);
  arrive(m, 2, 0, "ok");
  expect((await b).data).toBe("ok");
  expect(held).toBe(0);
});

test("bytes from a ring land in the oldest matching receive's typed array of their dtype and length; anything else is left to deliver", async () => {
  const KIND_U8 = Kind.TYPED + DTYPES.indexOf(Uint8Array as never);
  const ring = new Uint8Array([9, 9, 1, 2, 3, 4, 9]);
  const m = new Matcher();
  const f64 = new Float64Array(1);
  const wrongSize = m.post(0, 1, 0, new Uint8Array(3));
  const byteInto = new Uint8Array(4);
  const fits = m.post(ANY_SOURCE, 2, 0, byteInto);
  const other = m.post(0, 3, 0, f64);
  expect(m.deliverBytes(0, 1, 0, KIND_U8, ring, 2, 4)).toBe(false); // its oldest receive's buffer has another size
  expect(m.deliverBytes(0, 3, 0, KIND_U8, ring, 2, 8)).toBe(false); // bytes for a Float64Array
  expect(m.deliverBytes(0, 2, 0, KIND_U8 + 1, ring, 2, 4)).toBe(false); // not bytes on the wire
  expect(m.deliverBytes(0, 9, 0, KIND_U8, ring, 2, 4)).toBe(false); // no receive: it must be queued by deliver
  expect(m.pending).toBe(3);
  expect(m.deliverBytes(5, 2, 0, KIND_U8, ring, 2, 4)).toBe(true);
  ring.fill(0); // the ring's memory is reused at once: the receive holds its own copy
  const got = await fits;
  expect(got.data).toBe(byteInto);
  expect([...byteInto]).toEqual([1, 2, 3, 4]);
  expect([got.src, got.tag]).toEqual([5, 2]);
  expect(m.pending).toBe(2);
  // Another dtype lands too, element by element (the ring's bytes need not be aligned for it).
  const KIND_F64 = Kind.TYPED + DTYPES.indexOf(Float64Array as never);
  const odd = new Uint8Array(11);
  odd.set(new Uint8Array(new Float64Array([2.5]).buffer), 3);
  expect(m.deliverBytes(0, 3, 0, KIND_F64, odd, 3, 8)).toBe(true);
  expect((await other).data).toBe(f64);
  expect(f64[0]).toBe(2.5);
  m.rejectWhere(() => true, () => new Error("done"));
  await expect(wrongSize).rejects.toThrow("done");
});
