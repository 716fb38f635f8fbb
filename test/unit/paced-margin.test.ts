import { expect, test } from "bun:test";
import { pacedMargin } from "../../src/roles/launcher/adapter.ts";

test("the margin covers twice the round trip at the ranks' pace", () => {
  // 1 probe call per ms, a 3 ms round trip: 6 calls go by while the target travels, plus one.
  expect(pacedMargin({ max: 100, at: 0 }, { max: 200, at: 100 }, 3)).toBe(7);
  // 10 calls per ms: 61.
  expect(pacedMargin({ max: 0, at: 0 }, { max: 1000, at: 100 }, 3)).toBe(61);
});

test("slow ranks, no progress or no time between the counts: the first margin (2)", () => {
  expect(pacedMargin({ max: 5, at: 0 }, { max: 6, at: 1000 }, 3)).toBe(2);
  expect(pacedMargin({ max: 5, at: 0 }, { max: 5, at: 100 }, 3)).toBe(2);
  expect(pacedMargin({ max: 5, at: 10 }, { max: 9, at: 10 }, 3)).toBe(2);
});

test("a margin from the pace is capped", () => {
  expect(pacedMargin({ max: 0, at: 0 }, { max: 2 ** 40, at: 1 }, 1000)).toBe(1 << 20);
});
