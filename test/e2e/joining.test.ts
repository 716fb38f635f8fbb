/**
 * Joining a cluster, and what goes wrong, said on both sides: an agent that cannot reach the
 * controller retries and says so; a wrong key, a clock far off, a name in use or an advertised
 * address the controller cannot reach are refused with the reason (the agent prints it and exits
 * 1, the controller logs it with the peer's address); a second controller on a held state dir
 * refuses and names the holder; `ebb drain` / `ebb resume`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { freePort, ROOT, runProcess, startCluster, TestCluster, waitFor } from "../support/cluster.ts";

const MAIN = join(ROOT, "src/main.ts");
let c: TestCluster;

/** An agent process of its own, its stderr kept in a file; resolves with its exit code and stderr. */
function agent(args: string[], opts: { wrap?: string[] } = {}) {
  const log = join(c.dir, `agent-${Math.random().toString(36).slice(2)}.err`);
  const proc = Bun.spawn([...(opts.wrap ?? []), process.execPath, MAIN, "agent", "--cpus", "1", "--state-dir", join(c.dir, "agents", `a${Date.now()}`), ...args], {
    cwd: c.dir,
    env: { ...c.env, EBB_LOG: "info", FAKETIME_DONT_FAKE_MONOTONIC: "1" },
    stdout: "ignore",
    stderr: Bun.file(log),
  });
  return { proc, stderr: () => (existsSync(log) ? readFileSync(log, "utf8") : ""), done: async () => ({ code: await proc.exited, stderr: existsSync(log) ? readFileSync(log, "utf8") : "" }) };
}

const controllerLog = () => c.daemonLogs();

describe("refused registrations", () => {
  beforeAll(async () => {
    c = await startCluster({ agents: 1 });
  });
  afterAll(() => c.stop());

  test("a wrong cluster key: the agent prints why and exits 1; the controller logs it with the peer", async () => {
    writeFileSync(join(c.dir, "wrong.key"), "f".repeat(64));
    const r = await agent(["--controller", c.url, "--name", "intruder", "--key-file", join(c.dir, "wrong.key")]).done();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`ebb agent: the controller at ${c.url} refused this agent: wrong cluster key: copy cluster.key from the controller's state dir to the agent\n`);
    await waitFor("the controller's log line", () => controllerLog().includes("refused an agent from 127.0.0.1: wrong cluster key"));
    expect((await c.api("GET", "/v1/nodes")).json.nodes.map((n: any) => n.name)).toEqual(["node01"]);
  });

  test("a name a live agent has: refused, on both sides", async () => {
    const r = await agent(["--controller", c.url, "--name", "node01", "--key-file", join(c.stateDir, "cluster.key")]).done();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`ebb agent: the controller at ${c.url} refused this agent: node name node01 is already connected from 127.0.0.1; pick another --name\n`);
    await waitFor("the controller's log line", () => controllerLog().includes("refused agent node01 from 127.0.0.1: the name is in use by a live agent from 127.0.0.1"));
    // The first node01 is untouched.
    expect((await c.api("GET", "/v1/nodes")).json.nodes.map((n: any) => [n.name, n.state])).toEqual([["node01", "IDLE"]]);
  });

  test("an advertised address the controller cannot reach: refused, on both sides", async () => {
    const port = await freePort();
    const r = await agent(["--controller", c.url, "--name", "hidden", "--key-file", join(c.stateDir, "cluster.key"), "--advertise", `127.0.0.1:${port}`]).done();
    expect(r.code).toBe(1);
    const why = `the controller cannot reach its address 127.0.0.1:${port} (ECONNREFUSED); fix --advertise/--listen or the firewall`;
    expect(r.stderr).toContain(`ebb agent: the controller at ${c.url} refused this agent: ${why}\n`);
    await waitFor("the controller's log line", () => controllerLog().includes(`refused agent hidden from 127.0.0.1: ${why}`));
    expect((await c.api("GET", "/v1/nodes")).json.nodes.map((n: any) => n.name)).toEqual(["node01"]);
  });

  test("a fixed --listen port (for firewalls), advertised as itself: accepted, and jobs run through that port", async () => {
    for (const advertise of [true, false]) {
      const port = await freePort();
      const name = advertise ? "fixed" : "fixed2";
      const a = agent(["--controller", c.url, "--name", name, "--key-file", join(c.stateDir, "cluster.key"), "--listen", `127.0.0.1:${port}`, ...(advertise ? ["--advertise", `127.0.0.1:${port}`] : [])]);
      try {
        const node = await waitFor(`${name} to register`, async () => (await c.api("GET", "/v1/nodes")).json.nodes.find((n: any) => n.name === name && n.state === "IDLE"));
        expect(node.addr).toBe(`127.0.0.1:${port}`);
        await waitFor("the agent to say it registered", () => a.stderr().includes(`registered with the controller at ${c.url} as ${name}`));
        // ebb run reaches the agent's step server at that port.
        const r = await c.ebb(["run", "-w", name, "--", "sh", "-c", "echo on $EBB_NODENAME"]);
        expect({ code: r.code, out: r.stdout, err: r.stderr }).toEqual({ code: 0, out: `on ${name}\n`, err: "" });
      } finally {
        a.proc.kill("SIGTERM");
        await a.proc.exited;
      }
    }
  });

  test("a clock an hour ahead: refused, on both sides", async () => {
    const r = await agent(["--controller", c.url, "--name", "future", "--key-file", join(c.stateDir, "cluster.key")], { wrap: ["faketime", "-f", "+1h"] }).done();
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`ebb agent: the controller at ${c.url} refused this agent: its clock is 3[56]\\d\\d s ahead of the controller's \\(limit 60 s\\); sync the clocks \\(NTP\\)\\n`));
    await waitFor("the controller's log line", () => /refused agent future from 127\.0\.0\.1: its clock is \d+ s ahead/.test(controllerLog()));
  });
});

describe("an unreachable controller", () => {
  afterEach(() => c.stop());

  test("the agent retries with backoff, saying where and why each time, and joins once the controller is up", async () => {
    c = new TestCluster({ agents: 0 });
    c.port = await freePort();
    c.url = `http://127.0.0.1:${c.port}`;
    mkdirSync(c.stateDir, { recursive: true });
    writeFileSync(join(c.stateDir, "cluster.key"), `${"a".repeat(64)}\n`, { mode: 0o600 });
    const a = agent(["--controller", c.url, "--name", "patient", "--key-file", join(c.stateDir, "cluster.key")]);
    try {
      const line = new RegExp(`agent warn: cannot reach the controller at ${c.url}: Failed to connect: ECONNREFUSED; retrying in (\\d+\\.\\d) s`, "g");
      const delays = await waitFor("three retries", () => {
        const d = [...a.stderr().matchAll(line)].map((m) => Number(m[1]));
        return d.length >= 3 ? d : undefined;
      });
      // Backoff: each wait at least as long as the one before.
      expect(delays.slice(1).every((d, i) => d >= delays[i]!)).toBe(true);
      expect(delays[2]!).toBeGreaterThan(delays[0]!);
      await c.startController();
      await c.waitNodes(1, "IDLE");
      await waitFor("the agent to say it registered", () => a.stderr().includes(`registered with the controller at ${c.url} as patient`));
    } finally {
      a.proc.kill("SIGTERM");
      await a.proc.exited;
    }
  });
});

describe("one controller per state dir", () => {
  afterEach(() => c.stop());

  test("a second controller (or ebb up) on a held state dir refuses and names the holder; the first keeps working", async () => {
    c = await startCluster({ agents: 1 });
    const url = readFileSync(join(c.stateDir, "controller.url"), "utf8");
    for (const cmd of ["controller", "up"]) {
      const r = await runProcess([process.execPath, MAIN, cmd, "--listen", "127.0.0.1:0", "--state-dir", c.stateDir], { env: { ...process.env, EBB_LOG: "warn" } });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        new RegExp(
          `^ebb ${cmd}: the state dir ${c.stateDir} is in use by another controller \\(pid ${c.controller.pid} on ${hostname()}, listening on 127\\.0\\.0\\.1:${c.port}, since \\S+\\); stop it first, or give --state-dir another directory\\n$`,
        ),
      );
    }
    expect(readFileSync(join(c.stateDir, "controller.url"), "utf8")).toBe(url);
    expect((await c.ebb(["nodes"])).code).toBe(0);
  });

  test("the lock of a controller that died is stale: the next one takes over", async () => {
    c = await startCluster({ agents: 1 });
    const lock = join(c.stateDir, "controller.lock");
    expect(JSON.parse(readFileSync(lock, "utf8")).pid).toBe(c.controller.pid);
    c.controller.kill("SIGKILL");
    await c.controller.exited;
    expect(existsSync(lock)).toBe(true);
    await c.startController();
    expect(JSON.parse(readFileSync(lock, "utf8")).pid).toBe(c.controller.pid);
    await c.waitNodes(1, "IDLE");
    // A clean stop leaves no lock.
    c.controller.kill("SIGTERM");
    await c.controller.exited;
    expect(existsSync(lock)).toBe(false);
  });
});

describe("ebb drain / ebb resume", () => {
  afterEach(() => c.stop());

  test("a drained node takes no new work, its job runs on, and it is shown as such until resumed", async () => {
    c = await startCluster({ agents: 2 });
    const long = await c.submit({ argv: ["sleep", "60"], nodes: 1, nodelist: ["node01"] });
    await c.waitJob(long, ["RUNNING"]);
    const drained = await c.ebb(["drain", "node01", "node02", "--reason", "disk swap"]);
    expect({ code: drained.code, stdout: drained.stdout }).toEqual({ code: 0, stdout: "node01 drained\nnode02 drained\n" });
    const nodes = (await c.api("GET", "/v1/nodes")).json.nodes.map((n: any) => [n.name, n.state, n.jobId, n.drain, n.reason]);
    expect(nodes).toEqual([
      ["node01", "DRAINING", long, "disk swap", "disk swap"],
      ["node02", "DRAINED", null, "disk swap", "disk swap"],
    ]);
    const table = (await c.ebb(["nodes"])).stdout;
    expect(table).toMatch(/node01\s+DRAINING\s.*disk swap/);
    expect(table).toMatch(/node02\s+DRAINED\s.*disk swap/);

    // New work waits; the running job is untouched.
    const next = await c.submit({ argv: ["true"], nodes: 1 });
    await waitFor("the scheduler to look at the new job", async () => (await c.job(next)).reason);
    expect((await c.job(next)).state).toBe("PENDING");
    expect((await c.job(long)).state).toBe("RUNNING");
    await c.ebb(["cancel", String(long)]);
    await waitFor("node01 to be DRAINED", async () => (await c.api("GET", "/v1/nodes")).json.nodes[0].state === "DRAINED");
    expect((await c.job(next)).state).toBe("PENDING");

    const resumed = await c.ebb(["resume", "node02"]);
    expect({ code: resumed.code, stdout: resumed.stdout }).toEqual({ code: 0, stdout: "node02 resumed\n" });
    const done = await c.waitJob(next, ["COMPLETED", "FAILED"]);
    expect({ state: done.state, allocation: done.allocation }).toEqual({ state: "COMPLETED", allocation: ["node02"] });
    expect((await c.api("GET", "/v1/nodes")).json.nodes.map((n: any) => [n.name, n.state, n.drain])).toEqual([
      ["node01", "DRAINED", "disk swap"],
      ["node02", "IDLE", null],
    ]);

    // Over the API the body is optional; a chunked one (no Content-Length) is read like any other.
    expect((await c.api("POST", "/v1/nodes/node02/drain")).json).toEqual({ node: "node02", drain: "drained by ebb drain" });
    const chunked = new ReadableStream({
      start(ctl) {
        ctl.enqueue(new TextEncoder().encode('{"reason":'));
        ctl.enqueue(new TextEncoder().encode('"fan"}'));
        ctl.close();
      },
    });
    const res = await fetch(`${c.url}/v1/nodes/node02/drain`, { method: "POST", headers: { Authorization: `Bearer ${c.token}`, "Content-Type": "application/json" }, body: chunked });
    expect({ status: res.status, json: await res.json() }).toEqual({ status: 200, json: { node: "node02", drain: "fan" } });

    const missing = await c.ebb(["drain", "node99"]);
    expect({ code: missing.code, stderr: missing.stderr }).toEqual({ code: 1, stderr: "ebb drain: node99: node node99 does not exist\n" });
  });
});
