/**
 * A cluster that stops with its controller (`ebb up`, which stops its agents first): once told
 * (`stopJudgingNodes`), the controller does not judge the agents that go DOWN, however long they
 * take; before that, an agent that goes is DOWN after three heartbeats, as always.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startController, type ControllerHandle } from "../../src/roles/controller/index.ts";
import { ROOT, waitFor } from "../support/cluster.ts";

const HEARTBEAT_MS = 100;
let ctl: ControllerHandle | undefined;
let dir: string | undefined;
afterEach(async () => {
  await ctl?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  ctl = dir = undefined;
});

async function nodeStates(): Promise<Record<string, string>> {
  const res = await fetch(`${ctl!.url}/v1/nodes`, { headers: { Authorization: `Bearer ${ctl!.token}` } });
  const body = (await res.json()) as { nodes: { name: string; state: string }[] };
  return Object.fromEntries(body.nodes.map((n) => [n.name, n.state]));
}

/** A controller here with one real agent process registered; the agent is killed (gone, as a stopping agent is). */
async function agentGone(stopJudging: boolean): Promise<void> {
  dir = mkdtempSync(join(tmpdir(), "ebb-cluster-stop-"));
  process.env.EBB_LOG = "error";
  ctl = await startController({ listen: { host: "127.0.0.1", port: 0 }, stateDir: join(dir, "state"), heartbeatMs: HEARTBEAT_MS });
  const agent = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "agent", "--controller", ctl.url, "--name", "n1", "--cpus", "1", "--key-file", join(dir, "state", "cluster.key"), "--state-dir", join(dir, "agent")], {
    env: { ...process.env, EBB_LOG: "error" },
    stdout: "ignore",
    stderr: "ignore",
  });
  try {
    await waitFor("the agent to register", async () => (await nodeStates()).n1 === "IDLE", 60_000);
    if (stopJudging) ctl.stopJudgingNodes();
  } finally {
    agent.kill("SIGKILL");
    await agent.exited;
  }
}

test("an agent gone is DOWN after three heartbeats", async () => {
  await agentGone(false);
  await waitFor("the node to be DOWN", async () => (await nodeStates()).n1 === "DOWN", 30_000);
}, 90_000);

test("once the cluster stops with the controller, an agent gone is not judged DOWN however long it takes", async () => {
  await agentGone(true);
  // Ten times the three heartbeats after which the node was DOWN above, and the controller's checks ran meanwhile.
  await Bun.sleep(30 * HEARTBEAT_MS);
  // Its link gone and nothing judged: UNKNOWN, not DOWN.
  expect(await nodeStates()).toEqual({ n1: "UNKNOWN" });
}, 90_000);
