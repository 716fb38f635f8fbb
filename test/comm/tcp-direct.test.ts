/**
 * Large TCP bodies read straight from the socket into their buffers (src/comm/direct.ts): sizes
 * around its thresholds, many outstanding messages both ways, the path switched off (the same
 * program passes and reads nothing directly) or made to hand the socket back to Bun at once, and
 * a peer that dies in the middle of a body being read that way.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { expectClean, Job, launch } from "../support/comm-launcher.ts";

const PROGRAM = join(import.meta.dir, "programs/tcp-direct.ts");

describe("large TCP bodies read directly", () => {
  for (const [name, env, direct] of [
    ["default", {}, true],
    ["every body, no waiting (EBB_COMM_DIRECT_BYTES=1, EBB_COMM_DIRECT_WAIT_US=0)", { EBB_COMM_DIRECT_BYTES: "1", EBB_COMM_DIRECT_WAIT_US: "0" }, true],
    ["switched off (EBB_COMM_DIRECT=0)", { EBB_COMM_DIRECT: "0" }, false],
  ] as const) {
    test(`sizes around the thresholds, at once both ways: ${name}`, async () => {
      const results = await launch({ program: PROGRAM, n: 2, nodes: 2, args: ["sizes"], deadlineMs: 100_000, env });
      expectClean(results);
      for (const res of results) {
        const rep = res.reports[0] as { sizes: number; messages: number; errors: string[]; direct: number };
        expect(rep.sizes).toBeGreaterThan(25);
        expect(rep.errors).toEqual([]);
        if (direct) expect(rep.direct).toBeGreaterThan(8 << 20);
        else expect(rep.direct).toBe(0);
      }
    }, 120_000);
  }

  test("a peer killed while its body is being read directly fails the receive", async () => {
    const job = new Job({ program: PROGRAM, n: 2, nodes: 2, args: ["death"], deadlineMs: 60_000 });
    try {
      await job.waitFor("rank1", (x) => x.blocked === true);
      await job.waitFor("rank0", (x) => typeof x.midBody === "number");
    } catch (e) {
      await job.abort();
      throw e;
    }
    job.kill("rank1", "SIGKILL");
    const [r0, r1] = await job.finished();
    expect(r1!.signal).toBe("SIGKILL");
    expect({ code: r0!.code, killed: r0!.killedAtDeadline, stderr: r0!.stderr }).toEqual({ code: 0, killed: false, stderr: "" });
    const failed = { name: "PeerFailedError", code: "PEER_FAILED", rank: 1, message: expect.stringContaining("rank 1 of world(g0) failed") };
    expect(Object.assign({}, ...r0!.reports)).toMatchObject({ recv: failed, after: failed });
  }, 90_000);
});
