import { expect, test } from "bun:test";
import { ByteRate } from "../../src/util/byte-rate.ts";

test("a burst passes without waiting; past it, the wait is what the rate needs to pay the debt back", () => {
  const r = new ByteRate(1000, 5000, 0);
  expect(r.take(5000, 0)).toBe(0);
  expect(r.take(500, 0)).toBe(500);
  // 500 ms later the debt is paid; 1,000 bytes more wait a second.
  expect(r.take(1000, 500)).toBe(1000);
});

test("saved-up bytes are capped at the burst: a sender idle for an hour still gets only the burst at once", () => {
  const r = new ByteRate(1000, 5000, 0);
  expect(r.take(5000, 3_600_000)).toBe(0);
  expect(r.take(1000, 3_600_000)).toBe(1000);
});

test("a steady sender at the rate never waits", () => {
  const r = new ByteRate(1000, 1000, 0);
  for (let t = 0; t < 100_000; t += 100) expect(r.take(100, t)).toBe(0);
});

test("a debt forgiven is gone: the next bytes wait only for themselves", () => {
  const r = new ByteRate(1000, 5000, 0);
  expect(r.take(6000, 0)).toBe(1000);
  r.forgive();
  expect(r.take(500, 0)).toBe(500);
});
