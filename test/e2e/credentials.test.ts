/** Step credentials: bound to job, step, nodes, argv, environment and cwd; single use per node; revoked when the job ends. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { envDigest } from "../../src/proto/credential.ts";
import { startCluster, type TestCluster, waitFor } from "../support/cluster.ts";

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 2 });
});
afterAll(async () => {
  await c?.stop();
});

/** Send one launch to an agent's step port; the first message back (an error, or launched). */
async function launchOn(addr: string, cred: unknown, spec: unknown, keep?: (ws: WebSocket) => void): Promise<any> {
  const ws = new WebSocket(`ws://${addr}/v1/step`);
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)));
  const reply = new Promise<any>((resolve) => {
    ws.onmessage = (e) => resolve(JSON.parse(String(e.data)));
    ws.onclose = (e) => resolve({ t: "closed", reason: e.reason });
  });
  const s = spec as { jobId: number; stepId: number };
  ws.send(JSON.stringify({ t: "launch", step: `${s.jobId}.${s.stepId}`, cred, spec }));
  const r = await reply;
  if (keep) keep(ws);
  else ws.close();
  return r;
}

test("a real credential: used once it runs; replayed, or after the job's end, with changed argv, on another node: refused", async () => {
  const nodes = (await c.api("GET", "/v1/nodes")).json.nodes as { name: string; addr: string }[];
  const id = await c.submit({ interactive: true, nodes: 1 });
  const job = await c.waitJob(id, ["RUNNING"]);
  const mine = nodes.find((n) => n.name === job.allocation[0])!;
  const other = nodes.find((n) => n.name !== mine.name)!;
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
  const argv = ["sh", "-c", "echo ran > cred-ran"];
  const g = (await c.api("POST", `/v1/jobs/${id}/steps`, { argv, cwd: c.dir, envDigest: envDigest(env) })).json;
  expect(g.cred.argv).toMatch(/^[0-9a-f]{64}$/);
  expect(g.cred.expires - Date.now()).toBeLessThanOrEqual(30_000);
  const spec = (node: { name: string; addr: string }, over: Record<string, unknown> = {}) => ({
    jobId: id,
    stepId: g.stepId,
    argv,
    env,
    cwd: c.dir,
    nodes: [node],
    tasks: [1],
    jobNodes: [node.name],
    fanout: 8,
    pmi: "none",
    jobEnv: g.jobEnv,
    ...over,
  });
  // Changed argv, environment or cwd on the right node, while the job runs: refused.
  expect((await launchOn(mine.addr, g.cred, spec(mine, { argv: ["sh", "-c", "touch pwned"] }))).message).toContain("argv is not the one");
  expect((await launchOn(mine.addr, g.cred, spec(mine, { env: { ...env, LD_PRELOAD: "/tmp/x.so" } }))).message).toContain("environment is not the one");
  expect((await launchOn(mine.addr, g.cred, spec(mine, { cwd: "/" }))).message).toContain("working directory is not the one");
  // The real launch runs.
  let parent: WebSocket | undefined;
  const ok = await launchOn(mine.addr, g.cred, spec(mine), (ws) => (parent = ws));
  expect(ok.t).toBe("launched");
  await waitFor("the step to run", () => c.read("cred-ran").trim() === "ran");
  parent!.close();
  // The same credential again on the same node: refused.
  expect((await launchOn(mine.addr, g.cred, spec(mine))).message).toContain("used here already");
  // The job ends; the credential, replayed with changed argv on another node, is refused, and so is
  // an untouched replay there (its nodes are not that node) and a fresh credential's launch on a node the job no longer has.
  const g2 = (await c.api("POST", `/v1/jobs/${id}/steps`, { argv, cwd: c.dir, envDigest: envDigest(env) })).json;
  await c.api("DELETE", `/v1/jobs/${id}`);
  await c.waitJob(id, ["CANCELLED"]);
  const replay = await launchOn(other.addr, { ...g2.cred, nodes: [other.name] }, spec(other, { stepId: g2.stepId, argv: ["sh", "-c", "touch pwned"] }));
  expect(replay.t === "closed" || replay.t === "error").toBe(true);
  expect(replay.reason ?? replay.message).toContain("bad step credential signature");
  expect((await launchOn(other.addr, g2.cred, spec(other, { stepId: g2.stepId }))).message).toContain("does not match the step");
  const afterEnd = await launchOn(mine.addr, g2.cred, spec(mine, { stepId: g2.stepId }));
  expect(afterEnd.message).toContain(`is not allocated to job ${id}`);
  expect(c.read("pwned")).toBe("");
});
