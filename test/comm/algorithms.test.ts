/**
 * allreduce and bcast around their algorithm switches, on rank counts that are not powers of two
 * (and 2 and 4), within one node (shared memory) and across nodes (TCP), every op.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { expectClean, launch } from "../support/comm-launcher.ts";

const PROGRAM = join(import.meta.dir, "programs/algorithms.ts");

describe("collective algorithms by size and rank count", () => {
  for (const [n, nodes] of [
    [2, 1],
    [3, 1],
    [4, 2],
    [5, 1],
    [6, 3],
  ] as const) {
    test(`n=${n} on ${nodes} node(s)`, async () => {
      const results = await launch({ program: PROGRAM, n, nodes, deadlineMs: 170_000 });
      expectClean(results);
      const reps = results.map((x) => x.reports[0] as { rank: number; errors: string[]; digests: number[] });
      for (const rep of reps) expect({ rank: rep.rank, errors: rep.errors }).toEqual({ rank: rep.rank, errors: [] });
      // Bit-identical results on every rank.
      for (const rep of reps) expect(rep.digests).toEqual(reps[0]!.digests);
      expect(reps[0]!.digests.length).toBeGreaterThan(100);
    }, 180_000);
  }
});
