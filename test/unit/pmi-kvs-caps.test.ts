/**
 * The per-step caps on the PMI key-value space (KVS_MAX_KEYS, KVS_MAX_BYTES), with plain data: what
 * counts, what a rank is told past a cap on either wire, what a fence or a merge past it does, and
 * that a step's KVS is gone once it is closed. Also: a parsed value is one string, not one per
 * character (the cause of a 900 B put costing an agent 30 KB).
 */
import { describe, expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import type { PmiRankInfo } from "../../src/pmi/backend.ts";
import { UserBytes } from "../../src/domain/user-bytes.ts";
import { CountedKvs, kvsCapExceeded, userKvsFull } from "../../src/pmi/kvs.ts";
import { KVS_KEY_COST, KVS_MAX_BYTES, KVS_MAX_KEYS, USER_KVS_MAX_BYTES } from "../../src/pmi/limits.ts";
import { NodeStepPmi } from "../../src/pmi/node-step.ts";
import { parseV1 } from "../../src/pmi/v1.ts";
import { parseV2 } from "../../src/pmi/v2.ts";
import { V2_INIT, Wire, frame } from "../support/pmi-wire.ts";

const info = (rank: number, size = 2): PmiRankInfo => ({ rank, size, appnum: 0, kvsname: "kvs_5_0", jobId: "5.0", universeSize: size, spawned: false, debug: false });
const refusals = () => {
  const seen: Array<[number | undefined, string]> = [];
  return { seen, refused: (rank: number | undefined, message: string) => void seen.push([rank, message]) };
};

describe("CountedKvs", () => {
  test("counts keys and UTF-8 bytes of keys and values; an overwrite counts only the difference", () => {
    const kvs = new CountedKvs();
    kvs.set("k", "abc");
    kvs.set("ü", "✓");
    expect({ keys: kvs.keys, bytes: kvs.bytes }).toEqual({ keys: 2, bytes: 1 + 3 + 2 + 3 });
    kvs.set("k", "a");
    expect({ keys: kvs.keys, bytes: kvs.bytes }).toEqual({ keys: 2, bytes: 1 + 1 + 2 + 3 });
    expect(kvs.sizeWith("k", "abcd")).toEqual({ keys: 2, bytes: 10 });
    expect(kvs.sizeWith("new", "1")).toEqual({ keys: 3, bytes: 11 });
    expect(kvs.sizeWithAll({ k: "", n: "12" })).toEqual({ keys: 3, bytes: 7 - 1 + 3 });
    expect(kvs.toRecord()).toEqual({ k: "a", ü: "✓" });
    kvs.clear();
    expect({ keys: kvs.keys, bytes: kvs.bytes, k: kvs.get("k") }).toEqual({ keys: 0, bytes: 0, k: undefined });
  });

  test("a size past either cap is refused with a message naming the cap", () => {
    expect(kvsCapExceeded({ keys: KVS_MAX_KEYS, bytes: KVS_MAX_BYTES })).toBeUndefined();
    expect(kvsCapExceeded({ keys: KVS_MAX_KEYS + 1, bytes: 0 })).toBe(`PMI KVS full: a step holds at most ${KVS_MAX_KEYS} keys (ebb's per-step cap KVS_MAX_KEYS)`);
    expect(kvsCapExceeded({ keys: 1, bytes: KVS_MAX_BYTES + 1 })).toContain(`at most ${KVS_MAX_BYTES} bytes of keys and values (ebb's per-step cap KVS_MAX_BYTES)`);
  });
});

describe("NodeStepPmi caps", () => {
  test("the key cap: the put past it throws naming KVS_MAX_KEYS, overwrites still pass, the hook hears of it", () => {
    const r = refusals();
    const step = new NodeStepPmi([info(0), info(1)], { exchange: async (p) => p, refused: r.refused });
    const [b0, b1] = [step.backend(0), step.backend(1)];
    for (let i = 0; i < KVS_MAX_KEYS; i++) (i % 2 ? b1 : b0).put(`k${i}`, "");
    expect(() => b1.put("one-more", "")).toThrow("KVS_MAX_KEYS");
    expect(() => b0.nodeAttrPut("attr", "")).toThrow("KVS_MAX_KEYS");
    b0.put("k0", "overwritten");
    expect(step.size().keys).toBe(KVS_MAX_KEYS);
    expect(r.seen.map(([rank]) => rank)).toEqual([1, 0]);
  });

  test("the byte cap counts fenced keys, pending puts and node attributes together", async () => {
    const step = new NodeStepPmi([info(0, 1)], { exchange: async (p) => p });
    const b = step.backend(0);
    const value = "v".repeat(1000);
    const per = 8 + value.length; // "k" + 7 digits
    const fit = Math.floor(KVS_MAX_BYTES / per);
    for (let i = 0; i < fit / 2; i++) b.put(`k${String(i).padStart(7, "0")}`, value);
    await b.fence();
    for (let i = fit / 2; i < fit - 1; i++) b.put(`k${String(i).padStart(7, "0")}`, value);
    b.nodeAttrPut(`k${String(fit - 1).padStart(7, "0")}`, value);
    expect(step.size()).toEqual({ keys: fit, bytes: fit * per });
    expect(() => b.put("x", value)).toThrow(`PMI KVS full: a step holds at most ${KVS_MAX_BYTES} bytes of keys and values (ebb's per-step cap KVS_MAX_BYTES)`);
  });

  test("a fence whose merged result passes a cap fails on every local rank, naming it; nothing of it is kept", async () => {
    const r = refusals();
    const remote = Object.fromEntries(Array.from({ length: KVS_MAX_KEYS }, (_, i) => [`remote${i}`, "x"]));
    const step = new NodeStepPmi([info(0), info(1)], { exchange: async (p) => ({ ...p, ...remote }), refused: r.refused });
    const [b0, b1] = [step.backend(0), step.backend(1)];
    b0.put("mine", "1");
    const fences = await Promise.allSettled([b0.fence(), b1.fence()]);
    expect(fences.map((f) => (f.status === "rejected" ? (f.reason as Error).message : "resolved"))).toEqual(Array(2).fill(expect.stringContaining("KVS_MAX_KEYS")));
    expect([b0.get("mine"), b0.get("remote0"), step.size().keys]).toEqual([undefined, undefined, 0]);
    expect(r.seen).toEqual([[undefined, expect.stringContaining("KVS_MAX_KEYS")]]);
  });

  test("a merge (an adaptation's cards) past a cap fails the step's PMI instead", async () => {
    const step = new NodeStepPmi([info(0, 1)], { exchange: async (p) => p });
    step.merge({ big: "v".repeat(KVS_MAX_BYTES) });
    await expect(step.backend(0).fence()).rejects.toThrow("KVS_MAX_BYTES");
  });

  test("preput keys past a cap fail the step's PMI from the start", async () => {
    const step = new NodeStepPmi([info(0, 1)], { exchange: async (p) => p }, { big: "v".repeat(KVS_MAX_BYTES) });
    expect(() => step.backend(0).put("k", "v")).toThrow("the preput keys: PMI KVS full");
  });

  test("close(): the step's keys are gone and later requests fail saying the step has ended", async () => {
    const step = new NodeStepPmi([info(0, 1)], { exchange: async (p) => p }, { pre: "1" });
    const b = step.backend(0);
    b.put("k", "v");
    await b.fence();
    b.nodeAttrPut("a", "1");
    expect([b.get("k"), b.get("pre")]).toEqual(["v", "1"]);
    step.close();
    expect([b.get("k"), b.get("pre"), step.size()]).toEqual([undefined, undefined, { keys: 0, bytes: 0 }]);
    expect(() => b.put("k2", "v")).toThrow("the step has ended");
    await expect(b.fence()).rejects.toThrow("the step has ended");
  });
});

describe("the rank's error reply names the cap", () => {
  const full = () => {
    const step = new NodeStepPmi([info(0, 1)], { exchange: async (p) => p });
    for (let i = 0; i < KVS_MAX_KEYS; i++) step.backend(0).put(`k${i}`, "");
    return step;
  };

  test("PMI-1 cmd=put: rc=-1 and a msg naming KVS_MAX_KEYS; the connection stays usable", async () => {
    const w = new Wire({ backend: full().backend(0) });
    await w.ask("cmd=init pmi_version=1 pmi_subversion=1\n");
    expect(await w.ask("cmd=put kvsname=kvs_5_0 key=over value=1\n")).toBe(`cmd=put_result rc=-1 msg=PMI_KVS_full:_a_step_holds_at_most_${KVS_MAX_KEYS}_keys_(ebb's_per-step_cap_KVS_MAX_KEYS)\n`);
    expect(await w.ask("cmd=get kvsname=kvs_5_0 key=k0\n")).toBe("cmd=get_result rc=-1 msg=key_k0_not_found value=unknown\n");
    expect(w.conn.isOpen).toBe(true);
  });

  test("PMI-2 kvs-put and info-putnodeattr: rc=-1 and an errmsg naming KVS_MAX_KEYS", async () => {
    const w = new Wire({ backend: full().backend(0) });
    await w.ask(V2_INIT);
    await w.ask(frame("cmd=fullinit;pmirank=0;"));
    const msg = `PMI KVS full: a step holds at most ${KVS_MAX_KEYS} keys (ebb's per-step cap KVS_MAX_KEYS)`;
    expect(await w.ask(frame("cmd=kvs-put;key=over;value=1;"))).toBe(frame(`cmd=kvs-put-response;rc=-1;errmsg=${msg};`));
    expect(await w.ask(frame("cmd=info-putnodeattr;key=over;value=1;"))).toBe(frame(`cmd=info-putnodeattr-response;rc=-1;errmsg=${msg};`));
    expect(w.conn.isOpen).toBe(true);
  });
});

describe("a parsed value is one string", () => {
  for (const [wire, parse, line] of [
    ["PMI-1", parseV1, (i: number, v: string) => `cmd=put kvsname=kvs_1_0 key=k${i} value=${v}`],
    ["PMI-2", parseV2, (i: number, v: string) => `cmd=kvs-put;key=k${i};value=${v};`],
  ] as const) {
    test(`${wire}: 2,000 values of 900 characters, kept, add a few strings each, not one per character`, () => {
      const value = "0123456789".repeat(90);
      // Lines as they come off the wire: decoded from bytes, so nothing is shared with `value`.
      const lines = Array.from({ length: 2000 }, (_, i) => new TextDecoder().decode(new TextEncoder().encode(line(i, value))));
      Bun.gc(true);
      const before = heapStats().objectTypeCounts.string ?? 0;
      const kept = lines.map((l) => parse(l).get("value"));
      Bun.gc(true);
      const added = (heapStats().objectTypeCounts.string ?? 0) - before;
      expect(kept.every((v) => v === value)).toBe(true);
      expect(added).toBeLessThan(2000 * 4);
    });
  }
});

describe("a user's share across his steps on a node (USER_KVS_MAX_BYTES)", () => {
  test("his steps together hold at most the share, each key counting KVS_KEY_COST more; a put past it names the per-user cap; a fence moves puts without charging twice; a closed step gives its part back", async () => {
    const bytes = new UserBytes(10_000);
    const first = new NodeStepPmi([info(0, 1)], { exchange: async (p) => p }, {}, bytes.of("bob"));
    const second = new NodeStepPmi([info(0, 1)], { exchange: async (p) => p }, {}, bytes.of("bob"));
    const hers = new NodeStepPmi([info(0, 1)], { exchange: async (p) => p }, {}, bytes.of("alice"));
    const value = "v".repeat(1000 - KVS_KEY_COST - 2);
    for (let i = 0; i < 6; i++) first.backend(0).put(`a${i}`, value);
    for (let i = 0; i < 4; i++) second.backend(0).put(`b${i}`, value);
    expect(bytes.heldBy("bob")).toBe(10_000);
    expect(() => second.backend(0).put("b4", value)).toThrow(userKvsFull(10_000));
    expect(userKvsFull()).toContain(`at most ${USER_KVS_MAX_BYTES} bytes`);
    // Her steps have their own share.
    for (let i = 0; i < 10; i++) hers.backend(0).put(`c${i}`, value);
    await first.backend(0).fence();
    expect([first.size().keys, bytes.heldBy("bob")]).toEqual([6, 10_000]);
    first.close();
    expect(bytes.heldBy("bob")).toBe(4000);
    second.backend(0).put("b4", value);
    expect(bytes.heldBy("bob")).toBe(5000);
  });
});
