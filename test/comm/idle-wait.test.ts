/** A receive that waits past the polling budget (rings parked, waiting for a bell) keeps its process alive. */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { expectClean, launch } from "../support/comm-launcher.ts";

const PROGRAM = join(import.meta.dir, "programs/idle-wait.ts");

test("a rank whose only work is a receive that waits 300 ms over shared memory stays up and gets it", async () => {
  const results = await launch({ program: PROGRAM, n: 2, nodes: 1, deadlineMs: 30_000, env: { EBB_COMM_SHM: "1" } });
  expectClean(results);
  const byRank = results.map((r) => r.reports[0]);
  expect(byRank).toContainEqual({ got: "late" });
  expect(byRank).toContainEqual({ sent: true });
}, 60_000);
