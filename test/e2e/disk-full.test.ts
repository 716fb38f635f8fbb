/**
 * A full disk under the controller's state dir degrades it, it does not crash it: the state dir is
 * a small tmpfs filled with dd. Writes answer 503 with the reason, reads go on, running jobs run
 * on and their ends (reported meanwhile) are recorded once space returns, without a restart; a
 * controller started on the full disk comes up read-only and turns writable by itself; and every
 * job answered 201 is in the database at the end.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestCluster, waitFor } from "../support/cluster.ts";

let c: TestCluster;
/** Every job the controller answered 201 for. */
const acknowledged: number[] = [];

const sh = (cmd: string[]) => {
  const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, err: r.stderr.toString() };
};

beforeAll(async () => {
  c = new TestCluster({ agents: 2 });
  mkdirSync(c.stateDir, { recursive: true });
  const m = sh(["mount", "-t", "tmpfs", "-o", "size=32m,mode=0700", "tmpfs", c.stateDir]);
  if (m.code !== 0) throw new Error(`mount tmpfs: ${m.err}`);
  await c.start();
});

afterAll(async () => {
  // Detached at once (the daemons may still hold files there); freed when they have exited.
  sh(["umount", "-l", c.stateDir]);
  await c.stop();
});

const filler = () => join(c.stateDir, "filler");

/** Fills the state dir's file system to its last byte (what is left after the big blocks, in small ones). */
async function fill(): Promise<void> {
  await Bun.spawn(["dd", "if=/dev/zero", `of=${filler()}`, "bs=256k", "count=1000"], { stderr: "ignore" }).exited;
  await Bun.spawn(["dd", "if=/dev/zero", `of=${filler()}-tail`, "bs=4k", "count=100000"], { stderr: "ignore" }).exited;
}

function free(): void {
  rmSync(filler(), { force: true });
  rmSync(`${filler()}-tail`, { force: true });
}

/** A command job that runs until the test creates its marker file (outside the state dir). */
async function waitingJob(marker: string): Promise<number> {
  const id = await c.submit({ argv: ["sh", "-c", `while [ ! -e ${marker} ]; do sleep 0.1; done; echo done`], timeLimit: 600 });
  acknowledged.push(id);
  return id;
}

const health = async () => (await c.api("GET", "/v1/health", undefined, null)).json;

/** Submits (held) jobs with a large script until the controller refuses one; the refusal. */
async function submitUntilRefused(): Promise<{ status: number; json: any }> {
  const script = `#!/bin/sh\n# ${"x".repeat(20_000)}\ntrue\n`;
  for (let i = 0; i < 2000; i++) {
    const r = await c.api("POST", "/v1/jobs", { script, cwd: c.dir, hold: true });
    if (r.status === 201) acknowledged.push(r.json.id);
    else return r;
  }
  throw new Error("2000 submissions of 20 kB while the disk filled were all accepted");
}

test("on a full disk writes answer 503 with the reason, reads work, running jobs run on and their ends are recorded when space returns", async () => {
  const markers = [join(c.dir, "go-1"), join(c.dir, "go-2")];
  const running = [await waitingJob(markers[0]!), await waitingJob(markers[1]!)];
  for (const id of running) await c.waitJob(id, ["RUNNING"]);
  const held = await c.submit({ argv: ["true"], hold: true });
  acknowledged.push(held);
  // Requeue and complete act on a running batch job only (409 for another): one, for their 503,
  // that runs on past the test (its end would count among the writes kept for later below).
  const batch = await c.submit({ script: `#!/bin/sh\nsleep 600\n`, cwd: c.dir, timeLimit: 600 });
  acknowledged.push(batch);
  await c.waitJob(batch, ["RUNNING"]);

  // Submissions go on while the disk fills up: each answered 201 must be in the database at the end.
  const [refused] = await Promise.all([submitUntilRefused(), fill()]);
  expect(refused.status).toBe(503);
  expect(refused.json.error.code).toBe("unavailable");
  expect(refused.json.error.message).toContain("is full");
  expect(refused.json.error.message).toContain(c.stateDir);

  // Every route the OpenAPI document says may answer 503 does, with the reason; nothing of it is done.
  const doc = (await c.api("GET", "/v1/openapi.json")).json;
  const bodies: Record<string, unknown> = { "POST /v1/jobs": { argv: ["true"], cwd: c.dir }, "POST /v1/jobs/{id}/steps": { argv: ["true"], cwd: c.dir, envDigest: "0".repeat(64) }, "POST /v1/tokens": { user: "disk" }, "POST /v1/nodes/{name}/drain": { reason: "disk" }, "POST /v1/jobs/{id}/signal": { signal: "SIGUSR1" }, "POST /v1/jobs/{id}/complete": { exitCode: 0 }, "PATCH /v1/jobs/{id}": { name: "renamed" } };
  // A resize needs a running elastic job with its elastic step: not this test's (its write is guarded like the others).
  const skip = ["POST /v1/jobs/{id}/resize"];
  let tried = 0;
  for (const [path, item] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(item)) {
      const route = `${method.toUpperCase()} ${path}`;
      if (!op.responses["503"] || skip.includes(route)) continue;
      const id = path.includes("/hold") || path.includes("/release") ? held : path.includes("/requeue") || path.includes("/complete") ? batch : running[0];
      const r = await c.api(method.toUpperCase(), path.replace("{id}", String(id)).replace("{name}", "node01"), bodies[route]);
      expect(`${route} ${r.status} ${r.json?.error?.code}`).toBe(`${route} 503 unavailable`);
      expect(r.json.error.message).toContain("is full");
      tried++;
    }
  expect(tried).toBeGreaterThanOrEqual(8);

  // Reads work.
  expect((await c.api("GET", "/v1/jobs")).status).toBe(200);
  expect((await c.api("GET", "/v1/nodes")).status).toBe(200);
  expect((await c.job(running[0]!)).state).toBe("RUNNING");
  const h = await health();
  expect(h.store.writable).toBe(false);
  expect(h.store.reason).toContain("is full");
  const metrics = await fetch(`${c.url}/metrics`, { headers: { Authorization: `Bearer ${c.token}` } }).then((r) => r.text());
  expect(metrics).toContain("ebb_store_writable 0");

  // The jobs end while the disk is full: their agents' reports wait in the controller's memory.
  const before = h.store.deferred;
  const ended = Date.now();
  for (const m of markers) writeFileSync(m, "");
  // Each one-node job's usage report and its exit (the agent sends them together): two writes a job,
  // all of them kept before `freed` is read: an end that arrived after it would fail the check below.
  await waitFor("both ends to be kept for later", async () => (await health()).store.deferred >= before + 2 * running.length);
  for (const id of running) expect((await c.job(id)).state).toBe("RUNNING");
  // Heartbeats still count: the nodes are not DOWN.
  for (const n of (await c.api("GET", "/v1/nodes")).json.nodes) expect(n.state).not.toBe("DOWN");

  const freed = Date.now();
  free();
  await waitFor("the store to be writable again", async () => (await health()).store.writable);
  for (const id of running) {
    const j = await c.job(id);
    expect(j.state).toBe("COMPLETED");
    expect(j.exitCode).toBe(0);
    // Recorded as of the agent's report, not of the recovery.
    expect(Date.parse(j.endTime)).toBeLessThanOrEqual(freed);
    expect(Date.parse(j.endTime)).toBeGreaterThanOrEqual(ended - 1000);
  }
  expect(await fetch(`${c.url}/metrics`, { headers: { Authorization: `Bearer ${c.token}` } }).then((r) => r.text())).toContain("ebb_store_writable 1");

  // New work is taken again and runs.
  const next = await c.submit({ argv: ["true"] });
  acknowledged.push(next);
  expect((await c.waitJob(next, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");

  // Said once when it began and once when it ended.
  const log = c.daemonLogs();
  expect(log.split("the store is read-only").length - 1).toBe(1);
  expect(log.split("the store is writable again").length - 1).toBe(1);
}, 120_000);

test("a controller started on a full disk comes up read-only, its running job goes on, and it turns writable when space returns", async () => {
  free();
  await waitFor("a writable store", async () => (await health()).store?.writable !== false);
  const marker = join(c.dir, "go-3");
  const running = await waitingJob(marker);
  await c.waitJob(running, ["RUNNING"]);
  c.controller.kill("SIGTERM");
  await c.controller.exited;

  await fill();
  await c.startController();
  const h = await health();
  expect(h.store.writable).toBe(false);
  expect(h.store.reason).toContain("is full");
  // Every job answered 201 is there.
  for (const id of acknowledged) expect((await c.api("GET", `/v1/jobs/${id}`)).status).toBe(200);
  const refused = await c.api("POST", "/v1/jobs", { argv: ["true"], cwd: c.dir });
  expect(refused.status).toBe(503);
  expect(refused.json.error.code).toBe("unavailable");

  // The agents come back (their nodes' rows wait), and the running job's end waits too.
  await c.waitNodes(1, "ALLOCATED");
  await c.waitNodes(1, "IDLE");
  const before = (await health()).store.deferred;
  writeFileSync(marker, "");
  await waitFor("the job's end to be kept for later", async () => (await health()).store.deferred >= before + 1);
  expect((await c.job(running)).state).toBe("RUNNING");

  free();
  await waitFor("the store to be writable again", async () => (await health()).store.writable);
  expect((await c.job(running)).state).toBe("COMPLETED");
  const next = await c.submit({ argv: ["true"] });
  acknowledged.push(next);
  expect((await c.waitJob(next, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");

  // After one more restart (space enough now), nothing answered 201 is missing.
  c.controller.kill("SIGTERM");
  await c.controller.exited;
  await c.startController();
  expect((await health()).store.writable).toBe(true);
  for (const id of acknowledged) expect((await c.api("GET", `/v1/jobs/${id}`)).status).toBe(200);
}, 120_000);
