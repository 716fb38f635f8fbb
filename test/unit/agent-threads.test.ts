import { expect, test } from "bun:test";
import { threadOfNode } from "../../src/cli/agent-threads.ts";
import { parentOf, ROOT } from "../../src/tbon/tree.ts";

/** For a step over the cluster's first n nodes (fanout 8): the tree edges between agents on two threads, and each thread's node count. */
function spread(n: number, threads: number) {
  const counts = new Array<number>(threads).fill(0);
  let crossing = 0;
  for (let i = 0; i < n; i++) {
    counts[threadOfNode(i, threads)]!++;
    const p = parentOf(i, 8);
    if (p !== ROOT && threadOfNode(p, threads) !== threadOfNode(i, threads)) crossing++;
  }
  return { counts, crossing };
}

test("one thread holds every node", () => {
  expect(spread(1024, 1)).toEqual({ counts: [1024], crossing: 0 });
});

test("a step over the first n nodes crosses threads at most 64 times, and its nodes are spread evenly", () => {
  for (const threads of [2, 3, 4, 8, 64])
    for (const n of [2, 8, 20, 72, 256, 1000, 1024, 4096]) {
      const { counts, crossing } = spread(n, threads);
      expect(crossing).toBeLessThanOrEqual(64);
      if (n >= 256 && threads <= 8) expect(Math.max(...counts) / (n / threads)).toBeLessThan(1.35);
    }
});

test("the threads are 0..threads-1", () => {
  for (let i = 0; i < 5000; i++) expect(threadOfNode(i, 5)).toBeOneOf([0, 1, 2, 3, 4]);
});
