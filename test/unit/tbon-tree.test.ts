import { expect, test } from "bun:test";
import { ROOT, childrenOf, depth, parentOf, subtreeSize } from "../../src/tbon/tree.ts";

test("every node has exactly one parent and is reached from the root", () => {
  for (const k of [1, 2, 3, 8]) {
    for (const n of [1, 2, 5, 8, 9, 64, 100]) {
      const seen: number[] = [];
      const walk = (i: number) => {
        for (const c of childrenOf(i, n, k)) {
          expect(parentOf(c, k)).toBe(i);
          seen.push(c);
          walk(c);
        }
      };
      walk(ROOT);
      expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
      expect(subtreeSize(ROOT, n, k)).toBe(n);
      expect(childrenOf(ROOT, n, k).reduce((a, c) => a + subtreeSize(c, n, k), 0)).toBe(n);
    }
  }
});

test("depth grows with log_k(n)", () => {
  expect(depth(8, 8)).toBe(1);
  expect(depth(9, 8)).toBe(2);
  expect(depth(72, 8)).toBe(2);
  expect(depth(73, 8)).toBe(3);
  expect(depth(1000, 2)).toBe(9);
});
