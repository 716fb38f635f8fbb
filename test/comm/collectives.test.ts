/**
 * Every collective with every op across N real processes. Ranks spread over "nodes" so that
 * some pairs use the Unix socket and others TCP.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { expectClean, launch } from "../support/comm-launcher.ts";
import { expected } from "../support/comm-expected.ts";

const PROGRAM = join(import.meta.dir, "programs/collectives.ts");
describe("collectives across processes", () => {
  for (const [n, nodes] of [
    [1, 1],
    [2, 1],
    [3, 1],
    [4, 2],
    [8, 3],
  ] as const) {
    test(`n=${n} on ${nodes} node(s)`, async () => {
      const results = await launch({ program: PROGRAM, n, nodes, deadlineMs: 60_000 });
      expectClean(results);
      for (const [r, res] of results.entries()) {
        const got = res.reports[0] as { rank: number; size: number; results: Record<string, unknown> };
        expect(got.rank).toBe(r);
        expect(got.size).toBe(n);
        const want = expected(n, r);
        for (const key of Object.keys(want)) {
          expect({ key, value: got.results[key] }).toEqual({ key, value: want[key] });
        }
        // Nothing reported beyond what is checked.
        expect(Object.keys(got.results).sort()).toEqual(Object.keys(want).filter((k) => want[k] !== undefined).sort());
      }
    }, 90_000);
  }
});
