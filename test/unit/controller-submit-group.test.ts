/**
 * Submissions over HTTP are recorded a turn's worth at a time (Jobs.submitSoon over
 * Ledger.commitEach): one transaction, a savepoint each, every one answered once all committed;
 * one refused, or one whose change throws half-way, leaves nothing of itself and the others whole.
 */
import { expect, test } from "bun:test";
import { ControllerHarness } from "../support/controller-harness.ts";
import { Refusal } from "../../src/domain/refusal.ts";

test("a turn's submissions are one transaction; one refused is answered with its error and the others are recorded", async () => {
  const h = new ControllerHarness(2);
  let commits = 0;
  h.store.onCommit = () => commits++;
  const submit = (body: Record<string, unknown>) => h.jobs.submitSoon({ cwd: "/tmp", argv: ["true"], ...body } as never, h.by);
  const answers = await Promise.allSettled([submit({ name: "a" }), submit({ name: "b", nodes: 3 }), submit({ name: "c" })]);
  expect(commits).toBe(1);
  expect(answers.map((a) => a.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect((answers[1] as PromiseRejectedResult).reason).toBeInstanceOf(Refusal);
  const ids = [answers[0], answers[2]].map((a) => (a as PromiseFulfilledResult<{ id: number }>).value.id);
  expect(ids.map((id) => [h.store.getJob(id)?.name, h.job(id)?.row.name, h.store.eventsOf(id).map((e) => e.kind)])).toEqual([
    ["a", "a", ["submitted"]],
    ["c", "c", ["submitted"]],
  ]);
});

test("a change of a group that throws half-way is undone alone: its rows are not stored and memory never sees them", () => {
  const h = new ControllerHarness(1);
  const values = { name: "x", kind: "command" as const, argv: ["true"], nodes: 1, minNodes: 1, maxNodes: 1, timeLimit: 60, env: {}, cwd: "/", submitTime: 1, script: null, elastic: false, tasks: null, tasksPerNode: null, overcommit: false, output: null };
  const results = h.ledger.commitEach([
    (tx) => tx.submitted({ ...values, name: "kept" })[0]!.id,
    (tx) => {
      tx.submitted({ ...values, name: "undone" });
      throw new Error("half-way");
    },
    (tx) => tx.submitted({ ...values, name: "kept too" })[0]!.id,
  ]);
  expect(results.map((r) => r.ok)).toEqual([true, false, true]);
  const kept = results.flatMap((r) => (r.ok ? [r.value] : []));
  expect(kept.map((id) => h.store.getJob(id)?.name)).toEqual(["kept", "kept too"]);
  expect([...h.state.jobs.values()].map((j) => j.row.name)).toEqual(["kept", "kept too"]);
  expect(h.store.listJobs({ limit: 10 }).map((r) => r.name)).toEqual(["kept", "kept too"]);
});

test("a group of one change is its own transaction: kept when it returns, undone whole and its error answered when it throws", () => {
  const h = new ControllerHarness(1);
  const values = { name: "x", kind: "command" as const, argv: ["true"], nodes: 1, minNodes: 1, maxNodes: 1, timeLimit: 60, env: {}, cwd: "/", submitTime: 1, script: null, elastic: false, tasks: null, tasksPerNode: null, overcommit: false, output: null };
  let commits = 0;
  h.store.onCommit = () => commits++;
  const undone = h.ledger.commitEach([
    (tx) => {
      tx.submitted({ ...values, name: "undone" });
      throw new Error("half-way");
    },
  ]);
  expect(undone.map((r) => (r.ok ? r.value : (r.error as Error).message))).toEqual(["half-way"]);
  const kept = h.ledger.commitEach([(tx) => tx.submitted({ ...values, name: "kept" })[0]!.id]);
  expect(kept[0]!.ok).toBe(true);
  expect(commits).toBe(2);
  expect([...h.state.jobs.values()].map((j) => j.row.name)).toEqual(["kept"]);
  expect(h.store.listJobs({ limit: 10 }).map((r) => r.name)).toEqual(["kept"]);
});
