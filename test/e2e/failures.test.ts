/** Node failure and controller restarts, with every daemon a separate process. */
import { Database } from "bun:sqlite";
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, pidAlive, startCluster, TestCluster, waitFor } from "../support/cluster.ts";

let c: TestCluster | undefined;
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

function dbRows(cluster: TestCluster, path = join(cluster.stateDir, "ebb.db")): { id: number; state: string }[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.query("select id, state from jobs order by id").all() as { id: number; state: string }[];
  } finally {
    db.close();
  }
}

test("an agent killed with SIGKILL makes its node DOWN and its job NODE_FAIL; other nodes keep working", async () => {
  c = await startCluster({ agents: 3, heartbeat: 0.5 });
  const id = await c.submit({ argv: ["sh", "-c", "echo pid=$$ node=$EBB_NODENAME; exec sleep 300"], nodes: 2, tasks: 2 });
  const job = await c.waitJob(id, ["RUNNING"]);
  const ranks = await waitFor("both ranks", () => {
    const lines = c!.read(job.output).split("\n").filter((l) => l.startsWith("pid="));
    return lines.length === 2 ? lines.map((l) => ({ pid: Number(/pid=(\d+)/.exec(l)![1]), node: /node=(\S+)/.exec(l)![1]! })) : undefined;
  });
  const victim = job.allocation[1] as string;
  c.agents.get(victim)!.kill("SIGKILL");
  const failed = await c.waitJob(id, ["NODE_FAIL"], 15_000);
  expect(failed.reason).toContain(`node ${victim}`);
  // Three missed heartbeats later the node is DOWN.
  const down = await waitFor("the node to go DOWN", async () => {
    const n = (await c!.api("GET", "/v1/nodes")).json.nodes.find((x: any) => x.name === victim);
    return n.state === "DOWN" ? n : undefined;
  });
  expect(down.reason).toContain("no heartbeat");
  // The rank on the surviving node was killed.
  const survivor = ranks.find((r) => r.node !== victim)!;
  await waitFor("the rank on the surviving node to die", () => !pidAlive(survivor.pid));
  // The two live nodes still run jobs.
  const next = await c.submit({ argv: ["true"], nodes: 2 });
  expect((await c.waitJob(next, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
  // The rank on the dead agent's node died with its agent, without waiting for a restart;
  // the agent comes back under the same name and the node is UP again.
  const orphan = ranks.find((r) => r.node === victim)!;
  await waitFor("the dead agent's rank to die with it", () => !pidAlive(orphan.pid));
  c.startAgent(victim);
  await c.waitNodes(3, "IDLE");
});

test("restarting the controller loses no job: finished keep their records, pending stay queued, running ones carry on", async () => {
  c = await startCluster({ agents: 2, heartbeat: 0.5 });
  const done = await c.submit({ argv: ["true"] });
  await c.waitJob(done, ["COMPLETED"]);
  // Two tasks of a core on each node: every core of the 2-core nodes.
  const running = await c.submit({ argv: ["sh", "-c", "sleep 2; echo finished"], nodes: 2, tasks: 4, timeLimit: 60 });
  await c.waitJob(running, ["RUNNING"]);
  const pending = await c.submit({ argv: ["sh", "-c", "echo later"], nodes: 2 });
  expect((await c.job(pending)).state).toBe("PENDING");
  const before = dbRows(c);

  c.controller.kill("SIGKILL");
  await c.controller.exited;
  expect(dbRows(c)).toEqual(before);
  await c.startController();

  // Every row is still there, in the state it had.
  const listed = (await c.api("GET", "/v1/jobs")).json.jobs.map((j: any) => ({ id: j.id, state: j.state }));
  expect(listed).toEqual(before);
  // The agents re-register by themselves; the running job finishes normally and the pending one runs.
  await c.waitNodes(2, "ALLOCATED");
  expect((await c.waitJob(running, ["COMPLETED", "FAILED", "NODE_FAIL"])).state).toBe("COMPLETED");
  expect(c.read(`ebb-${running}.out`)).toContain("finished");
  expect((await c.waitJob(pending, ["COMPLETED", "FAILED"])).state).toBe("COMPLETED");
  expect(c.read(`ebb-${pending}.out`)).toContain("later");
  expect(dbRows(c).map((r) => r.state)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"]);
});

test("an agent that hangs (SIGSTOP, its connection open) is DOWN after 3 missed heartbeats; resumed, it is back and its stale rank is killed", async () => {
  c = await startCluster({ agents: 2, heartbeat: 0.5 });
  const id = await c.submit({ argv: ["sh", "-c", "echo pid=$$ node=$EBB_NODENAME; exec sleep 300"], nodes: 2, tasks: 2 });
  await c.waitJob(id, ["RUNNING"]);
  const ranks = await waitFor("both ranks to start", () => {
    const found = [...c!.read(`ebb-${id}.out`).matchAll(/pid=(\d+) node=(\S+)/g)].map((m) => ({ pid: Number(m[1]), node: m[2]! }));
    return found.length === 2 ? found : undefined;
  });
  const hung = ranks.find((r) => r.node === "node02")!;
  c.agents.get("node02")!.kill("SIGSTOP");
  const failed = await c.waitJob(id, ["NODE_FAIL"], 15_000);
  expect(failed.reason).toContain("node02");
  const down = (await c.api("GET", "/v1/nodes")).json.nodes.find((n: any) => n.name === "node02");
  expect(down.state).toBe("DOWN");
  expect(down.reason).toMatch(/^no heartbeat for \d/);
  // The rank on the hung node lives on until its agent runs again.
  expect(pidAlive(hung.pid)).toBe(true);
  c.agents.get("node02")!.kill("SIGCONT");
  await c.waitNodes(2, "IDLE");
  await waitFor("the stale rank to be killed", () => !pidAlive(hung.pid));
});

test("an agent registers the name, CPUs, memory and address it is given, and runs jobs there", async () => {
  c = await startCluster({ agents: 0 });
  const port = await freePort();
  c.startAgent("big", ["--cpus", "64", "--memory", "131072", "--listen", `127.0.0.1:${port}`]);
  await c.waitNodes(1, "IDLE");
  const node = (await c.api("GET", "/v1/nodes")).json.nodes[0];
  expect(node).toMatchObject({ name: "big", cpus: 64, memoryMb: 131072, addr: `127.0.0.1:${port}` });
  const id = await c.submit({ argv: ["sh", "-c", "echo $EBB_NODENAME"] });
  await c.waitJob(id, ["COMPLETED"]);
  expect(c.read(`ebb-${id}.out`).trim()).toBe("big");
});

test("--db puts the job store where it says, and a restart reads it from there", async () => {
  const elsewhere = mkdtempSync(join(tmpdir(), "ebb-db-"));
  const path = join(elsewhere, "jobs.db");
  try {
    c = await startCluster({ agents: 1, controllerArgs: ["--db", path] });
    const id = await c.submit({ argv: ["true"] });
    await c.waitJob(id, ["COMPLETED"]);
    expect(dbRows(c, path)).toEqual([{ id, state: "COMPLETED" }]);
    expect(existsSync(join(c.stateDir, "ebb.db"))).toBe(false);
    c.controller.kill("SIGKILL");
    await c.controller.exited;
    await c.startController();
    expect((await c.job(id)).state).toBe("COMPLETED");
  } finally {
    await c?.stop();
    c = undefined;
    rmSync(elsewhere, { recursive: true, force: true });
  }
});

test("an `ebb run` allocation survives a controller restart", async () => {
  c = await startCluster({ agents: 1, heartbeat: 0.5 });
  const run = c.ebbSpawn(["run", "sh", "-c", "sleep 3; echo survived"]);
  // Wait for the step itself, not just the allocation: the restart must hit a running program.
  const [job] = await waitFor("the allocation", async () => {
    const jobs = (await c!.api("GET", "/v1/jobs?state=RUNNING")).json.jobs;
    return jobs.length === 1 ? jobs : undefined;
  });
  await waitFor("the step to run", async () => (await c!.job(job.id)).steps.length === 1);
  c.controller.kill("SIGTERM");
  await c.controller.exited;
  await c.startController();
  const [out, code] = await Promise.all([new Response(run.stdout).text(), run.exited]);
  expect(out.trim()).toBe("survived");
  expect(code).toBe(0);
  const jobs = (await c.api("GET", "/v1/jobs")).json.jobs;
  expect(jobs.map((j: any) => j.state)).toEqual(["COMPLETED"]);
});

test("an agent stopped cleanly in the middle of a command job's or an `ebb run` step removes the step's shared-memory files", async () => {
  c = await startCluster({ agents: 2, heartbeat: 0.5 });
  // A command job's step root runs inside its first node's agent; an `ebb run` step's in the launcher.
  const command = await c.submit({ argv: ["sleep", "60"], nodes: 1, cwd: c.dir });
  const first = (await c.waitJob(command, ["RUNNING"])).allocation[0] as string;
  const run = c.ebbSpawn(["run", "sleep", "60"]);
  try {
    for (const node of [first, first === "node01" ? "node02" : "node01"]) {
      const agent = c.agents.get(node)!;
      const mine = () => readdirSync("/dev/shm").filter((n) => n.startsWith("ebb-") && n.endsWith(`-${agent.pid}`));
      const cfgDir = await waitFor(`the CFG directory of ${node}'s step`, () => mine().find((n) => new RegExp(`^ebb-cfg-${node}-\\d+\\.0\\.[0-9a-z]+-\\d+$`).test(n)));
      agent.kill("SIGTERM");
      await agent.exited;
      expect(existsSync(join("/dev/shm", cfgDir))).toBe(false);
      expect(mine()).toEqual([]);
    }
  } finally {
    run.kill("SIGKILL");
    await run.exited;
  }
});
