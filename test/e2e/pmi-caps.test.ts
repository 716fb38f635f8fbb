/**
 * A step's PMI key-value space is capped, and dropped when the step ends: real ranks on a real
 * agent fill it over PMI-1 (`cmd=put`, to the byte cap) and PMI-2 (`kvs-put`, to the key cap),
 * one step after the other in one job. The job's PMI name service, kept by the controller, is
 * capped too.
 */
import { afterEach, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { KVS_MAX_BYTES, KVS_MAX_KEYS, NAMES_MAX } from "../../src/pmi/limits.ts";
import { startCluster, type TestCluster } from "../support/cluster.ts";

let c: TestCluster | undefined;
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const FILLER = join(import.meta.dir, "../pmi/fixtures/kvs-filler.ts");
const bytesRefusal = `PMI_KVS_full:_a_step_holds_at_most_${KVS_MAX_BYTES}_bytes_of_keys_and_values_(ebb's_per-step_cap_KVS_MAX_BYTES)`;

test("ranks putting past the caps get an error naming the cap; the agent logs it once a step, serves the next steps, and a new step starts empty", async () => {
  c = await startCluster({ agents: 1, cpus: 2 });
  const filler = (wire: string, name: string, other: string, bytes: number) => `ebb run -n 1 ${process.execPath} ${FILLER} ${wire} ${name} ${other} ${bytes} > ${name}.out 2> ${name}.err; echo "${name} $?" >> results`;
  const script = ["#!/bin/sh", filler("v1", "a", "none", 900), filler("v1", "b", "a", 900), filler("v2", "c", "b", 1), "ebb run -n 1 echo still-serving > d.out", ""].join("\n");
  const id = await c.submit({ script, nodes: 1, timeLimit: 300 });
  const done = await c.waitJob(id, ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"], 240_000);
  const out = (name: string) => JSON.parse(c!.read(`${name}.out`) || "null");
  if (done.state !== "COMPLETED") console.log(["results", "a.err", "b.err", "c.err", `ebb-${id}.out`].map((f) => `--- ${f}\n${c!.read(f)}`).join("\n"), c.daemonLogs().slice(-4000));
  expect({ state: done.state, results: c.read("results") }).toEqual({ state: "COMPLETED", results: "a 0\nb 0\nc 0\n" });

  // PMI-1, 900-byte values: refused at the byte cap with rc != 0 and the cap named, the later puts
  // too; the fence still completes and what was accepted is there.
  const [a, b, cc] = [out("a"), out("b"), out("c")];
  expect(a).toEqual({ mark: 0, accepted: expect.any(Number), refused: { rc: -1, msg: bytesRefusal }, later: [-1, -1, -1], fence: 0, fenceMsg: "", own: true, other: false, last: true });
  expect(a.accepted).toBeGreaterThan(KVS_MAX_BYTES / 1000);
  // The next step does not see the first one's keys, and may fill the same space again.
  expect(b).toEqual({ ...a, other: false });
  // PMI-2, 1-byte values: refused at the key cap (the mark is one of its keys).
  expect(cc).toEqual({
    mark: 0,
    accepted: KVS_MAX_KEYS - 1,
    refused: { rc: -1, msg: `PMI KVS full: a step holds at most ${KVS_MAX_KEYS} keys (ebb's per-step cap KVS_MAX_KEYS)` },
    later: [-1, -1, -1],
    fence: 0,
    fenceMsg: "",
    own: true,
    other: false,
    last: true,
  });
  // The agent served a plain step after them, and logged one refusal per step, not one per put.
  expect(c.read("d.out")).toBe("still-serving\n");
  const logged = c.daemonLogs().split("\n").filter((l) => l.includes("refused: PMI KVS full"));
  expect(logged.length).toBe(3);
  expect((await c.api("GET", "/v1/nodes")).json.nodes[0].state).not.toBe("DOWN");
}, 300_000);

test("a rank publishing names past the job's cap gets an error naming it; unpublishing makes room again", async () => {
  c = await startCluster({ agents: 1, cpus: 2 });
  const id = await c.submit({ script: `#!/bin/sh\nebb run -n 1 ${process.execPath} ${FILLER} names svc > names.out 2> names.err\n`, nodes: 1, timeLimit: 120 });
  const done = await c.waitJob(id, ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"], 100_000);
  if (done.state !== "COMPLETED") console.log(c.read("names.err"), c.read(`ebb-${id}.out`), c.daemonLogs().slice(-3000));
  expect(done.state).toBe("COMPLETED");
  expect(JSON.parse(c.read("names.out"))).toEqual({
    accepted: NAMES_MAX,
    refused: { rc: -1, msg: `job_${id}_has_${NAMES_MAX}_services_published,_the_most_a_job_may_(ebb's_cap_NAMES_MAX):_unpublish_one_first` },
    unpublished: "0",
    again: "0",
  });
}, 120_000);

test("two nodes each within the cap but over it together: the fence fails on both, naming the cap, and keeps nothing", async () => {
  c = await startCluster({ agents: 2, cpus: 1 });
  const id = await c.submit({ script: `#!/bin/sh\nebb run -N 2 -n 2 ${process.execPath} ${FILLER} v1 m%r none 900 > two.out 2> two.err; echo "two $?" >> results\n`, nodes: 2, timeLimit: 120 });
  const done = await c.waitJob(id, ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"], 100_000);
  if (done.state !== "COMPLETED") console.log(c.read("two.err"), c.read(`ebb-${id}.out`), c.daemonLogs().slice(-3000));
  expect({ state: done.state, results: c.read("results") }).toEqual({ state: "COMPLETED", results: "two 0\n" });
  const ranks = c.read("two.out").trim().split("\n").map((l) => JSON.parse(l));
  expect(ranks).toHaveLength(2);
  for (const r of ranks) {
    // Each node refused its own rank at the cap; the merged fence would have held twice that.
    expect(r.refused.msg).toContain("KVS_MAX_BYTES");
    expect({ fence: r.fence, fenceMsg: r.fenceMsg, own: r.own, last: r.last }).toEqual({ fence: -1, fenceMsg: bytesRefusal, own: false, last: false });
  }
}, 120_000);

test("a tree node drops its subtree's puts as soon as they pass the cap: node01, above two nodes (--fanout 1) each filling 16 MiB, does not hold their 48 MiB; the fence fails on all three, naming the cap", async () => {
  c = await startCluster({ agents: 3, cpus: 1 });
  const agent = c.agents.get("node01")!.pid;
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${agent}/status`, "utf8"))![1]);
  const before = kib("VmRSS");
  const id = await c.submit({ script: `#!/bin/sh\nKVS_FILLER_BATCH=32 ebb run -N 3 -n 3 --fanout 1 ${process.execPath} ${FILLER} v1 m%r none 900 > three.out 2> three.err; echo "three $?" >> results\n`, nodes: 3, timeLimit: 200 });
  const done = await c.waitJob(id, ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"], 180_000);
  const grewMiB = (kib("VmHWM") - before) / 1024;
  console.log(`node01's agent grew ${grewMiB.toFixed(0)} MiB at its peak`);
  if (done.state !== "COMPLETED") console.log(c.read("three.err"), c.read(`ebb-${id}.out`), c.daemonLogs().slice(-3000));
  expect({ state: done.state, results: c.read("results") }).toEqual({ state: "COMPLETED", results: "three 0\n" });
  const ranks = c.read("three.out").trim().split("\n").map((l) => JSON.parse(l));
  expect(ranks.map((r) => [r.fence, r.fenceMsg])).toEqual([0, 1, 2].map(() => [-1, bytesRefusal]));
  // Before: node01 held and re-encoded its children's 32 MiB too, grew 180 MiB and stalled past its heartbeat (NODE_FAIL); now ~42 MiB.
  expect(grewMiB).toBeLessThan(96);
}, 240_000);

test("a fence of 3.3 MiB across a chain of three nodes (--fanout 1), each node's puts over FENCE_PIECE_MAX, goes up and down in pieces: every rank reads the farthest rank's last key", async () => {
  // Whole, each hop's 16 MiB fence.in or fence.out cost an agent ~300 ms of CPU to encode and ~150 ms
  // to parse in one turn: at load ~40 that was seconds without a heartbeat (NODE_FAIL).
  c = await startCluster({ agents: 3, cpus: 1 });
  const id = await c.submit({ script: `#!/bin/sh\nKVS_FILLER_BATCH=32 KVS_FILLER_KEYS=1280 ebb run -N 3 -n 3 --fanout 1 ${process.execPath} ${FILLER} v1 m%r m2 900 > chain.out 2> chain.err; echo "chain $?" >> results\n`, nodes: 3, timeLimit: 200 });
  const done = await c.waitJob(id, ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"], 180_000);
  if (done.state !== "COMPLETED") console.log(c.read("chain.err"), c.read(`ebb-${id}.out`), c.daemonLogs().slice(-3000));
  expect({ state: done.state, results: c.read("results") }).toEqual({ state: "COMPLETED", results: "chain 0\n" });
  const ranks = c.read("chain.out").trim().split("\n").map((l) => JSON.parse(l));
  expect(ranks.map((r) => ({ accepted: r.accepted, fence: r.fence, own: r.own, other: r.other, last: r.last, otherLast: r.otherLast }))).toEqual(
    [0, 1, 2].map(() => ({ accepted: 1280, fence: 0, own: true, other: true, last: true, otherLast: true })),
  );
}, 240_000);
