import { expect, test } from "bun:test";
import { CommUsageError } from "../../src/comm/errors.ts";
import { checkOp, checkReducible, combine, reduceAll } from "../../src/comm/reduce.ts";

test("numbers", () => {
  expect(reduceAll([3, -1, 4], "sum")).toBe(6);
  expect(reduceAll([3, -1, 4], "min")).toBe(-1);
  expect(reduceAll([3, -1, 4], "max")).toBe(4);
  expect(reduceAll([3, -1, 4], "prod")).toBe(-12);
});

test("arrays of numbers, element-wise", () => {
  expect(reduceAll([[1, 5], [2, -5], [3, 0]], "sum")).toEqual([6, 0]);
  expect(reduceAll([[1, 5], [2, -5], [3, 0]], "min")).toEqual([1, -5]);
  expect(reduceAll([[1, 5], [2, -5], [3, 0]], "max")).toEqual([3, 5]);
  expect(reduceAll([[1, 5], [2, -5], [3, 0]], "prod")).toEqual([6, -0]);
});

test("float typed arrays keep their type", () => {
  const r = reduceAll([new Float64Array([0.5, 2]), new Float64Array([0.25, -3])], "sum");
  expect(r).toBeInstanceOf(Float64Array);
  expect(r).toEqual(new Float64Array([0.75, -1]));
  expect(reduceAll([new Float32Array([1, 2]), new Float32Array([3, 0.5])], "prod")).toEqual(new Float32Array([3, 1]));
  expect(reduceAll([new Float16Array([1, 8]), new Float16Array([2, 4])], "max")).toEqual(new Float16Array([2, 8]));
});

test("integer typed arrays wrap like C; 32-bit products are exact modulo 2^32", () => {
  expect(reduceAll([new Int8Array([100]), new Int8Array([100])], "sum")).toEqual(new Int8Array([-56]));
  expect(reduceAll([new Uint16Array([65535]), new Uint16Array([2])], "sum")).toEqual(new Uint16Array([1]));
  const a = 123_456_789;
  const b = 987_654_321;
  expect(reduceAll([new Int32Array([a]), new Int32Array([b])], "prod")).toEqual(new Int32Array([Math.imul(a, b)]));
  expect(reduceAll([new Uint32Array([a]), new Uint32Array([b])], "prod")).toEqual(new Uint32Array([Math.imul(a, b) >>> 0]));
  expect(reduceAll([new Uint8ClampedArray([200]), new Uint8ClampedArray([100])], "sum")).toEqual(new Uint8ClampedArray([255]));
});

test("bigint typed arrays", () => {
  const x = new BigInt64Array([5n, -(2n ** 62n)]);
  const y = new BigInt64Array([-7n, 2n]);
  expect(reduceAll([x, y], "sum")).toEqual(new BigInt64Array([-2n, -(2n ** 62n) + 2n]));
  expect(reduceAll([x, y], "min")).toEqual(new BigInt64Array([-7n, -(2n ** 62n)]));
  expect(reduceAll([x, y], "max")).toEqual(new BigInt64Array([5n, 2n]));
  expect(reduceAll([x, y], "prod")).toEqual(new BigInt64Array([-35n, -(2n ** 63n)]));
  expect(reduceAll([new BigUint64Array([2n ** 64n - 1n]), new BigUint64Array([2n])], "sum")).toEqual(new BigUint64Array([1n]));
});

test("combine writes into the buffer it is given and leaves the inputs alone otherwise", () => {
  const lo = new Int32Array([1, 2, 3]);
  const hi = new Int32Array([10, 20, 30]);
  const fresh = combine(lo, hi, "sum");
  expect(fresh).not.toBe(lo);
  expect(lo).toEqual(new Int32Array([1, 2, 3]));
  const into = combine(lo, hi, "sum", hi);
  expect(into).toBe(hi);
  expect(hi).toEqual(new Int32Array([11, 22, 33]));
});

test("mismatched contributions and unknown ops are usage errors", () => {
  expect(() => combine(new Int32Array(2), new Int32Array(3), "sum")).toThrow(CommUsageError);
  expect(() => combine(new Int32Array(2) as never, new Float64Array(2) as never, "sum")).toThrow(CommUsageError);
  expect(() => combine(1 as never, [1] as never, "sum")).toThrow(CommUsageError);
  expect(() => combine([1, 2], [1], "sum")).toThrow(CommUsageError);
  expect(() => checkOp("avg")).toThrow(CommUsageError);
  expect(() => checkReducible("3")).toThrow(CommUsageError);
  expect(() => checkReducible([1, "2"])).toThrow(CommUsageError);
  expect(() => checkReducible(new Float64Array(1))).not.toThrow();
});
