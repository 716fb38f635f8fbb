/**
 * Time limits that follow the job's size, live: real agents, a real synthetic elastic program
 * that needs about 13 s at 4 nodes under a 20 s limit. The scheduler (ERS: MTCT 0.3 is above its
 * upper threshold) halves it while it runs, so it needs far longer than 30 s in all; it must not
 * be killed at its original limit, and the limit's history says why it moved.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT, startCluster, type TestCluster } from "../support/cluster.ts";

const BUN = process.execPath;
const SYNTHETIC = join(ROOT, "examples/synthetic.ts");

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 4, heartbeat: 3, controllerArgs: ["--policy", "ers", "--ers-interval", "1", "--settle", "1", "--min-samples", "2", "--sample-interval", "1"] });
});
afterAll(async () => {
  await c?.stop();
});

test("a job the scheduler shrinks is not killed at its original limit: the limit follows its size, with the reason", async () => {
  // 50 iterations of 200 ms computing + 60 ms communicating at 4 ranks: about 13 s; at 1 rank, 4x that.
  const id = await c.submit({
    argv: [BUN, SYNTHETIC, "--work", "800", "--phases", "0.3:50"],
    nodes: 4,
    elastic: true,
    minNodes: 1,
    maxNodes: 4,
    sampleInterval: 1,
    timeLimit: 20,
  });
  const j = await c.waitJob(id, ["COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL"], 300_000).catch(async (e) => {
    const j = await c.job(id);
    throw new Error(`${(e as Error).message}: ${j.state} on ${j.allocation.length} nodes\n${j.events.map((x: any) => `${x.time} ${x.kind}: ${x.message}`).join("\n")}`);
  });
  const said = j.events.map((e: any) => `${e.kind}: ${e.message}`).join("\n");
  const shrinks = j.adaptations.filter((a: any) => a.state === "COMMITTED" && a.toNodes < a.fromNodes);
  // It ran past the limit it was submitted with, and the limit moved at each committed shrink.
  const ran = (Date.parse(j.endTime) - Date.parse(j.startTime)) / 1000;
  if (j.state !== "COMPLETED" || shrinks.length === 0 || !(ran > 20)) throw new Error(`${j.state} after ${ran} s with ${shrinks.length} shrink(s):\n${said}`);
  expect(j.limitHistory.length).toBeGreaterThanOrEqual(shrinks.length);
  expect(j.limitHistory[0].from).toBe(20);
  for (let i = 1; i < j.limitHistory.length; i++) expect(j.limitHistory[i].from).toBe(j.limitHistory[i - 1].to);
  expect(j.timeLimit).toBe(j.limitHistory.at(-1).to);
  expect(j.timeLimit).toBeGreaterThanOrEqual(ran);
  // 4 -> 2 without a model: at most twice as slow, so the rest of the limit doubles, plus the adaptation.
  expect(j.limitHistory[0].reason).toMatch(/^resized 4 -> 2 nodes: \d+ s left x 2\.000 \(no measured model: at most 4\/2 slower\) \+ \d+\.\d s adaptation$/);
  expect(j.events.some((e: any) => e.kind === "limit" && /^time limit 0:20 -> /.test(e.message))).toBe(true);
  const shown = await c.ebb(["show", String(id)]);
  expect(shown.stdout).toContain("Time limit history:");
  expect(shown.stdout).toMatch(/0:20 -> \d+:\d\d  resized 4 -> 2 nodes/);
}, 320_000);
