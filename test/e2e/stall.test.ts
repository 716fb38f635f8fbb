/**
 * No request can stall the controller, and a stall never fails jobs (issue 28): the largest array
 * a controller takes is stored once and leaves a running job and its nodes alone; an array over
 * the cap is refused naming it; `--test-only` behind a long queue answers with the limit of its
 * replay; a controller whose process was stopped for longer than three heartbeats judges its
 * agents by when it could read them again, so its nodes stay up and its jobs run on.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import type { Subprocess } from "bun";
import { join } from "node:path";
import { freePort, ROOT, runProcess, startCluster, type TestCluster, waitFor } from "../support/cluster.ts";

/** 7 values of 130,000 bytes: about the most environment a job may have (1 MiB). */
const bigEnv = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`BIG_${i}`, "x".repeat(130_000)]));

const nodesState = async (c: TestCluster) => ((await c.api("GET", "/v1/nodes")).json.nodes as { name: string; state: string; reason: string | null }[]).map((n) => [n.name, n.state, n.reason]);

describe("a controller that holds at most 10 jobs (--max-job-count 10)", () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startCluster({ agents: 0, controllerArgs: ["--max-job-count", "10"] });
  });
  afterAll(async () => {
    await c?.stop();
  });

  test("no user holds more than half of it, the rest is refused with a 409 saying why; nothing is submitted by a refusal", async () => {
    const [alice, bob, carol] = (await Promise.all(["alice", "bob", "carol"].map(async (user) => (await c.api("POST", "/v1/tokens", { user })).json.token))) as [string, string, string];
    const submit = (token: string, body: Record<string, unknown>) => c.api("POST", "/v1/jobs", { argv: ["true"], hold: true, ...body }, token);
    expect((await submit(alice, { array: "0-3" })).status).toBe(201);
    const over = await submit(alice, { array: "0-1" });
    expect(over.status).toBe(409);
    expect(over.json.error).toEqual({ code: "max_job_count", message: "user alice has 4 job(s) pending or running, these 2 would pass 5: no user holds more than half of the controller's limit of 10 (its --max-job-count), so that others can still submit; wait for some to end" });
    expect((await submit(alice, {})).status).toBe(201);
    // Alice's flood left the others room.
    expect((await submit(bob, { array: "0-4" })).status).toBe(201);
    const full = await submit(carol, {});
    expect(full.status).toBe(409);
    expect(full.json.error.message).toBe("the controller holds 10 job(s) pending or running, this one would pass its limit of 10 (its --max-job-count, Slurm's MaxJobCount); wait for some to end");
    expect((await c.api("GET", "/v1/jobs?state=PENDING")).json.jobs).toHaveLength(10);
    // A job that ends makes room (a task of bob's array: the array's own id would cancel every task).
    const some = (await c.api("GET", "/v1/jobs?user=bob")).json.jobs.at(-1).id;
    expect((await c.api("DELETE", `/v1/jobs/${some}`)).status).toBeLessThan(300);
    await waitFor("the cancelled job to end", async () => (await c.api("GET", "/v1/jobs?state=PENDING")).json.jobs.length === 9);
    expect((await submit(carol, {})).status).toBe(201);
  });
});

describe("a controller with 1,024 file descriptors", () => {
  let dir: string;
  let controller: Subprocess;
  let url: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "ebb-test-fds-"));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    controller = Bun.spawn(["prlimit", "--nofile=1024:1024", process.execPath, join(ROOT, "src/main.ts"), "controller", "--listen", `127.0.0.1:${port}`, "--state-dir", dir], { stdout: "ignore", stderr: "ignore", env: { ...process.env, EBB_LOG: "warn" } });
    await waitFor("the controller to listen", async () => (await fetch(`${url}/v1/health`).catch(() => undefined))?.ok);
  });
  afterAll(async () => {
    controller?.kill();
    await controller?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  test("a user holds at most 64 launcher connections (a sixteenth): the next is told why and closed, others' still connect, `ebb run` says it", async () => {
    const admin = readFileSync(join(dir, "token"), "utf8").trim();
    const token = async (user: string) => (await (await fetch(`${url}/v1/tokens`, { method: "POST", headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" }, body: JSON.stringify({ user }) })).json()).token as string;
    const [alice, bob] = [await token("alice"), await token("bob")];
    /** Resolves on its close, or `settle` ms after it opened (a refused one is closed within them). */
    const connect = (t: string, settle = 200) =>
      new Promise<{ ws: WebSocket; said?: any; closed?: number }>((resolve) => {
        const ws = new WebSocket(`${url.replace("http", "ws")}/v1/launcher`, { headers: { authorization: `Bearer ${t}` } } as any);
        const got: { ws: WebSocket; said?: any; closed?: number } = { ws };
        ws.onmessage = (e) => (got.said = JSON.parse(String(e.data)));
        ws.onclose = (e) => resolve({ ...got, closed: e.code });
        ws.onopen = () => setTimeout(() => resolve(got), settle);
      });
    const held = [];
    for (let i = 0; i < 64; i++) held.push(await connect(alice, 0));
    expect(held.every((h) => h.closed === undefined)).toBe(true);
    const over = await connect(alice);
    expect(over.closed).toBe(4429);
    expect(over.said).toEqual({ t: "error", code: "too_many_launchers", message: "alice has 64 launcher connections open (ebb run, srun: one each), the most one user may (a sixteenth of the controller's 1024 file descriptors); let some end and try again" });
    expect((await connect(bob)).closed).toBeUndefined();
    const run = await runProcess([process.execPath, join(ROOT, "src/main.ts"), "run", "true"], { env: { ...process.env, EBB_CONTROLLER: url, EBB_TOKEN: alice, EBB_STATE_DIR: dir } });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("alice has 64 launcher connections open");
    // One closed, one more.
    held.pop()!.ws.close();
    await waitFor("a slot to be given back", async () => (await connect(alice)).closed === undefined);
    for (const h of held) h.ws.close();
  });
});

describe("on a 2-node cluster with the default limits", () => {
  let c: TestCluster;
  let alice: string;
  beforeAll(async () => {
    c = await startCluster({ agents: 2 });
    alice = (await c.api("POST", "/v1/tokens", { user: "alice" })).json.token;
  });
  afterAll(async () => {
    await c?.stop();
  });

  test("an array over the cap is refused with a 400 naming it (--max-array-tasks, 1001), and nothing is submitted", async () => {
    const before = (await c.api("GET", "/v1/jobs")).json.jobs.length;
    for (const array of ["1-1002", "1-3999999:400"]) {
      const r = await c.api("POST", "/v1/jobs", { argv: ["true"], array, hold: true }, alice);
      expect(r.status).toBe(400);
      expect(r.json.error).toEqual({
        code: "invalid_request",
        field: "array",
        message: `array: "${array}" makes more than 1001 tasks, the most this controller takes in one array (its --max-array-tasks, 1001); submit it as several arrays`,
      });
    }
    expect((await c.api("GET", "/v1/jobs")).json.jobs.length).toBe(before);
  });

  test("the largest array with the largest environment, beside a running job: stored once; the job completes, the nodes stay up", async () => {
    const running = await c.submit({ argv: ["sleep", "4"], nodes: 2 });
    await c.waitJob(running, ["RUNNING"]);
    const r = await c.api("POST", "/v1/jobs", { argv: ["printenv", "BIG_0"], array: "0-1000", env: bigEnv, cwd: c.dir });
    expect(r.status).toBe(201);
    const array = r.json.id as number;
    // 1001 copies of the environment would be 900 MB; the array keeps one.
    const db = join(c.stateDir, "ebb.db");
    const bytes = statSync(db).size + statSync(`${db}-wal`, { throwIfNoEntry: false })!.size;
    expect(bytes).toBeLessThan(32 << 20);
    expect((await c.waitJob(running, ["COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED"])).state).toBe("COMPLETED");
    expect(await nodesState(c)).not.toContainEqual(expect.arrayContaining(["DOWN"]));
    // Each task runs with the array's environment and its own index.
    const first = await c.waitJob(array, ["COMPLETED", "FAILED"]);
    expect(first.state).toBe("COMPLETED");
    expect(c.read(`ebb-${array}_0.out`)).toBe(`${"x".repeat(130_000)}\n`);
    expect((await c.job(array + 1000)).env).toEqual(bigEnv);
    expect((await c.job(array + 1000)).arrayTaskId).toBe(1000);
    const cancelled = await c.api("DELETE", `/v1/jobs/${array}`);
    expect(cancelled.status).toBe(200);
    const left = (await c.api("GET", `/v1/jobs?array=${array}&limit=2000`)).json.jobs as { id: number; state: string }[];
    expect(left.map((j) => j.id)).toEqual(Array.from({ length: 1001 }, (_, i) => array + i));
    expect(left.filter((j) => !["COMPLETED", "CANCELLED"].includes(j.state))).toEqual([]);
  }, 120_000);

  test("--test-only behind 2,000 pending jobs answers with where its replay stopped, and submits nothing", async () => {
    const running = await c.submit({ argv: ["sleep", "60"], nodes: 2, exclusive: true });
    await c.waitJob(running, ["RUNNING"]);
    const arrays = [await c.submit({ argv: ["true"], array: "1-1000" }), await c.submit({ argv: ["true"], array: "1-1000" })];
    const before = (await c.api("GET", "/v1/jobs?limit=100000")).json.jobs.length;
    const r = await c.api("POST", "/v1/jobs/test", { argv: ["true"], nodes: 2 });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ start: null, nodes: [], message: "it would not start within the next 200 job ends (2000 jobs are pending, 1 running); ebb predicts no further than that" });
    // A listing longer than a page comes whole and in id order.
    const all = (await c.api("GET", "/v1/jobs?limit=100000")).json.jobs as { id: number }[];
    expect(all.length).toBe(before);
    expect(all.map((j) => j.id)).toEqual([...all.map((j) => j.id)].sort((a, b) => a - b));
    expect((await c.api("GET", "/v1/jobs?limit=3")).json.jobs.map((j: { id: number }) => j.id)).toEqual(all.slice(-3).map((j) => j.id));
    for (const a of arrays) expect((await c.api("DELETE", `/v1/jobs/${a}`)).status).toBe(200);
    expect((await c.api("DELETE", `/v1/jobs/${running}`)).status).toBe(200);
  }, 120_000);
});

describe("a controller that could not run for a while", () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startCluster({ agents: 2, heartbeat: 0.5 });
  });
  afterAll(async () => {
    c?.controller.kill("SIGCONT");
    await c?.stop();
  });

  test("stopped (SIGSTOP) for 4 s, 8 heartbeats: its agents are judged from when it runs again, so the nodes stay up and the job completes", async () => {
    const job = await c.submit({ argv: ["sleep", "6"], nodes: 2 });
    await c.waitJob(job, ["RUNNING"]);
    c.controller.kill("SIGSTOP");
    await Bun.sleep(4000);
    c.controller.kill("SIGCONT");
    // Answers again: the first check after the stop has run by now.
    await waitFor("the controller to answer", async () => (await c.api("GET", "/v1/health")).status === 200);
    expect((await c.job(job)).state).toBe("RUNNING");
    expect((await c.waitJob(job, ["COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED"])).state).toBe("COMPLETED");
    expect(await nodesState(c)).toEqual([
      ["node01", "IDLE", null],
      ["node02", "IDLE", null],
    ]);
    expect(c.daemonLogs()).toMatch(/the controller did not run for \d+\.\d s; heartbeats are counted from when it could read them/);
  }, 60_000);
});
