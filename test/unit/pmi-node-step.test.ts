import { describe, expect, test } from "bun:test";
import type { PmiRankInfo } from "../../src/pmi/backend.ts";
import { NodeStepPmi } from "../../src/pmi/node-step.ts";
import { V2_INIT, Wire, frame } from "../support/pmi-wire.ts";

const info = (rank: number, size = 6): PmiRankInfo => ({
  rank,
  size,
  appnum: 0,
  kvsname: "kvs_5_0",
  jobId: "5.0",
  universeSize: size,
  spawned: false,
  debug: false,
});

/** A promise's state without waiting for it. */
async function state(p: Promise<unknown>): Promise<"pending" | "resolved" | "rejected"> {
  let s: "pending" | "resolved" | "rejected" = "pending";
  p.then(
    () => (s = "resolved"),
    () => (s = "rejected"),
  );
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return s;
}

describe("NodeStepPmi fence", () => {
  test("one exchange per fence, only after every local rank entered; remote keys become visible", async () => {
    const calls: Array<[Record<string, string>, number]> = [];
    const step = new NodeStepPmi([info(2), info(3), info(4)], {
      exchange: async (puts, epoch) => {
        calls.push([puts, epoch]);
        return { ...puts, "P0-bc": "from-node-0" };
      },
    });
    const [b2, b3, b4] = [step.backend(2), step.backend(3), step.backend(4)];
    b2.put("P2-bc", "x");
    b3.put("P3-bc", "y");
    b3.put("P3-bc", "y2");
    const f2 = b2.fence();
    const f3 = b3.fence();
    expect(await state(f2)).toBe("pending");
    expect(calls).toEqual([]);
    expect(b2.get("P3-bc")).toBeUndefined();
    const f4 = b4.fence();
    await Promise.all([f2, f3, f4]);
    expect(calls).toEqual([[{ "P2-bc": "x", "P3-bc": "y2" }, 1]]);
    expect([b4.get("P2-bc"), b4.get("P3-bc"), b4.get("P0-bc")]).toEqual(["x", "y2", "from-node-0"]);
    expect(step.epoch).toBe(1);

    b4.put("late", "1");
    await Promise.all([b2.fence(), b3.fence(), b4.fence()]);
    expect(calls[1]).toEqual([{ late: "1" }, 2]);
  });

  test("a failed exchange fails every local fence with its message; the next fence can succeed", async () => {
    let fail = true;
    const step = new NodeStepPmi([info(0), info(1)], {
      exchange: async (puts) => {
        if (fail) throw new Error("node 4 lost");
        return puts;
      },
    });
    const fences = [step.backend(0).fence(), step.backend(1).fence()];
    const settled = await Promise.allSettled(fences);
    expect(settled.map((r) => (r.status === "rejected" ? (r.reason as Error).message : r.status))).toEqual(["node 4 lost", "node 4 lost"]);
    fail = false;
    await Promise.all([step.backend(0).fence(), step.backend(1).fence()]);
    expect(step.epoch).toBe(2);
  });

  test("fail(): pending and later fences and node-attribute waits reject", async () => {
    const step = new NodeStepPmi([info(0), info(1)], { exchange: async (p) => p });
    const pending = step.backend(0).fence();
    const waiting = step.backend(1).nodeAttrGet("shm", true);
    step.fail("rank 1 exited with code 9");
    await expect(pending).rejects.toThrow("rank 1 exited with code 9");
    await expect(waiting).rejects.toThrow("rank 1 exited with code 9");
    await expect(step.backend(1).fence()).rejects.toThrow("rank 1 exited with code 9");
  });

  test("entering the same fence twice is an error, not a hang", async () => {
    const step = new NodeStepPmi([info(0), info(1)], { exchange: async (p) => p });
    const first = step.backend(0).fence();
    await expect(step.backend(0).fence()).rejects.toThrow("rank 0 entered the same fence twice");
    expect(await state(first)).toBe("pending");
  });

  test("elastic: a fence waiting only for a rank that leaves completes; a joining rank takes part in the next", async () => {
    const exchanged: number[] = [];
    const step = new NodeStepPmi([info(0), info(1)], {
      exchange: async (p, epoch) => {
        exchanged.push(epoch);
        return p;
      },
    });
    const f0 = step.backend(0).fence();
    step.removeRank(1);
    await f0;
    step.addRank(info(7, 8));
    const g0 = step.backend(0).fence();
    expect(await state(g0)).toBe("pending");
    await Promise.all([g0, step.backend(7).fence()]);
    expect(exchanged).toEqual([1, 2]);
    expect(() => step.backend(1)).toThrow("rank 1 is not on this node");
  });

  test("updateInfo changes what the rank is told", () => {
    const step = new NodeStepPmi([info(0)], { exchange: async (p) => p });
    const b = step.backend(0);
    step.updateInfo(0, { size: 10, universeSize: 12 });
    expect([b.info.size, b.info.universeSize]).toEqual([10, 12]);
  });

  test("preput keys are readable before the first fence; the KVS wins once a key is fenced", async () => {
    const step = new NodeStepPmi([info(0)], { exchange: async () => ({ PARENT_ROOT_PORT_NAME: "new" }) }, { PARENT_ROOT_PORT_NAME: "tag#0$p$" });
    const b = step.backend(0);
    expect(b.get("PARENT_ROOT_PORT_NAME")).toBe("tag#0$p$");
    expect(b.get("toString")).toBeUndefined();
    await b.fence();
    expect(b.get("PARENT_ROOT_PORT_NAME")).toBe("new");
  });

  test("without name-service or spawn hooks those requests fail cleanly", async () => {
    const b = new NodeStepPmi([info(0)], { exchange: async (p) => p }).backend(0);
    await expect(b.publish("s", "p")).rejects.toThrow("the name service is not available in this step");
    await expect(b.spawn({ commands: [], preput: {} })).rejects.toThrow("spawn is not available in this step");
  });
});

describe("node attributes over PMI-2 (info-getnodeattr with wait)", () => {
  test("a waiting reader is answered when another local rank puts the key", async () => {
    const step = new NodeStepPmi([info(0, 2), info(1, 2)], { exchange: async (p) => p });
    const [a, b] = [new Wire({ backend: step.backend(0) }), new Wire({ backend: step.backend(1) })];
    for (const [w, r] of [
      [a, 0],
      [b, 1],
    ] as const) {
      await w.ask(V2_INIT);
      await w.ask(frame(`cmd=fullinit;pmirank=${r};`));
    }
    expect(await a.ask(frame("cmd=info-getnodeattr;key=shm-seg;wait=FALSE;"))).toBe(frame("cmd=info-getnodeattr-response;found=FALSE;rc=0;"));
    expect(await a.ask(frame("cmd=info-getnodeattr;thrid=0x5;key=shm-seg;wait=TRUE;"))).toBe("");
    expect(await b.ask(frame("cmd=info-putnodeattr;key=shm-seg;value=/dev/shm/x;"))).toBe(frame("cmd=info-putnodeattr-response;rc=0;"));
    await a.settle();
    expect(a.take()).toBe(frame("cmd=info-getnodeattr-response;thrid=0x5;found=TRUE;value=/dev/shm/x;rc=0;"));
  });
});
