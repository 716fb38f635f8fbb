/**
 * The controller's side of resources (test/support/controller-harness.ts, no processes): a request
 * no node could ever hold is refused at submit with the field that asks for it; what agents report
 * a job used is summed on the job; an OOM kill ends a job OUT_OF_MEMORY, also when it is reported
 * after the job's exit; a step inside a job gets only the job's share of each node.
 */
import { expect, test } from "bun:test";
import { ControllerHarness } from "../support/controller-harness.ts";
import { Refusal } from "../../src/domain/refusal.ts";

function refusal(f: () => unknown): { field?: string; message: string } {
  try {
    f();
  } catch (e) {
    if (e instanceof Refusal) return { field: e.field, message: e.message };
    throw e;
  }
  throw new Error("not refused");
}

test("a request no node could ever hold is refused at submit, naming the field and what no node has", () => {
  const h = new ControllerHarness(2);
  h.addNode("g1", 8, { memoryMb: 6144, gpus: ["a100", "a100"], features: ["ib"] });
  expect(refusal(() => h.submit({ cpusPerTask: 20 }))).toEqual({ field: "cpusPerTask", message: expect.stringContaining("no node has 20 cores per node") });
  expect(refusal(() => h.submit({ mem: 300 * 1024 }))).toEqual({ field: "mem", message: expect.stringContaining("no node has 307200 MiB of memory per node") });
  expect(refusal(() => h.submit({ gpusPerNode: 4 }))).toEqual({ field: "gpusPerNode", message: expect.stringContaining("no node has 4 GPUs per node") });
  expect(refusal(() => h.submit({ gpusPerNode: 1, gpuType: "v100" }))).toEqual({ field: "gpusPerNode", message: expect.stringContaining("1 v100 GPUs") });
  expect(refusal(() => h.submit({ constraint: ["ib"], nodes: 2 })).field).toBe("nodes");
  expect(refusal(() => h.submit({ constraint: ["gpu"] })).field).toBe("constraint");
  // The public repository's script: --nodes=1 --ntasks=1 --cpus-per-task=20 --mem=300G --gres=gpu:2.
  expect(refusal(() => h.submit({ nodes: 1, tasks: 1, cpusPerTask: 20, mem: 300 * 1024, gpusPerNode: 2 })).field).toBe("cpusPerTask");
  // What some node can hold is taken, with its request stored.
  const ok = h.submit({ cpusPerTask: 8, mem: 4096, gpusPerNode: 2, gpuType: "a100", constraint: ["ib"] });
  expect(h.store.getJob(ok)!.resources).toEqual({ tasks: 1, cpusPerTask: 8, cpusPerTaskSet: true, exclusive: false, memPerNodeMiB: 4096, gpusPerNode: 2, gpuType: "a100", constraint: ["ib"] });
  expect(h.store.getJob(h.submit({}))!.resources).toEqual({ tasks: 1, cpusPerTask: 1, exclusive: false });
});

test("what agents report a job used is summed over its nodes, ended or not (a node's latest report counts); an OOM kill ends a running job OUT_OF_MEMORY with the reason", () => {
  const h = new ControllerHarness(2);
  const a = h.submit({ nodes: 2, exclusive: true });
  h.pass();
  expect(h.job(a)!.row.state).toBe("RUNNING");
  h.jobs.usage("n2", { jobId: a, cpuSec: 1.5, peakMemMiB: 100, oomKills: 0 });
  expect(h.job(a)!.row.usage).toEqual({ cpuSec: 1.5, peakMemMiB: 100 });
  h.jobs.usage("n1", { jobId: a, cpuSec: 2, peakMemMiB: 700, oomKills: 1 });
  const row = h.store.getJob(a)!;
  expect({ state: row.state, reason: row.reason, usage: row.usage }).toEqual({
    state: "OUT_OF_MEMORY",
    reason: "a process went over the job's memory (1024 MiB on n1) and was killed",
    usage: { cpuSec: 3.5, peakMemMiB: 700 },
  });
  expect(h.job(a)).toBeUndefined();
  // A node's later report (its totals so far) replaces its earlier one, after the job's end too.
  h.jobs.usage("n2", { jobId: a, cpuSec: 2, peakMemMiB: 120, oomKills: 0 });
  expect(h.store.getJob(a)!.usage).toEqual({ cpuSec: 4, peakMemMiB: 700 });
  expect(h.store.allocationsOf(a).map((r) => [r.node, r.cpuSec, r.peakMemMib])).toEqual([
    ["n1", 2, 700],
    ["n2", 2, 120],
  ]);
});

test("an OOM kill reported after the job's exit turns FAILED into OUT_OF_MEMORY; a job that completed stays COMPLETED", () => {
  const h = new ControllerHarness(2);
  const a = h.submit({ nodes: 1, exclusive: true });
  const b = h.submit({ nodes: 1, exclusive: true });
  h.pass();
  h.jobs.exited(a, 137, "killed by SIGKILL");
  h.jobs.exited(b, 0);
  expect(h.store.getJob(a)!.state).toBe("FAILED");
  h.jobs.usage("n1", { jobId: a, cpuSec: 1, peakMemMiB: 1024, oomKills: 2 });
  h.jobs.usage("n2", { jobId: b, cpuSec: 1, peakMemMiB: 5, oomKills: 1 });
  const ra = h.store.getJob(a)!;
  expect({ state: ra.state, reason: ra.reason, exitCode: ra.exitCode }).toEqual({ state: "OUT_OF_MEMORY", reason: "a process went over the job's memory (1024 MiB on n1) and was killed", exitCode: 137 });
  expect(h.store.eventsOf(a).at(-1)!.message).toContain("it had ended failed: killed by SIGKILL");
  expect(h.store.getJob(b)!.state).toBe("COMPLETED");
});

test("agents' reports of one turn, recorded in one transaction, leave the store and memory as each recorded alone; an exit sent twice ends its job once", () => {
  const now = 1_800_000_000_000;
  const setUp = () => {
    const h = new ControllerHarness(3);
    const ids = [1, 2, 3].map(() => h.jobs.submit({ cwd: "/tmp", argv: ["true"], nodes: 1, exclusive: true } as never, h.by, now - 2000).id);
    h.pass(now - 1000);
    return { h, ids };
  };
  const alone = setUp();
  const [a, b, c] = alone.ids as [number, number, number];
  alone.h.jobs.usage("n1", { jobId: a, cpuSec: 0.5, peakMemMiB: 3, oomKills: 0 }, now);
  alone.h.jobs.exited(a, 0, undefined, undefined, now);
  alone.h.jobs.exited(b, 3, "it failed", undefined, now);
  alone.h.jobs.usage("n2", { jobId: b, cpuSec: 1, peakMemMiB: 7, oomKills: 0 }, now);
  const together = setUp();
  expect(together.ids).toEqual(alone.ids);
  let commits = 0;
  together.h.store.onCommit = () => commits++;
  const killed = together.h.jobs.recordReports(
    [
      { usage: { node: "n1", jobId: a, cpuSec: 0.5, peakMemMiB: 3 } },
      { exit: { jobId: a, exitCode: 0 } },
      { exit: { jobId: b, exitCode: 3, message: "it failed" } },
      { exit: { jobId: a, exitCode: 0 } },
      { usage: { node: "n2", jobId: b, cpuSec: 1, peakMemMiB: 7 } },
    ],
    now,
  );
  expect(commits).toBe(1);
  expect(killed).toHaveLength(3);
  expect(killed[2]).toEqual([]);
  const seen = (h: ControllerHarness) => ({
    jobs: [a, b, c].map((id) => h.store.getJob(id)),
    events: [a, b, c].map((id) => h.store.eventsOf(id).map(({ id: _, ...e }) => e)),
    steps: [a, b, c].map((id) => h.store.stepsOf(id)),
    allocations: h.store.allocationsOf([a, b, c]),
    active: [...h.state.jobs.keys()],
    held: [...h.state.nodes.values()].map((n) => [n.row.name, [...n.shares.keys()]]),
  });
  expect(seen(together.h)).toEqual(seen(alone.h));
  expect(seen(together.h).active).toEqual([c]);
});
