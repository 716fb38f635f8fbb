import { expect, test } from "bun:test";
import { below, readerNodes } from "../../src/tbon/stdin-route.ts";
import { ROOT } from "../../src/tbon/tree.ts";

test("the nodes that hold the reading ranks: all those with ranks, or the one holding the rank named", () => {
  const tasks = [2, 0, 3, 1];
  expect(readerNodes(tasks, undefined)).toEqual([]);
  expect(readerNodes(tasks, "all")).toEqual([0, 2, 3]);
  expect([0, 1, 2, 3, 4, 5].map((r) => readerNodes(tasks, r))).toEqual([[0], [0], [2], [2], [2], [3]]);
  expect(readerNodes(tasks, 6)).toEqual([]);
});

test("below: a node is under itself, its ancestors and the root, and under no other node (fan-out 2: 0,1 | 2,3 under 0 | 4,5 under 1 | 6,7 under 2)", () => {
  expect(below(7, ROOT, 2)).toBe(true);
  expect([0, 1, 2, 3, 4, 5, 6, 7].filter((top) => below(7, top, 2))).toEqual([0, 2, 7]);
  expect([0, 1, 2, 3, 4, 5, 6, 7].filter((top) => below(6, top, 2))).toEqual([0, 2, 6]);
  expect([0, 1, 2, 3, 4, 5, 6, 7].filter((top) => below(4, top, 2))).toEqual([1, 4]);
});
