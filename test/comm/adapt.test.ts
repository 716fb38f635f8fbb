/**
 * A new world from a changed membership, across real processes: 4 ranks, ranks 2 and 3 leave,
 * one process joins as rank 2 of the next generation. Each old rank sends the joiner a block
 * larger than a shared-memory ring, so the leavers on its node stream theirs through rings as
 * they go. Staying ranks keep their rank and their connection; the old world and everything
 * derived from it are invalid afterwards.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { Job, expectClean } from "../support/comm-launcher.ts";

const PROGRAM = join(import.meta.dir, "programs/adapt.ts");

test("4 ranks -> ranks 0,1 stay, 2,3 leave, a joiner is appended; old communicators are invalid", async () => {
  const job = new Job({ program: PROGRAM, n: 4, nodes: 2, deadlineMs: 30_000 });
  job.spawn("joiner", { EBB_TEST_ROLE: "join", EBB_TEST_NODE: "node1" });
  const results = await job.finished();
  expectClean(results);
  const by = Object.fromEntries(results.map((r) => [r.name, r.reports[0] as Record<string, unknown>]));

  const invalid = {
    name: "InvalidCommError",
    code: "COMM_INVALID",
    message: expect.stringContaining("replaced by world generation 1"),
    rank: undefined,
  };
  for (const r of [0, 1]) {
    const s = by[`rank${r}`]!;
    expect(s.role).toBe("stay");
    expect(s.rank).toBe(r);
    expect(s.size).toBe(3);
    expect(s.again).toBe(`again from ${1 - r}`);
    expect(s.connectionsToMate).toBeGreaterThanOrEqual(1);
    expect(s.newConnections).toBe(0);
    const inv = s.invalid as Record<string, unknown>;
    for (const k of ["pending", "barrier", "send", "sub", "dup", "inter"]) expect({ k, e: inv[k] }).toEqual({ k, e: invalid });
    expect(inv.valid).toEqual([false, false, false, false, true]);
    expect(s.sum).toBe(6);
    expect(s.ranksSeen).toEqual([0, 1, 2]);
  }
  for (const r of [2, 3]) expect(by[`rank${r}`]).toEqual({ role: "leave", rank: r });
  expect(by.joiner).toEqual({
    role: "join",
    redistributed: [0, 1, 2, 3].map((r) => [r, [r, r * 10]]),
    whole: true,
    rank: 2,
    size: 3,
    sum: 6,
    ranksSeen: [0, 1, 2],
  });
}, 60_000);
