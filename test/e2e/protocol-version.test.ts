/**
 * The protocol version in each peer's hello (docs/adaptation.md §10), against a real controller:
 * an agent or a launcher of another protocol version, or of one older than the check (no version
 * at all), is refused with a message that says which side to upgrade, and nothing of it is kept.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { REFUSED } from "../../src/proto/agent.ts";
import { PROTOCOL_REFUSED } from "../../src/proto/launcher.ts";
import { PROTOCOL_VERSION } from "../../src/proto/version.ts";
import { VERSION } from "../../src/util/version.ts";
import { join } from "node:path";
import { outputOf, ROOT, startCluster, TestCluster, waitFor } from "../support/cluster.ts";

type Msg = Record<string, any>;

/** A raw WebSocket: what it received and how it was closed. */
async function connect(url: string, token: string) {
  const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } } as unknown as string[]);
  const got: Msg[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (ws.onclose = (e) => resolve({ code: e.code, reason: e.reason })));
  ws.onmessage = (e) => got.push(JSON.parse(String(e.data)));
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)));
  return { ws, got, closed, send: (m: Msg) => ws.send(JSON.stringify(m)) };
}

let c: TestCluster;
let key: string;
beforeAll(async () => {
  c = await startCluster({ agents: 0 });
  key = c.read(`${c.stateDir}/cluster.key`).trim();
});
afterAll(async () => {
  await c?.stop();
});

const agentHello = (name: string, extra: Msg) => ({ t: "hello", name, cpus: 1, memoryMb: 1024, addr: "127.0.0.1:1", jobs: [], time: Date.now(), ...extra });
const nodeNames = async () => ((await c.api("GET", "/v1/nodes")).json.nodes as { name: string }[]).map((n) => n.name);

describe("an agent's hello", () => {
  test("a later protocol version is refused for good (4403): upgrade the controller", async () => {
    const a = await connect(`${c.url.replace("http", "ws")}/v1/agent`, key);
    a.send(agentHello("future", { version: "99.0.0", protocol: PROTOCOL_VERSION + 1 }));
    const { code, reason } = await a.closed;
    expect(code).toBe(REFUSED.refused);
    expect(reason).toBe(`agent speaks protocol ${PROTOCOL_VERSION + 1} (ebb 99.0.0), the controller ${PROTOCOL_VERSION} (ebb ${VERSION}): upgrade the controller to ebb 99.0.0`);
    expect(a.got).toEqual([]);
    expect(await nodeNames()).not.toContain("future");
  });

  test("an agent older than the check (no protocol field) is refused: upgrade this node's ebb", async () => {
    const a = await connect(`${c.url.replace("http", "ws")}/v1/agent`, key);
    a.send(agentHello("old", { version: "0.0.1" }));
    const { code, reason } = await a.closed;
    expect(code).toBe(REFUSED.refused);
    expect(reason).toBe(`agent speaks protocol 0 (ebb 0.0.1), the controller ${PROTOCOL_VERSION} (ebb ${VERSION}): upgrade this node's ebb to ${VERSION}`);
    expect(await nodeNames()).not.toContain("old");
  });

  test("the same protocol version registers, whatever the release", async () => {
    const a = await connect(`${c.url.replace("http", "ws")}/v1/agent`, key);
    a.send(agentHello("same", { version: "0.0.1-other-build", protocol: PROTOCOL_VERSION }));
    await waitFor("the welcome", () => a.got.find((m) => m.t === "welcome"));
    expect(await nodeNames()).toContain("same");
    a.ws.close();
  });
});

describe("a launcher's hello", () => {
  const url = () => `${c.url.replace("http", "ws")}/v1/launcher`;

  test("a later protocol version gets an error naming it, then the connection closes (4426)", async () => {
    const l = await connect(url(), c.token);
    l.send({ t: "hello", version: "99.0.0", protocol: PROTOCOL_VERSION + 1 });
    l.send({ t: "submit", job: { interactive: true, nodes: 1, name: "future" } });
    const { code } = await l.closed;
    expect(code).toBe(PROTOCOL_REFUSED);
    expect(l.got[0]).toEqual({
      t: "error",
      code: "protocol_version",
      message: `ebb run speaks protocol ${PROTOCOL_VERSION + 1} (ebb 99.0.0), the controller ${PROTOCOL_VERSION} (ebb ${VERSION}): upgrade the controller to ebb 99.0.0`,
    });
    expect((await c.api("GET", "/v1/jobs")).json.jobs).toEqual([]);
  });

  test("a launcher older than the check (its first message is not a hello) is refused: upgrade this ebb", async () => {
    const l = await connect(url(), c.token);
    l.send({ t: "submit", job: { interactive: true, nodes: 1, name: "old" } });
    const { code } = await l.closed;
    expect(code).toBe(PROTOCOL_REFUSED);
    expect(l.got[0]).toMatchObject({ t: "error", code: "protocol_version" });
    expect(l.got[0]!.message).toBe(`ebb run speaks protocol 0, the controller ${PROTOCOL_VERSION} (ebb ${VERSION}): upgrade this ebb to ${VERSION}`);
    expect((await c.api("GET", "/v1/jobs")).json.jobs).toEqual([]);
  });

  /**
   * A controller of a later protocol version, reduced to the one thing the spec makes it say to
   * this ebb run (§10.3): the refusal and the close. (No build of it exists to start for real.)
   */
  async function refusedRun(env: Record<string, string>) {
    const reason = `ebb run speaks protocol ${PROTOCOL_VERSION} (ebb ${VERSION}), the controller ${PROTOCOL_VERSION + 1} (ebb 99.0.0): upgrade this ebb to 99.0.0`;
    const hellos: Msg[] = [];
    const later = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req, server) => (server.upgrade(req) ? undefined : new Response("WebSocket upgrade required", { status: 426 })),
      websocket: {
        message(ws, text) {
          const m = JSON.parse(String(text));
          if (m.t !== "hello") return;
          hellos.push(m);
          ws.send(JSON.stringify({ t: "error", code: "protocol_version", message: reason }));
          ws.close(PROTOCOL_REFUSED, "protocol version");
        },
      },
    });
    const run = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "run", "-N", "1", "true"], {
      cwd: c.dir,
      env: { ...c.env, EBB_CONTROLLER: `http://127.0.0.1:${later.port}`, ...env },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      // Without the refusal's handling a run inside a job would wait for its job's state forever.
      await waitFor("ebb run to exit", () => run.exitCode !== null);
      const r = await outputOf(run);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`^ebb( run)?: ${reason.replace(/[()]/g, "\\$&")}\\n$`));
      // Refused for good: no second attempt.
      expect(hellos).toEqual([{ t: "hello", version: VERSION, protocol: PROTOCOL_VERSION }]);
    } finally {
      run.kill("SIGKILL");
      later.stop(true);
    }
  }

  test("ebb run refused by a controller of a later protocol prints the reason and exits 1", async () => {
    await refusedRun({});
  });

  test("the same inside a job (a step of job 7: attach, not submit)", async () => {
    await refusedRun({ EBB_JOB_ID: "7" });
  });
});
