/**
 * Nodes that are not only ours (issue 34), end to end on 4 agents: `ebb drain --owner` on a node
 * of a running elastic Jacobi moves the job off it (a shrink, then a grow back to the same size
 * onto the free node) and it finishes with the fixed-size answer; the owner's node takes no new
 * job until `ebb resume`; a move that would cost more than it gains (a job near its end) is not
 * made, and the job's events say so with the numbers; a controller restart keeps the owner's node
 * its owner's. The policy is easy, so that every resize
 * seen here is a move.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT, startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { elasticRun } from "../support/elastic-run.ts";
import { holdEnd } from "../support/hold-end.ts";

const BUN = process.execPath;
const JACOBI = join(ROOT, "examples/jacobi.ts");

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 4, controllerArgs: ["--policy", "easy"] });
});
afterAll(async () => {
  await c?.stop();
});
beforeEach(async () => {
  await c.waitNodes(4, "IDLE");
});
const hold = holdEnd(() => c.dir);

/** The fixed-size run's answer, for every test's Jacobi of ITERS iterations. */
const ITERS = ["--iters", "400"];
let want: RegExpExecArray | undefined;
async function fixedAnswer(): Promise<RegExpExecArray> {
  if (!want) {
    const fixed = await c.ebb(["run", "-N", "1", "--", BUN, JACOBI, ...ITERS]);
    expect(fixed.code).toBe(0);
    want = /checksum=(\w+) heat=(\S+)/.exec(fixed.stdout)!;
    await c.waitNodes(4, "IDLE");
  }
  return want;
}

const events = async (id: number, kind: string) => ((await c.job(id)).events as { kind: string; message: string }[]).filter((e) => e.kind === kind);

describe("a node its owner wants back", () => {
  test("an elastic Jacobi moves off it to the free node, same size, and finishes with the fixed-size answer; the node takes no new job until resumed", async () => {
    const iters = ITERS;
    const want = await fixedAnswer();

    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "1", "--max-nodes", "4", "--", BUN, JACOBI, ...iters, "--sleep", "8", "--every", "50", ...hold.args()], /iteration 50 on 3 ranks/);
    const before: string[] = (await c.job(job.id)).allocation;
    expect(before).toHaveLength(3);
    const all: string[] = (await c.api("GET", "/v1/nodes")).json.nodes.map((n: any) => n.name);
    const spare = all.find((n) => !before.includes(n))!;
    const owned = before[1]!;
    const drained = await c.ebb(["drain", "--owner", owned]);
    expect(drained.stdout).toBe(`${owned} drained for its owner\n`);

    const moved = await waitFor("the move to commit", async () => (await events(job.id, "moved"))[0], 60_000);
    expect(moved.message).toMatch(new RegExp(`^moved off ${owned} onto ${spare} at 3 nodes in \\d+ ms \\(request to commit\\)$`));
    const after: string[] = (await c.job(job.id)).allocation;
    expect([...after].sort()).toEqual(all.filter((n) => n !== owned).sort());
    // The two adaptations of the move, in the job's history; the plan's item names its numbers.
    const detail = await c.job(job.id);
    expect(detail.adaptations.map((a: any) => [a.fromNodes, a.toNodes, a.state])).toEqual([
      [3, 1, "COMMITTED"],
      [1, 3, "COMMITTED"],
    ]);
    const item = detail.plans.find((p: any) => p.rule === "move" && p.from === 3);
    expect(item.status).toBe("done");
    expect(item.reason).toContain(`move off ${owned} (owner: ebb drain --owner): to ${spare} (speed 1.00`);
    expect(item.reason).toMatch(/remaining \d+ s × \(1 − speed 0\.00 \/ 1\.00\) = \d+ s gained > cost 2 × default 10\.00 s per adaptation = 20\.00 s/);
    const plans = await c.ebb(["plans", "--job", String(job.id)]);
    expect(plans.stdout).toContain("move");

    // The owner's node takes no new job while the job runs on the others.
    const other = await c.submit({ argv: ["sleep", "1"], nodes: 1 });
    await Bun.sleep(2500); // a few 1 s passes
    expect((await c.job(other)).state).toBe("PENDING");
    expect((await c.api("GET", "/v1/nodes")).json.nodes.find((n: any) => n.name === owned).reason).toContain("ebb drain --owner");

    hold.release();
    const { out, code } = await job.finished;
    expect(code).toBe(0);
    const got = /checksum=(\w+) heat=(\S+)/.exec(out)!;
    expect([got[1], got[2]]).toEqual([want[1], want[2]]);
    expect(out).toContain("now 1 ranks (was 3)");
    expect(out).toContain("now 3 ranks (was 1)");

    // It started when the Jacobi's nodes came free, not on the owner's node; once resumed, that one is scheduled again.
    expect((await c.waitJob(other, ["COMPLETED"], 60_000)).allocation).not.toContain(owned);
    expect((await c.ebb(["resume", owned])).code).toBe(0);
    const there = await c.submit({ argv: ["true"], nodes: 1, nodelist: [owned] });
    expect((await c.waitJob(there, ["COMPLETED"], 60_000)).allocation).toEqual([owned]);
  }, 240_000);

  test("its last node: one swap, that node's ranks leave and the free node's join in one adaptation; the same answer", async () => {
    const want = await fixedAnswer();
    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "1", "--max-nodes", "4", "--", BUN, JACOBI, ...ITERS, "--sleep", "8", "--every", "50", ...hold.args()], /iteration 50 on 3 ranks/);
    const before: string[] = (await c.job(job.id)).allocation;
    const all: string[] = (await c.api("GET", "/v1/nodes")).json.nodes.map((n: any) => n.name);
    const spare = all.find((n) => !before.includes(n))!;
    const owned = before[2]!;
    expect((await c.ebb(["drain", "--owner", owned])).code).toBe(0);
    const moved = await waitFor("the swap to commit", async () => (await events(job.id, "moved"))[0], 60_000);
    expect(moved.message).toMatch(new RegExp(`^moved off ${owned} onto ${spare} at 3 nodes in \\d+ ms \\(request to commit\\)$`));
    const detail = await c.job(job.id);
    expect(detail.allocation).toEqual([before[0], before[1], spare]);
    expect(detail.adaptations.map((a: any) => [a.fromNodes, a.toNodes, a.fromRanks, a.toRanks, a.state])).toEqual([[3, 3, 3, 3, "COMMITTED"]]);
    expect(detail.plans.find((p: any) => p.rule === "move").reason).toContain("cost 1 × default 10.00 s per adaptation = 10.00 s; one swap at 3 nodes");
    hold.release();
    const { out, code } = await job.finished;
    expect(code).toBe(0);
    const got = /checksum=(\w+) heat=(\S+)/.exec(out)!;
    expect([got[1], got[2]]).toEqual([want[1], want[2]]);
    expect(out).toContain("now 3 ranks (was 3)");
    expect((await c.ebb(["resume", owned])).code).toBe(0);
  }, 240_000);

  test("a move that would cost more than it gains is not made: a job near its end stays, and says why with the numbers", async () => {
    // 15 s of limit against two adaptations at the default 10 s each: never worth it.
    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "1", "--max-nodes", "4", "-t", "0:15", "--", BUN, JACOBI, "--iters", "100000", "--sleep", "5", "--every", "50"], /iteration 50 on 3 ranks/);
    const nodes: string[] = (await c.job(job.id)).allocation;
    const owned = nodes[1]!; // not its last node: a shrink and a grow back, two adaptations
    expect((await c.ebb(["drain", "--owner", owned])).code).toBe(0);
    const note = await waitFor("the scheduler's note", async () => (await events(job.id, "scheduler")).find((e) => e.message.includes("cost more than it gains")), 10_000).catch(async (e) => {
      console.log(JSON.stringify((await c.job(job.id)).events, null, 1));
      throw e;
    });
    expect(note.message).toMatch(new RegExp(`^stays on ${owned} \\(owner: ebb drain --owner\\): the move would cost more than it gains: remaining \\d+(\\.\\d+)? s × \\(1 − speed 0\\.00 / 1\\.00\\) = \\S+ s gained ≤ cost 2 × default 10\\.00 s per adaptation = 20\\.00 s$`));
    expect((await c.job(job.id)).adaptations).toEqual([]);
    // The decision is in ebb plans too, once (not a row per pass).
    const declined = (await c.job(job.id)).plans.filter((p: any) => p.status === "declined");
    expect(declined.map((p: any) => [p.rule, p.from, p.to, p.removed])).toEqual([["move", 3, 3, [owned]]]);
    expect(declined[0].reason).toBe(note.message);
    expect((await c.ebb(["plans", "--job", String(job.id)])).stdout).toMatch(/move 3 -> 3 \(-node\d+\)\s+declined\s+stays on/);
    expect((await c.ebb(["cancel", String(job.id)])).code).toBe(0);
    await job.finished;
    expect((await c.ebb(["resume", owned])).code).toBe(0);
  }, 120_000);

  test("kept across a controller restart: the node takes no new job until resumed", async () => {
    const owned = "node04";
    expect((await c.ebb(["drain", "--owner", owned])).code).toBe(0);
    c.controller.kill("SIGKILL");
    await c.controller.exited;
    await c.startController();
    await c.waitNodes(4, "IDLE", 60_000);
    const node = (await c.api("GET", "/v1/nodes")).json.nodes.find((n: any) => n.name === owned);
    expect(node).toMatchObject({ drain: null, reason: "its owner wants it back (ebb drain --owner): no new work, its jobs move off" });
    const there = await c.submit({ argv: ["true"], nodes: 1, nodelist: [owned] });
    // A later job that starts shows a pass has weighed the first one since it was submitted.
    const later = await c.submit({ argv: ["true"], nodes: 1 });
    expect((await c.waitJob(later, ["COMPLETED"], 60_000)).allocation).not.toContain(owned);
    expect((await c.job(there)).state).toBe("PENDING");
    expect((await c.ebb(["resume", owned])).code).toBe(0);
    expect((await c.waitJob(there, ["COMPLETED"], 60_000)).allocation).toEqual([owned]);
  }, 120_000);
});
