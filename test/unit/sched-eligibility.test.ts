/** Eligibility (holds, dependencies, begin times, array limits), node-name constraints and --test-only's prediction. */
import { describe, expect, test } from "bun:test";
import { nameStarts, planBatch } from "../../src/sched/batch.ts";
import { dependencyStatus, ineligible, type JobFacts } from "../../src/sched/eligibility.ts";
import { predictStart, replayAll } from "../../src/sched/predict.ts";
import type { ClusterNode, PendingJob } from "../../src/sched/types.ts";
import type { Snapshot, SnapshotJob } from "../../src/sched/plan.ts";
import { resolveConfig, type PolicyName } from "../../src/sched/config.ts";

const facts = (m: Record<number, JobFacts>) => (id: number) => m[id];

describe("dependencies", () => {
  const done = { state: "COMPLETED", exitCode: 0 };
  const failed = { state: "FAILED", exitCode: 3 };
  const running = { state: "RUNNING", exitCode: null };
  const pending = { state: "PENDING", exitCode: null };

  test("afterok and afternotok: met, waiting, or never", () => {
    const ok = { any: false, terms: [{ type: "afterok" as const, jobs: [1] }] };
    expect(dependencyStatus(ok, facts({ 1: done })).state).toBe("met");
    expect(dependencyStatus(ok, facts({ 1: running }))).toEqual({ state: "wait", detail: "waits for job 1 to complete (afterok)" });
    expect(dependencyStatus(ok, facts({ 1: failed }))).toEqual({ state: "never", detail: "job 1 ended FAILED (exit code 3), so afterok:1 can never be met" });
    const notok = { any: false, terms: [{ type: "afternotok" as const, jobs: [1] }] };
    expect(dependencyStatus(notok, facts({ 1: failed })).state).toBe("met");
    expect(dependencyStatus(notok, facts({ 1: { state: "CANCELLED", exitCode: null } })).state).toBe("met");
    expect(dependencyStatus(notok, facts({ 1: done })).state).toBe("never");
  });

  test("after, afterany, several jobs, all and any, unknown jobs", () => {
    expect(dependencyStatus({ any: false, terms: [{ type: "after", jobs: [1] }] }, facts({ 1: running })).state).toBe("met");
    expect(dependencyStatus({ any: false, terms: [{ type: "after", jobs: [1] }] }, facts({ 1: pending })).state).toBe("wait");
    expect(dependencyStatus({ any: false, terms: [{ type: "afterany", jobs: [1, 2] }] }, facts({ 1: failed, 2: running })).state).toBe("wait");
    const both = { any: false, terms: [{ type: "afterok" as const, jobs: [1] }, { type: "afterany" as const, jobs: [2] }] };
    expect(dependencyStatus(both, facts({ 1: done, 2: running })).state).toBe("wait");
    expect(dependencyStatus({ ...both, any: true }, facts({ 1: done, 2: running })).state).toBe("met");
    expect(dependencyStatus({ any: true, terms: [{ type: "afterok", jobs: [1] }, { type: "afterok", jobs: [2] }] }, facts({ 1: failed, 2: failed })).state).toBe("never");
    expect(dependencyStatus({ any: false, terms: [{ type: "afterok", jobs: [9] }] }, facts({})).state).toBe("never");
    expect(dependencyStatus({ any: false, terms: [{ type: "afterany", jobs: [9] }] }, facts({})).state).toBe("met");
  });

  test("singleton waits while a job of the same name is in the way", () => {
    const s = { any: false, terms: [{ type: "singleton" as const }] };
    expect(dependencyStatus(s, facts({}), 4)).toEqual({ state: "wait", detail: "waits for job 4 of the same name to end (singleton)" });
    expect(dependencyStatus(s, facts({})).state).toBe("met");
  });
});

describe("ineligible", () => {
  const free = { held: false, beginTime: null };
  test("Slurm's reasons, held first", () => {
    expect(ineligible(free, 0)).toBeUndefined();
    expect(ineligible({ ...free, held: true, beginTime: 10 }, 0)!.reason).toBe("JobHeldUser");
    expect(ineligible({ ...free, dependency: { state: "never", detail: "x" } }, 0)!.reason).toBe("DependencyNeverSatisfied");
    expect(ineligible({ ...free, dependency: { state: "wait", detail: "x" } }, 0)!.reason).toBe("Dependency");
    expect(ineligible({ ...free, beginTime: 10 }, 5)!.reason).toBe("BeginTime");
    expect(ineligible({ ...free, beginTime: 10 }, 10)).toBeUndefined();
    expect(ineligible({ ...free, array: { running: 2, limit: 2 } }, 0)!.reason).toBe("JobArrayTaskLimit");
    expect(ineligible({ ...free, array: { running: 1, limit: 2 } }, 0)).toBeUndefined();
  });
});

const nodes = (n: number, busy: Record<string, number> = {}): ClusterNode[] => Array.from({ length: n }, (_, i) => ({ name: `n${i + 1}`, up: true, jobId: busy[`n${i + 1}`] }));
const job = (id: number, extra: Partial<PendingJob> = {}): PendingJob => ({ id, minNodes: 1, maxNodes: 1, timeLimit: 60, submitTime: id, ...extra });

describe("node-name constraints", () => {
  test("a nodelist gets its nodes, an exclude never gets them, and they choose before the others", () => {
    const plan = planBatch({ now: 0, nodes: nodes(4), running: [], pending: [job(1), job(2, { minNodes: 2, maxNodes: 2, nodelist: ["n1", "n3"] }), job(3, { exclude: ["n1", "n4"] })] });
    const by = Object.fromEntries(plan.starts.map((s) => [s.jobId, s.nodes]));
    expect(by).toEqual({ 1: ["n4"], 2: ["n1", "n3"], 3: ["n2"] });
  });

  test("a job whose nodes are busy or down waits with the reason, and the others go on", () => {
    const plan = planBatch({ now: 0, nodes: [...nodes(2, { n1: 9 }), { name: "n3", up: false }], running: [{ id: 9, nodes: ["n1"], expectedEnd: 1000 }], pending: [job(1, { nodelist: ["n1"] }), job(2, { nodelist: ["n3"] }), job(3)] });
    expect(plan.starts.map((s) => [s.jobId, s.nodes])).toEqual([[3, ["n2"]]]);
    expect(plan.waiting.get(1)).toBe("Resources: n1 (from its nodelist) is busy");
    expect(plan.waiting.get(2)).toBe("ReqNodeNotAvail: n3 is not up");
  });

  test("nameStarts leaves out a bound job whose nodes are taken", () => {
    const starts = nameStarts(nodes(2, { n1: 5 }), [{ jobId: 1, nodes: 1, reason: "x" }], [job(1, { nodelist: ["n1"] })]);
    expect(starts).toEqual([]);
  });
});

describe("predictStart (--test-only)", () => {
  const run = (id: number, names: string[], end: number): SnapshotJob => ({ id, nodes: names.length, nodeNames: names, minNodes: 1, maxNodes: 1, elastic: false, submitTime: 0, startTime: 0, timeLimit: end / 1000, expectedEnd: end, samples: [], adapting: false });
  const input = (extra: Partial<Snapshot> = {}, policy: PolicyName = "easy"): Snapshot => ({ now: 1000, nodes: nodes(2, { n1: 7, n2: 8 }), running: [run(7, ["n1"], 61_000), run(8, ["n2"], 121_000)], pending: [], config: resolveConfig({ policy }), ...extra });
  test("now if it fits, else when enough running jobs have ended", () => {
    expect(predictStart({ ...input(), nodes: nodes(2), running: [], pending: [job(-1)] }, -1)).toEqual({ start: 1000, nodes: ["n1"] });
    expect(predictStart(input({ pending: [job(-1)] }), -1)).toEqual({ start: 61_000, nodes: ["n1"] });
    expect(predictStart(input({ pending: [job(-1, { minNodes: 2, maxNodes: 2 })] }), -1)).toEqual({ start: 121_000, nodes: ["n1", "n2"] });
  });
  test("the jobs queued before it go first; a begin time holds it back; too big never starts", () => {
    expect(predictStart(input({ pending: [job(1, { timeLimit: 100 }), job(-1, { submitTime: 5 })] }), -1)).toEqual({ start: 121_000, nodes: ["n2"] });
    expect(predictStart(input({ pending: [job(-1)] }), -1, 200_000).start).toBe(200_000);
    expect(predictStart(input({ pending: [job(-1, { minNodes: 3, maxNodes: 3 })] }), -1).start).toBeUndefined();
  });
  test("by the configured policy's plans: EASY backfills a short job, FCFS keeps it behind the first", () => {
    const pending = [job(1, { minNodes: 2, maxNodes: 2, timeLimit: 100 }), job(-1, { submitTime: 5, timeLimit: 10 })];
    expect(predictStart(input({ pending }), -1)).toEqual({ start: 61_000, nodes: ["n1"] });
    expect(predictStart(input({ pending }, "fcfs"), -1)).toEqual({ start: 221_000, nodes: ["n1"] });
  });
  test("replayAll (squeue --start): every pending job's start in one replay, each as predictStart gives it; one that never fits has none", () => {
    const pending = [job(1, { minNodes: 2, maxNodes: 2, timeLimit: 100 }), job(2, { submitTime: 5, timeLimit: 10 }), job(3, { submitTime: 6, timeLimit: 1000 }), job(4, { submitTime: 7, minNodes: 3, maxNodes: 3 })];
    const starts = new Map<number, { start: number; nodes: string[] }>();
    for (const _ of replayAll(input({ pending }), starts));
    expect([...starts].sort((a, b) => a[0] - b[0])).toEqual([
      [1, { start: 121_000, nodes: ["n1", "n2"] }],
      [2, { start: 61_000, nodes: ["n1"] }],
      [3, { start: 221_000, nodes: ["n1"] }],
    ]);
    for (const id of [1, 2, 3]) expect(predictStart(input({ pending }), id)).toEqual(starts.get(id)!);
    // Stopped after its first step: the starts found so far.
    const early = new Map<number, { start: number; nodes: string[] }>();
    replayAll(input({ pending }), early).next();
    expect([...early.keys()]).toEqual([]);
  });
});
