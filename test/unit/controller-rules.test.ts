/**
 * The controller's rules, without processes (test/support/controller-harness.ts): starts, ends,
 * grows, shrinks and faults change jobs and nodes only through the ledger, tell the agents and the
 * launcher what they must, and a controller restarted on the same database gets the same memory.
 */
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import type { ControllerToLauncher } from "../../src/proto/launcher.ts";
import type { ControllerToAgent } from "../../src/proto/agent.ts";
import { openDb } from "../../src/store/db.ts";
import { ControllerHarness } from "../support/controller-harness.ts";

type Realloc = Extract<ControllerToLauncher, { t: "realloc" }>;

test("a pass starts what fits: RUNNING, the nodes owned, the job's start sent to its first node; an end frees them for the next", () => {
  const h = new ControllerHarness(3);
  const a = h.submit({ nodes: 2, exclusive: true });
  const b = h.submit({ nodes: 2, exclusive: true });
  h.pass();
  expect({ a: h.job(a)!.row.state, b: h.job(b)!.row.state }).toEqual({ a: "RUNNING", b: "PENDING" });
  expect(h.owners()).toEqual({ n1: a, n2: a, n3: null });
  expect(h.toAgents.filter((m) => m.msg.t === "job.start").map((m) => m.node)).toEqual(["n1"]);
  expect(h.store.openAllocations().map((r) => [r.jobId, r.node])).toEqual([
    [a, "n1"],
    [a, "n2"],
  ]);

  h.jobs.exited(a, 0);
  expect(h.job(a)).toBeUndefined();
  expect(h.store.getJob(a)!.state).toBe("COMPLETED");
  expect(h.owners()).toEqual({ n1: null, n2: null, n3: null });
  expect(h.toAgents.filter((m) => m.msg.t === "job.kill").map((m) => m.node)).toEqual(["n1", "n2"]);
  h.pass();
  expect(h.job(b)!.row.state).toBe("RUNNING");
  expect(h.job(b)!.nodes).toHaveLength(2);
});

test("an exit whose node said the job has nothing left there (job.exit's gone) sends that node no job.kill, the others theirs", () => {
  const h = new ControllerHarness(2);
  const a = h.submit({ nodes: 2, exclusive: true });
  h.pass();
  expect(h.jobs.exited(a, 0, undefined, undefined, Date.now(), undefined, "n1")).toEqual(["n2"]);
  expect(h.toAgents.filter((m) => m.msg.t === "job.kill").map((m) => m.node)).toEqual(["n2"]);
  expect(h.owners()).toEqual({ n1: null, n2: null });
});

/** An elastic command job started on 2 of 4 nodes, its launcher attached with one rank per node. */
function elasticJob(h: ControllerHarness) {
  const id = h.submit({ nodes: 2, elastic: true, minNodes: 1, maxNodes: 4 });
  h.pass();
  const launcher = h.launcher();
  h.elastic.attach(id, 0, launcher, [1, 1]);
  return { id, launcher };
}

test("a grow holds the added nodes while it adapts and keeps them when it commits; a shrink lets its nodes go when it commits", () => {
  const h = new ControllerHarness(4);
  const { id, launcher } = elasticJob(h);
  const { adaptationId } = h.applier.resizeNow(id, 4);
  const realloc = launcher.got.find((m): m is Realloc => m.t === "realloc")!;
  expect({ state: h.job(id)!.row.state, nodes: h.job(id)!.nodes, added: realloc.added.map((n) => n.name) }).toEqual({ state: "ADAPTING", nodes: ["n1", "n2", "n3", "n4"], added: ["n3", "n4"] });
  // Before the order, the added nodes' addresses, so that the launcher's connections open meanwhile (docs/adaptation.md §7.1).
  expect(launcher.got.map((m) => m.t).slice(0, 2)).toEqual(["links", "realloc"]);
  expect(launcher.got[0]).toEqual({ t: "links", jobId: id, nodes: realloc.added });
  // Written at once, before the records: not held with the order until they are.
  expect(launcher.flushes).toEqual([1]);
  expect(Object.values(h.owners())).toEqual([id, id, id, id]);
  h.elastic.done(id, adaptationId, true, { committed: Date.now() }, undefined);
  expect({ state: h.job(id)!.row.state, nodes: h.job(id)!.nodes.length }).toEqual({ state: "RUNNING", nodes: 4 });

  launcher.got.length = 0;
  const shrink = h.applier.resizeNow(id, 1).adaptationId;
  expect(launcher.got.find((m): m is Realloc => m.t === "realloc")!.removed).toEqual(["n2", "n3", "n4"]);
  expect(launcher.got.some((m) => m.t === "links")).toBe(false);
  // Until the ranks commit, the leaving nodes are still the job's.
  expect(Object.values(h.owners())).toEqual([id, id, id, id]);
  h.elastic.done(id, shrink, true, { committed: Date.now() }, undefined);
  expect({ nodes: h.job(id)!.nodes, owners: h.owners(), row: h.store.getJob(id)!.nodes }).toEqual({ nodes: ["n1"], owners: { n1: id, n2: null, n3: null, n4: null }, row: 1 });
  expect(h.toAgents.filter((m) => m.msg.t === "job.kill").map((m) => m.node)).toEqual(["n2", "n3", "n4"]);
});

test("a failed grow gives its added nodes back; a node lost leaves the job at once, and a failed fault adaptation ends it NODE_FAIL", () => {
  const h = new ControllerHarness(4);
  const { id } = elasticJob(h);
  const grow = h.applier.resizeNow(id, 3).adaptationId;
  h.elastic.done(id, grow, false, {}, "the ranks could not take it");
  expect({ state: h.job(id)!.row.state, owners: h.owners() }).toEqual({ state: "RUNNING", owners: { n1: id, n2: id, n3: null, n4: null } });

  expect(h.elastic.fault(id, "n2", "its agent is gone")).toBe(true);
  expect({ state: h.job(id)!.row.state, nodes: h.job(id)!.nodes, owners: h.owners() }).toEqual({ state: "ADAPTING", nodes: ["n1"], owners: { n1: id, n2: null, n3: null, n4: null } });
  const fault = h.job(id)!.elastic!.adapting!.id;
  h.elastic.done(id, fault, false, {}, "the survivors could not adapt");
  expect(h.job(id)).toBeUndefined();
  expect(h.store.getJob(id)!.state).toBe("NODE_FAIL");
  expect(h.owners()).toEqual({ n1: null, n2: null, n3: null, n4: null });
  expect(h.store.openAllocations()).toEqual([]);
});

test("a node a grow added, lost before the commit: the grow is aborted, and a fault adaptation that removes nothing voids its window (docs/adaptation.md §7.8)", () => {
  const h = new ControllerHarness(4);
  const { id, launcher } = elasticJob(h);
  const grow = h.applier.resizeNow(id, 3).adaptationId;
  expect(h.owners()).toEqual({ n1: id, n2: id, n3: id, n4: null });
  expect(h.elastic.fault(id, "n3", "its agent is gone")).toBe(true);
  expect({ state: h.job(id)!.row.state, nodes: h.job(id)!.nodes, owners: h.owners() }).toEqual({ state: "ADAPTING", nodes: ["n1", "n2"], owners: { n1: id, n2: id, n3: null, n4: null } });
  const rows = h.store.db.$client.query("select id, state, from_nodes, to_nodes, removed, message from adaptations where job_id = ? order by id").all(id) as { id: number; state: string; from_nodes: number; to_nodes: number; removed: string; message: string | null }[];
  expect(rows.map((r) => [r.id === grow, r.state, r.from_nodes, r.to_nodes, JSON.parse(r.removed)])).toEqual([
    [true, "FAILED", 2, 3, []],
    [false, "ADAPTING", 2, 2, []],
  ]);
  expect(rows[0]!.message).toBe("aborted: node n3 failed (its agent is gone)");
  const realloc = launcher.got.filter((m): m is Realloc => m.t === "realloc").at(-1)!;
  expect({ nodes: realloc.nodes.map((n) => n.name), removed: realloc.removed, fault: realloc.fault?.reason }).toEqual({ nodes: ["n1", "n2"], removed: [], fault: "node n3 failed: its agent is gone" });
  // The same loss seen again (the node goes DOWN after the launcher reported it): nothing more.
  expect(h.elastic.fault(id, "n3", "no heartbeat")).toBe(true);
  h.elastic.done(id, rows[1]!.id, true, { committed: Date.now() }, undefined, Date.now(), [1, 1]);
  expect({ state: h.job(id)!.row.state, nodes: h.job(id)!.nodes }).toEqual({ state: "RUNNING", nodes: ["n1", "n2"] });
});

test("a controller restarted on the same database gets back the memory it had: jobs, allocations, node owners", () => {
  const path = `/tmp/ebb-harness-${process.pid}.db`;
  const h = new ControllerHarness(4, {}, openDb(path));
  const { id } = elasticJob(h);
  h.applier.resizeNow(id, 3);
  const waiting = h.submit({ nodes: 4 });
  h.submit({ nodes: 1, hold: true });
  const memory = (x: ControllerHarness) => ({ jobs: [...x.state.jobs.values()].map((j) => ({ row: j.row, nodes: j.nodes })), owners: x.owners() });
  const before = memory(h);
  const again = new ControllerHarness(4, {}, openDb(path));
  again.jobs.restore();
  expect(memory(again)).toEqual(before);
  expect(again.job(waiting)!.row.state).toBe("PENDING");
  h.db.$client.close();
  again.db.$client.close();
  for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
});

test("a user's resize is planned like a pass's and recorded as a plan; its remap goes to the launcher as made and the commit's world comes back", () => {
  const h = new ControllerHarness(4);
  const { id, launcher } = elasticJob(h);
  const { adaptationId } = h.applier.resizeNow(id, 3);
  const realloc = launcher.got.find((m): m is Realloc => m.t === "realloc")!;
  expect(realloc.remap).toEqual({ staying: 2, leaving: 0, joining: 1, tasks: [1, 1, 1] });
  const item = h.store.db.$client.query("select kind, status, detail from plan_items where kind = 'resize'").all() as { kind: string; status: string; detail: string }[];
  expect(item.map((i) => [i.kind, i.status, JSON.parse(i.detail).rule, JSON.parse(i.detail).remap])).toEqual([["resize", "done", "requested", realloc.remap]]);
  // The launcher's world after the commit is what the controller keeps (here, as a launcher could say it).
  h.elastic.done(id, adaptationId, true, { committed: Date.now() }, undefined, Date.now(), [1, 1, 2]);
  expect(h.job(id)!.elastic!.tasks).toEqual([1, 1, 2]);
  // Without idle nodes, a grow is refused with the planner's words.
  h.submit({ nodes: 1 });
  h.pass();
  expect(() => h.applier.resizeNow(id, 4)).toThrow("growing job 1 needs 1 more node of its shape (whole nodes); fewer are free");
});

test("--requeue: a batch job whose node fails goes back to the queue (its nodes freed, the survivors killed) and starts again as run 1; the end of run 0 ends nothing", () => {
  const h = new ControllerHarness(3);
  const id = h.submit({ argv: undefined, script: "#!/bin/sh\nsleep 60\n", nodes: 2, requeue: true });
  h.pass();
  expect(h.job(id)!.nodes).toEqual(["n1", "n2"]);
  h.toAgents.length = 0;
  h.state.nodes.get("n2")!.row.status = "DOWN";
  h.jobs.nodeFailed(id, "n2", "stopped responding");
  expect({ state: h.job(id)!.row.state, restarts: h.job(id)!.row.restarts, nodes: h.job(id)!.nodes }).toEqual({ state: "PENDING", restarts: 1, nodes: [] });
  expect(h.store.getJob(id)).toMatchObject({ state: "PENDING", restarts: 1, startTime: null });
  expect(h.toAgents.map((m) => [m.node, m.msg.t])).toEqual([["n1", "job.kill"]]);
  h.state.nodes.get("n1")!.completing.clear();
  h.pass();
  const start = h.toAgents.find((m) => m.msg.t === "job.start")!.msg as Extract<ControllerToAgent, { t: "job.start" }>;
  expect({ nodes: h.job(id)!.nodes, run: start.job.run, restartCount: start.job.jobEnv.SLURM_RESTART_COUNT }).toEqual({ nodes: ["n1", "n3"], run: 1, restartCount: "1" });
  // The first run's batch shell, killed by the requeue, reports its end after the second run started.
  h.jobs.exited(id, 143, "batch script killed by SIGTERM", undefined, Date.now(), 0);
  expect(h.job(id)!.row.state).toBe("RUNNING");
  h.jobs.exited(id, 0, undefined, undefined, Date.now(), 1);
  expect(h.store.getJob(id)).toMatchObject({ state: "COMPLETED", restarts: 1 });
  // Without --requeue, the same failure ends the job.
  const other = h.submit({ argv: undefined, script: "#!/bin/sh\nsleep 60\n", nodes: 1 });
  h.pass();
  h.state.nodes.get(h.job(other)!.nodes[0]!)!.row.status = "DOWN";
  h.jobs.nodeFailed(other, h.job(other)!.nodes[0]!, "stopped responding");
  expect(h.store.getJob(other)!.state).toBe("NODE_FAIL");
});
