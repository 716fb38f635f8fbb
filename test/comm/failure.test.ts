/**
 * Peer death: SIGKILL one rank while the others wait on it. Every pending operation that depends
 * on it must reject with an error naming it, and the survivors must exit on their own (the
 * launcher's deadline turns a hang into a failure).
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { expectClean, Job, launch, type ProcResult } from "../support/comm-launcher.ts";

const PROGRAM = join(import.meta.dir, "programs/failure.ts");

function failedNaming(rank: number) {
  return {
    name: "PeerFailedError",
    code: "PEER_FAILED",
    rank,
    message: expect.stringContaining(`rank ${rank} of world(g0) failed`),
  };
}

function reportsOf(results: ProcResult[], name: string): Record<string, unknown> {
  const res = results.find((x) => x.name === name)!;
  return Object.assign({}, ...res.reports);
}

async function runKilling(scenario: string, n: number, waitFor: string[]): Promise<ProcResult[]> {
  const job = new Job({ program: PROGRAM, n, args: [scenario], deadlineMs: 30_000 });
  const victim = `rank${n - 1}`;
  try {
    await job.waitFor(victim, (x) => x.ready === true);
    for (const name of waitFor) await job.waitFor(name, (x) => x.posted === true);
  } catch (e) {
    await job.abort();
    throw e;
  }
  job.kill(victim, "SIGKILL");
  const results = await job.finished();
  for (const res of results) {
    expect({ name: res.name, killedAtDeadline: res.killedAtDeadline }).toEqual({ name: res.name, killedAtDeadline: false });
    if (res.name === victim) expect(res.signal).toBe("SIGKILL");
    else expect({ name: res.name, code: res.code, stderr: res.stderr }).toEqual({ name: res.name, code: 0, stderr: "" });
  }
  return results;
}

test("pending p2p, any-source, a stuck 4 MiB send and a collective reject when the peer is killed", async () => {
  const results = await runKilling("p2p", 3, ["rank0", "rank1"]);
  const r0 = reportsOf(results, "rank0");
  const r1 = reportsOf(results, "rank1");
  expect(r0.recvFromVictim).toEqual(failedNaming(2));
  expect(r0.recvAny).toEqual(failedNaming(2));
  expect(r1.bigSend).toEqual(failedNaming(2));
  expect(r1.allreduce).toEqual(failedNaming(2));
  // Later operations that need the dead rank fail at once; the survivors still talk to each other.
  expect(r0.sendAfter).toEqual(failedNaming(2));
  expect(r0.recvAfter).toEqual(failedNaming(2));
  expect(r0.barrierAfter).toEqual(failedNaming(2));
  expect(r0.survivor).toBe("me too");
  expect(r1.survivor).toBe("still here");
}, 60_000);

test("an allreduce fails on every survivor, including ranks that never talk to the dead one", async () => {
  const results = await runKilling("allreduce", 4, ["rank0", "rank1", "rank2"]);
  for (const name of ["rank0", "rank1", "rank2"]) expect(reportsOf(results, name).allreduce).toEqual(failedNaming(3));
  // Rank 0's partners in recursive doubling are 1 and 2: it heard of the death from them.
  expect((reportsOf(results, "rank0").allreduce as { message: string }).message).toContain("reported by");
}, 60_000);

test("a rank that ends without finalize: a clean exit is reported as an exit, a crash as a failure", async () => {
  for (const [scenario, code, exitCode] of [
    ["exit-clean", "PEER_EXITED", 0],
    ["exit-crash", "PEER_FAILED", 1],
  ] as const) {
    const results = await new Job({ program: PROGRAM, n: 2, args: [scenario], deadlineMs: 30_000 }).finished();
    const [r0, r1] = results as [ProcResult, ProcResult];
    expect({ scenario, r0: r0.code, r1: r1.code, hang: r0.killedAtDeadline || r1.killedAtDeadline }).toEqual({ scenario, r0: 0, r1: exitCode, hang: false });
    expect((reportsOf(results, "rank0").recv as { code: string; rank: number; message: string })).toMatchObject({ code, rank: 1, message: expect.stringContaining("rank 1 of world(g0)") });
  }
}, 60_000);

test("finalize right after a barrier never makes a rank look gone to a slower one (8 ranks on 8 nodes, 10 times)", async () => {
  for (let round = 0; round < 10; round++) {
    const results = await launch({ program: join(import.meta.dir, "programs/finale.ts"), n: 8, nodes: 8, deadlineMs: 30_000 });
    expectClean(results);
    for (const r of results) expect({ name: r.name, reports: r.reports }).toEqual({ name: r.name, reports: [{ done: true }] });
  }
}, 120_000);

test("a rank that gave its part of a gather and a reduce and exited does not fail them at a root that comes late", async () => {
  // Over TCP (two nodes), a Unix socket and a shared-memory ring (one node).
  for (const [nodes, shm] of [[2, "1"], [1, "0"], [1, "1"]] as const) {
    const results = await launch({ program: join(import.meta.dir, "programs/late-root.ts"), n: 2, nodes, deadlineMs: 30_000, env: { EBB_COMM_SHM: shm } });
    expectClean(results);
    expect(reportsOf(results, "rank0")).toEqual({ seen: true, parts: ["from 0", "from 1"], sum: 7, later: "PEER_EXITED" });
    expect(reportsOf(results, "rank1")).toEqual({ gave: true });
  }
}, 60_000);
