/**
 * The redistribution helpers between real processes: 8 ranks on 2 node names (so both Unix
 * sockets and TCP), every pair of sizes 1..8, block, 1-D and 2-D block-cyclic, two element types;
 * then 4 MiB to one rank and back.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { expectClean, Job } from "../support/comm-launcher.ts";

test("every old/new size pair from 1 to 8 moves to the right owners over ebb/comm", async () => {
  const job = new Job({ program: join(import.meta.dir, "programs/redistribute.ts"), n: 8, nodes: 2, deadlineMs: 90_000 });
  const results = await job.finished();
  expectClean(results);
  const reports = results.map((r) => r.reports[0] as { rank: number; moves: number; mismatches: string[]; bigOk: boolean });
  expect(reports.map((r) => r.rank).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  for (const r of reports) expect(r).toEqual({ rank: r.rank, moves: 3 * 2 * 64, mismatches: [], bigOk: true });
}, 120_000);
