/**
 * Message sizes at every chunk boundary of the transports, 0 B .. 8 MiB, over shared memory
 * (one node, with a small ring so 8 MiB wraps it many times), Unix sockets and TCP.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { expectClean, launch } from "../support/comm-launcher.ts";

const PROGRAM = join(import.meta.dir, "programs/sizes.ts");

describe("message sizes at chunk boundaries", () => {
  for (const nodes of [1, 2]) {
    test(`2 ranks on ${nodes} node(s)`, async () => {
      const results = await launch({ program: PROGRAM, n: 2, nodes, deadlineMs: 100_000, env: { EBB_COMM_SHM: "1", EBB_COMM_SHM_RING: "65536" } });
      expectClean(results);
      for (const res of results) {
        const rep = res.reports[0] as { rank: number; sizes: number; errors: string[] };
        expect(rep.sizes).toBeGreaterThan(40);
        expect(rep.errors).toEqual([]);
      }
    }, 120_000);
  }
});
