/** Point-to-point across real processes, over Unix sockets (one node) and TCP (three nodes). */
import { describe, test } from "bun:test";
import { join } from "node:path";
import { expectClean, launch } from "../support/comm-launcher.ts";
import { expectP2p } from "../support/p2p-expected.ts";

const PROGRAM = join(import.meta.dir, "programs/p2p.ts");

describe("point-to-point across processes", () => {
  for (const nodes of [1, 3]) {
    test(`n=3 on ${nodes} node(s)`, async () => {
      const n = 3;
      const results = await launch({ program: PROGRAM, n, nodes, deadlineMs: 60_000 });
      expectClean(results);
      const res = results.map((x) => (x.reports[0] as { results: Record<string, unknown> }).results);
      expectP2p(res, nodes === 1 ? "unix" : "tcp");
    }, 90_000);
  }
});
