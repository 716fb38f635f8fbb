import { expect, test } from "bun:test";
import { mulberry32, stream } from "../../src/sim/random.ts";

test("the PRNG is deterministic per seed, uniform-ish, and streams are independent", () => {
  const a = mulberry32(42);
  const b = mulberry32(42);
  const xs = Array.from({ length: 1000 }, () => a.next());
  expect(Array.from({ length: 1000 }, () => b.next())).toEqual(xs);
  expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  expect(Math.abs(mean - 0.5)).toBeLessThan(0.05);
  expect(mulberry32(43).next()).not.toBe(mulberry32(42).next());
  expect(stream(1, "a").next()).not.toBe(stream(1, "b").next());
  expect(stream(1, "a").next()).toBe(stream(1, "a").next());
});
