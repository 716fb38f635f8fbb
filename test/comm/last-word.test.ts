/**
 * A rank's last message survives its exit even when the receiver learns of it only afterwards:
 * over a shared-memory ring the writer must not remove the ring before its reader has mapped it.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { expectClean, launch } from "../support/comm-launcher.ts";

const PROGRAM = join(import.meta.dir, "programs/last-word.ts");

for (const [shm, nodes] of [["1", 1], ["0", 1], ["0", 2]] as const) {
  test(`the last message of a rank that exits at once arrives (EBB_COMM_SHM=${shm}, ${nodes} node(s))`, async () => {
    const results = await launch({ program: PROGRAM, n: 2, nodes, deadlineMs: 30_000, env: { EBB_COMM_SHM: shm } });
    expectClean(results);
    const byRank = results.map((r) => r.reports[0]);
    expect(byRank).toContainEqual({ got: 1000, sum: 7000 });
    expect(byRank).toContainEqual({ sent: true });
  }, 60_000);
}
