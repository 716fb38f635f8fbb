/**
 * Step credentials: bound to job, step, nodes, argv, environment and cwd; single use per node;
 * revoked when the job ends; their expiry checked where a launch enters the agents from a socket.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { envDigest, signCredential } from "../../src/proto/credential.ts";
import { startAgent } from "../../src/roles/agent/index.ts";
import { PeerPool } from "../../src/tbon/pool.ts";
import { PROTOCOL_VERSION } from "../../src/proto/version.ts";
import { VERSION } from "../../src/util/version.ts";
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
  // Changed argv, environment, job environment, cwd or output file on the right node, while the job runs: refused, naming the credential's field.
  const refusal = async (over: Record<string, unknown>) => (await launchOn(mine.addr, g.cred, spec(mine, over))).message;
  expect(await refusal({ argv: ["sh", "-c", "touch pwned"] })).toContain("argv is not the one its credential was issued for (credential field argv)");
  expect(await refusal({ env: { ...env, LD_PRELOAD: "/tmp/x.so" } })).toContain("environment is not the one its credential was issued for (credential field env)");
  expect(await refusal({ jobEnv: { ...g.jobEnv, LD_PRELOAD: "/tmp/x.so" } })).toContain("job environment is not the one its credential was issued for (credential field jobEnv)");
  expect(await refusal({ cwd: "/" })).toContain("working directory is not the one its credential was issued for (credential field cwd)");
  expect(await refusal({ outputFile: { node: mine.name, path: `${c.dir}/pwned` } })).toContain("output file is not the one its credential was issued for (credential field output)");
  // A credential that does not cover the environment or the working directory is no credential.
  expect(g.cred).toMatchObject({ env: envDigest(env), jobEnv: envDigest(g.jobEnv), cwd: c.dir });
  for (const field of ["env", "jobEnv", "cwd"]) {
    const r = await launchOn(mine.addr, { ...g.cred, [field]: undefined }, spec(mine));
    expect(r.reason ?? r.message).toContain(`invalid message: cred.${field}`);
  }
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

/** Ask the controller for an adoption credential over the launcher link (as ebb run does); its answer. */
async function adoptGrant(jobId: number, stepId: number, nodes: string[], token = c.token): Promise<any> {
  const ws = new WebSocket(`${c.url.replace(/^http/, "ws")}/v1/launcher`, { headers: { Authorization: `Bearer ${token}` } } as unknown as string[]);
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)));
  const reply = new Promise<any>((resolve) => {
    ws.onmessage = (e) => {
      const m = JSON.parse(String(e.data));
      if (m.t === "adopt.grant" || m.t === "error") resolve(m);
    };
  });
  ws.send(JSON.stringify({ t: "hello", version: VERSION, protocol: PROTOCOL_VERSION }));
  ws.send(JSON.stringify({ t: "adopt", jobId, stepId, req: 7, nodes }));
  const r = await reply;
  ws.close();
  return r;
}

/** Send `adopt` for a step to an agent's step port; the first message back. */
async function adoptOn(addr: string, step: string, cred: unknown, keep?: (ws: WebSocket) => void): Promise<any> {
  const ws = new WebSocket(`ws://${addr}/v1/step`);
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)));
  const reply = new Promise<any>((resolve) => {
    ws.onmessage = (e) => resolve(JSON.parse(String(e.data)));
    ws.onclose = (e) => resolve({ t: "closed", reason: e.reason });
  });
  ws.send(JSON.stringify({ t: "adopt", step, cred }));
  const r = await reply;
  if (keep) keep(ws);
  else ws.close();
  return r;
}

test("re-attaching a running step (adopt) takes a controller-signed adoption credential for that step and node, once, while the job holds the node", async () => {
  const nodes = (await c.api("GET", "/v1/nodes")).json.nodes as { name: string; addr: string }[];
  const id = await c.submit({ interactive: true, nodes: 1, elastic: true, minNodes: 1, maxNodes: 2 });
  const job = await c.waitJob(id, ["RUNNING"]);
  const mine = nodes.find((n) => n.name === job.allocation[0])!;
  const other = nodes.find((n) => n.name !== mine.name)!;
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
  const argv = ["sleep", "60"];
  const g = (await c.api("POST", `/v1/jobs/${id}/steps`, { argv, cwd: c.dir, envDigest: envDigest(env) })).json;
  const step = `${id}.${g.stepId}`;
  const spec = { jobId: id, stepId: g.stepId, argv, env, cwd: c.dir, nodes: [mine], tasks: [1], jobNodes: [mine.name], fanout: 8, pmi: "none", jobEnv: g.jobEnv };
  let parent: WebSocket | undefined;
  expect((await launchOn(mine.addr, g.cred, spec, (ws) => (parent = ws))).t).toBe("launched");

  // The controller grants adoption only for nodes the job holds, and only to those who may act on the job.
  expect((await adoptGrant(id, g.stepId, [other.name])).message).toContain(`node ${other.name} is not allocated to job ${id}`);
  const otherJob = await c.submit({ interactive: true, nodes: 1 });
  await c.waitJob(otherJob, ["RUNNING"]);
  const otherToken = (await c.api("POST", `/v1/jobs/${otherJob}/steps`, { argv: ["true"], cwd: c.dir, envDigest: envDigest({}) })).json.jobEnv.EBB_TOKEN;
  const foreign = await adoptGrant(id, g.stepId, [mine.name], otherToken);
  expect([foreign.t, foreign.code]).toEqual(["error", "forbidden"]);
  const granted = await adoptGrant(id, g.stepId, [mine.name]);
  expect(granted.t).toBe("adopt.grant");
  const cred = granted.cred;
  expect(cred.use).toBe("adopt");
  expect(cred.expires - Date.now()).toBeLessThanOrEqual(30_000);

  // A launch credential does not adopt, an adoption credential does not launch: neither has the other's fields.
  const asAdoption = await adoptOn(mine.addr, step, g.cred);
  expect(asAdoption.reason ?? asAdoption.message).toContain("invalid message: cred.use");
  const asLaunch = await launchOn(mine.addr, cred, spec);
  expect(asLaunch.reason ?? asLaunch.message).toContain("invalid message: cred.env");
  // Nor does either with the other's fields added: the signature fails, the connection is closed.
  const launchAsAdoption = await adoptOn(mine.addr, step, { ...g.cred, use: "adopt" });
  expect(launchAsAdoption.reason ?? launchAsAdoption.message).toContain("bad step credential signature");
  const adoptionAsLaunch = await launchOn(mine.addr, { ...cred, env: g.cred.env, jobEnv: g.cred.jobEnv, cwd: g.cred.cwd }, spec);
  expect(adoptionAsLaunch.reason ?? adoptionAsLaunch.message).toContain("bad step credential signature");
  // Altered (another node, another step): the signature fails, the connection is closed.
  for (const forged of [{ ...cred, nodes: [other.name] }, { ...cred, stepId: g.stepId + 1 }]) {
    const r = await adoptOn(mine.addr, step, forged);
    expect(r.reason ?? r.message).toContain("bad step credential signature");
  }
  // On a node it does not name, or for another step: refused.
  expect((await adoptOn(other.addr, step, cred)).message).toContain(`node ${other.name} is not in the credential`);
  expect((await adoptOn(mine.addr, `${id}.${g.stepId + 1}`, cred)).message).toContain("does not match the step");
  // The real one: this connection is the step's upstream now (closing it would end the step); used once.
  let adopter: WebSocket | undefined;
  expect(await adoptOn(mine.addr, step, cred, (ws) => (adopter = ws))).toEqual({ t: "adopted", step, node: mine.name });
  expect((await adoptOn(mine.addr, step, cred)).message).toContain(`used on ${mine.name} already`);
  // After the job's end: no credential is granted, and an unused one is refused.
  const spare = (await adoptGrant(id, g.stepId, [mine.name])).cred;
  await c.api("DELETE", `/v1/jobs/${id}`);
  await c.api("DELETE", `/v1/jobs/${otherJob}`);
  await c.waitJob(id, ["CANCELLED"]);
  expect((await adoptGrant(id, g.stepId, [mine.name])).t).toBe("error");
  const late = (await adoptOn(mine.addr, step, spare)).message;
  expect(late === `${mine.name}: step ${step} is not running on ${mine.name}` || late === `${mine.name}: node ${mine.name} is not allocated to job ${id}`).toBe(true);
  parent?.close();
  adopter?.close();
});

test("an expired credential: refused from a socket; a launch an agent of this process passes down in-process is not refused for its age", async () => {
  // An agent in this test's process, with the peer pool `ebb up`'s agents share: launches reach it in-process through the pool.
  const pool = new PeerPool();
  const clusterKey = readFileSync(join(c.stateDir, "cluster.key"), "utf8").trim();
  const agent = await startAgent({ controller: c.url, clusterKey, name: "inproc01", cpus: 1, memoryMb: 64, listen: { host: "127.0.0.1", port: 0 }, stateDir: join(c.dir, "agents", "inproc01"), peers: pool });
  try {
    await c.waitNodes(1, "IDLE");
    await waitFor("inproc01 to register", async () => ((await c.api("GET", "/v1/nodes")).json.nodes as { name: string; state: string }[]).some((n) => n.name === "inproc01" && n.state === "IDLE"));
    const id = await c.submit({ interactive: true, nodes: 1, nodelist: ["inproc01"] });
    await c.waitJob(id, ["RUNNING"]);
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
    const argv = ["sh", "-c", "echo ran > expired-ran"];
    const g = (await c.api("POST", `/v1/jobs/${id}/steps`, { argv, cwd: c.dir, envDigest: envDigest(env) })).json;
    // The same credential as the controller signed it, but its lifetime over: signed again with the cluster key (as only a holder of the key could).
    const { sig: _, ...unsigned } = g.cred;
    const expired = signCredential(clusterKey, { ...unsigned, expires: Date.now() - 1000 });
    const spec = { jobId: id, stepId: g.stepId, argv, env, cwd: c.dir, nodes: [{ name: "inproc01", addr: agent.addr }], tasks: [1], jobNodes: ["inproc01"], fanout: 8, pmi: "none", jobEnv: g.jobEnv };
    const fromSocket = await launchOn(agent.addr, expired, spec);
    expect(fromSocket.message).toContain("step credential expired");
    expect(c.read("expired-ran")).toBe("");
    // In-process (from a parent agent that accepted it in time, or a command job's launcher here): launched.
    const conn = pool.get(agent.addr);
    const first = new Promise<{ t: string; message?: string }>((resolve) => conn.subscribe(`${id}.${g.stepId}`, { onUp: (m) => resolve(m), onLost: (reason) => resolve({ t: "lost", message: reason }) }));
    conn.send({ t: "launch", step: `${id}.${g.stepId}`, cred: expired, spec } as never);
    expect(await first).toMatchObject({ t: "launched" });
    await waitFor("the step to run", () => c.read("expired-ran").trim() === "ran");
    await c.api("DELETE", `/v1/jobs/${id}`);
  } finally {
    await agent.stop();
    pool.close();
  }
});
