/**
 * ReSHAPE live: its per-size profile is built from the timing samples the controller stores, so
 * the policy resizes a running job as in the simulator: it expands a job that never expanded into
 * idle nodes, then, with two sizes measured, expands again if the iteration time improved or
 * reverts if it did not. Real agents, the synthetic elastic program.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT, startCluster, waitFor, type TestCluster } from "../support/cluster.ts";

const BUN = process.execPath;
const SYNTHETIC = join(ROOT, "examples/synthetic.ts");

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 4, heartbeat: 3, controllerArgs: ["--policy", "reshape", "--ers-interval", "1", "--settle", "1", "--sample-interval", "1"] });
});
afterAll(async () => {
  await c?.stop();
});

test("reshape expands a job by its measured profile, then decides again on two measured sizes", async () => {
  const id = await c.submit({
    argv: [BUN, SYNTHETIC, "--work", "2000", "--phases", "0.005:1000000"],
    nodes: 2,
    elastic: true,
    minNodes: 1,
    maxNodes: 4,
    sampleInterval: 1,
    timeLimit: 600,
  });
  const j = await waitFor(
    "two committed resizes",
    async () => {
      const j = await c.job(id);
      return j.adaptations.filter((a: any) => a.state !== "ADAPTING").length >= 2 ? j : undefined;
    },
    180_000,
  ).catch(async (e) => {
    const j = await c.job(id);
    throw new Error(`${(e as Error).message}: ${j.state} on ${j.allocation.length}\n${j.events.map((x: any) => `${x.time} ${x.kind}: ${x.message}`).join("\n")}`);
  });
  const [first, second] = j.adaptations;
  expect(first).toMatchObject({ state: "COMMITTED", fromNodes: 2, toNodes: 3 });
  expect(first.reason).toBe("scheduler, expand: never expanded; 1 idle node(s) nobody waits for: expand to 3");
  expect(second.state).toBe("COMMITTED");
  // With 2 and 3 nodes measured: 3 -> 4 if the iteration time dropped, else back to 2.
  if (second.toNodes === 4) expect(second.reason).toMatch(/^scheduler, expand: last expansion improved iteration time to \d+\.\d\d s; 1 idle node\(s\) nobody waits for: expand to 4$/);
  else {
    expect(second).toMatchObject({ fromNodes: 3, toNodes: 2 });
    expect(second.reason).toMatch(/^scheduler, revert: iteration time \d+\.\d\d s at 3 nodes is no better than \d+\.\d\d s at 2: revert$/);
  }
  await c.api("DELETE", `/v1/jobs/${id}`);
  await c.waitJob(id, ["CANCELLED"]);
}, 240_000);
