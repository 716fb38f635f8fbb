/**
 * Every collective with every op across N real processes. Ranks spread over "nodes" so that
 * some pairs use the Unix socket and others TCP.
 */
import { describe, test } from "bun:test";
import { join } from "node:path";
import { expectClean, launch } from "../support/comm-launcher.ts";
import { expectCollectives } from "../support/comm-expected.ts";

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
      for (const [r, res] of results.entries()) expectCollectives(res.reports[0] as { rank: number; size: number; results: Record<string, unknown> }, n, r);
    }, 90_000);
  }
});
