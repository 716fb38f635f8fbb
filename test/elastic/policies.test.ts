/**
 * The seeds' policies in a live controller start jobs their own way, as in the simulator: drms-rs
 * starts a moldable job at its minimum size, where ebb's moldable start would take every idle node
 * up to the size asked for.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startCluster, type TestCluster } from "../support/cluster.ts";

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 3, controllerArgs: ["--policy", "drms-rs", "--ers-interval", "600"] });
});
afterAll(async () => {
  await c?.stop();
});

test("drms-rs starts a moldable job at its minimum even with more nodes idle; a rigid job takes what is left", async () => {
  const busy = await c.submit({ argv: ["sleep", "60"], nodes: 1, exclusive: true });
  await c.waitJob(busy, ["RUNNING"]);
  const moldable = await c.submit({ argv: ["sleep", "60"], nodes: 2, elastic: true, minNodes: 1, maxNodes: 2 });
  const started = await c.waitJob(moldable, ["RUNNING"]);
  expect(started.allocation).toHaveLength(1);
  const rigid = await c.submit({ argv: ["sleep", "60"], nodes: 1, exclusive: true });
  expect((await c.waitJob(rigid, ["RUNNING"])).allocation).toHaveLength(1);
  const held = [busy, moldable, rigid].map(async (id) => (await c.job(id)).allocation[0]);
  expect(new Set(await Promise.all(held)).size).toBe(3);
  for (const id of [busy, moldable, rigid]) await c.api("DELETE", `/v1/jobs/${id}`);
});
