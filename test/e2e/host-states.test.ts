/**
 * Host states from rules, on a 4-node loopback cluster of real agents: a CPU hog that is not an
 * ebb job (a plain shell loop, this test's child) makes node01 overloaded; a site's command rule,
 * whose exit status follows a file per node, makes node03 the owner's; `ebb nodes --json`,
 * GET /v1/nodes and /metrics show the state, the rule that set it and its inputs.
 *
 * All agents share this machine, so each node's cpu.other reads its own cgroup (the rule's
 * `cgroup`), made here: the hog runs in node01's and raises the CPU that agent really measures,
 * while the other nodes' stay empty. Needs root and a writable cgroup v2 hierarchy.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { chmodSync, mkdirSync, mkdtempSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TestCluster, waitFor } from "../support/cluster.ts";
import { cgroup2Mount } from "../../src/roles/agent/containment.ts";

const NODES = ["node01", "node02", "node03", "node04"];
const mount = cgroup2Mount();
const group = `ebb-test-hogs-${process.pid}`;

let c: TestCluster;
let hog: Subprocess | undefined;
let flags: string;

beforeAll(async () => {
  expect(process.getuid!()).toBe(0);
  expect(mount).toBeDefined();
  for (const n of NODES) mkdirSync(join(mount!, group, n), { recursive: true });
  c = new TestCluster({ agents: NODES.length });
  // The command runs as nobody: its flag files are where nobody can look.
  flags = mkdtempSync(join(tmpdir(), "ebb-host-flags-"));
  chmodSync(flags, 0o755);
  // Thresholds in share of the machine's CPU: an empty cgroup measures 0; the hog, however little of a loaded machine it gets, more than 0.5 %.
  const cpu = (n: string) => ({ "cpu.other": { busy: 0.001, overloaded: 0.005, cgroup: `${group}/${n}` } });
  const config = {
    hostStates: { interval: 0.5, smoothing: 1, dwell: 1, rules: {} as Record<string, unknown> },
    nodes: Object.fromEntries(
      NODES.map((n) => [
        n,
        { hostStates: { rules: { ...cpu(n), ...(n === "node03" ? { "cmd.owner": { run: ["/bin/sh", "-c", `test ! -e ${flags}/${n}.owner`], owner: 1, every: 0.5, timeout: 5 } } : {}) } } },
      ]),
    ),
  };
  writeFileSync(join(c.dir, "agent.json"), JSON.stringify(config));
  await c.startController();
  for (const n of NODES) c.startAgent(n, ["--config", join(c.dir, "agent.json")]);
  await c.waitNodes(NODES.length, "IDLE", 90_000);
}, 120_000);

afterAll(async () => {
  hog?.kill("SIGKILL");
  await hog?.exited;
  await c?.stop();
  rmSync(flags, { recursive: true, force: true });
  for (const n of NODES)
    try {
      rmdirSync(join(mount!, group, n));
    } catch {
      /* not made */
    }
  try {
    rmdirSync(join(mount!, group));
  } catch {
    /* not made */
  }
});

type Host = { state: string; rule: string; inputs: Record<string, number>; since: string | null };
const hosts = async (): Promise<Record<string, Host>> => {
  const r = await c.ebb(["nodes", "--json"]);
  expect(r.code).toBe(0);
  return Object.fromEntries((JSON.parse(r.stdout).nodes as { name: string; host: Host }[]).map((n) => [n.name, n.host]));
};
const waitHost = (node: string, state: string) => waitFor(`${node} to be ${state}`, async () => ((await hosts())[node]!.state === state ? (await hosts())[node] : undefined), 90_000);

test("every node reports its rules' inputs after its hello, and is free while nothing else runs", async () => {
  const h = await waitFor("every node's first measurements", async () => {
    const all = await hosts();
    return NODES.every((n) => all[n]!.since !== null && all[n]!.inputs["cpu.other"] !== undefined) ? all : undefined;
  });
  for (const n of NODES) expect(h[n]).toMatchObject({ state: "free", rule: "", inputs: { "cpu.other": 0 } });
  expect(h.node03!.inputs["cmd.owner"]).toBe(0);
}, 120_000);

test("a CPU hog outside ebb makes its node overloaded, and only it; the node is free again once it ends", async () => {
  hog = Bun.spawn(["/bin/sh", "-c", "while :; do :; done"], { stdio: ["ignore", "ignore", "ignore"] });
  writeFileSync(join(mount!, group, "node01", "cgroup.procs"), String(hog.pid));
  const h = await waitHost("node01", "overloaded");
  expect(h!.rule).toBe("cpu.other >= 0.005 for 1 s");
  expect(h!.inputs["cpu.other"]).toBeGreaterThan(0.005);
  const all = await hosts();
  for (const n of ["node02", "node03", "node04"]) expect(all[n]).toMatchObject({ state: "free", inputs: { "cpu.other": 0 } });
  // The API and /metrics say the same.
  const api = await c.api("GET", "/v1/nodes");
  expect(api.json.nodes.find((n: { name: string }) => n.name === "node01").host).toMatchObject({ state: "overloaded", rule: "cpu.other >= 0.005 for 1 s" });
  const metrics = await (await fetch(`${c.url}/metrics`, { headers: { Authorization: `Bearer ${c.token}` } })).text();
  expect(metrics).toContain('ebb_node_host_state{node="node01",state="overloaded"} 1');
  expect(metrics).toContain('ebb_node_host_state{node="node02",state="free"} 1');
  expect(metrics).toMatch(/ebb_node_host_input\{node="node01",input="cpu\.other"\} 0\.\d+/);
  const table = await c.ebb(["nodes"]);
  expect(table.stdout).toMatch(/^node01\s+IDLE\s+overloaded\s.*cpu\.other >= 0\.005 for 1 s; cpu\.other=0\.\d+/m);
  hog.kill("SIGKILL");
  await hog.exited;
  hog = undefined;
  const after = await waitHost("node01", "free");
  expect(after!.rule).toBe("");
  expect(after!.inputs["cpu.other"]).toBeLessThan(0.005 * 0.8); // below the overloaded level's exit (hysteresis 0.2)
}, 180_000);

test("a site's command rule: node03 is its owner's while the command fails, and free when it passes again", async () => {
  writeFileSync(join(flags, "node03.owner"), "");
  expect(await waitHost("node03", "owner")).toMatchObject({ rule: "cmd.owner >= 1 for 1 s", inputs: { "cmd.owner": 1 } });
  expect((await hosts()).node04!.state).toBe("free");
  rmSync(join(flags, "node03.owner"));
  expect(await waitHost("node03", "free")).toMatchObject({ inputs: { "cmd.owner": 0 } });
}, 180_000);

test("a bad config file stops the agent with the field and the reason", async () => {
  writeFileSync(join(c.dir, "bad.json"), JSON.stringify({ hostStates: { rules: { "cpu.other": { busy: 0.5, overloaded: 0.2 } } } }));
  const r = await c.ebb(["agent", "--controller", c.url, "--name", "bad", "--key-file", join(c.stateDir, "cluster.key"), "--config", join(c.dir, "bad.json")]);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain(`--config ${join(c.dir, "bad.json")}: hostStates.rules.cpu.other.overloaded: must be at least busy (0.5)`);
}, 60_000);
