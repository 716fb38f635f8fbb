import { describe, expect, test } from "bun:test";
import { resolveConfig, type PolicyName } from "../../src/sched/config.ts";
import { POLICY_TABLE } from "../../src/sched/policies/index.ts";
import type { PassInput, PassPlan } from "../../src/sched/types.ts";
import { simulate } from "../../src/sim/engine.ts";
import { amdahlWork, type SimJob } from "../../src/sim/job.ts";
import { metrics } from "../../src/sim/metrics.ts";
import { buildWorkload } from "../../src/sim/workload.ts";

function rigid(id: number, submit: number, nodes: number, runtime: number): SimJob {
  return { id, submit, nodes, minNodes: nodes, maxNodes: nodes, malleable: false, estimate: runtime, work: amdahlWork(runtime * nodes, 0), resizeCost: () => 0 };
}
const run = (jobs: SimJob[], policy: PolicyName, nodes = 4) => simulate(jobs, { nodes, config: resolveConfig({ policy }) });

describe("simulator", () => {
  test("rigid jobs: waits, turnaround, utilization and slowdown by hand", () => {
    // 4 nodes. Job 1 (4 nodes, 100 s) at 0; job 2 (2 nodes, 50 s) at 10 waits until 100.
    const r = run([rigid(1, 0, 4, 100), rigid(2, 10, 2, 50)], "easy");
    const m = metrics(r);
    expect(r.jobs.map((j) => [j.id, j.start, j.end])).toEqual([
      [1, 0, 100],
      [2, 100, 150],
    ]);
    expect(m.makespan).toBe(150);
    expect(m.meanWait).toBe(45);
    expect(m.meanTurnaround).toBe((100 + 140) / 2);
    expect(m.utilization).toBeCloseTo((400 + 100) / (4 * 150), 12);
    expect(m.meanBoundedSlowdown).toBeCloseTo((1 + 140 / 50) / 2, 12);
  });

  test("EASY backfills where FCFS does not", () => {
    const jobs = [rigid(1, 0, 3, 100), rigid(2, 1, 4, 10), rigid(3, 2, 1, 50)];
    expect(run(jobs, "fcfs").jobs.find((j) => j.id === 3)!.start).toBe(110);
    expect(run(jobs, "easy").jobs.find((j) => j.id === 3)!.start).toBe(2);
  });

  test("a resize costs time and a grow takes its nodes at once", () => {
    // One malleable job, perfectly parallel, 800 node-seconds, starts on 1 of 4 nodes under drms-rs
    // (minimum size), then grows to 4 at its first pass: costs 5 s, then 4x faster.
    const job: SimJob = { id: 1, submit: 0, nodes: 1, minNodes: 1, maxNodes: 4, malleable: true, estimate: 800, work: amdahlWork(800, 0), resizeCost: () => 5 };
    const r = simulate([job], { nodes: 4, config: resolveConfig({ policy: "drms-rs" }) });
    expect(r.resizes).toBe(1);
    expect(r.jobs[0]!.peakNodes).toBe(4);
    expect(r.jobs[0]!.end).toBeCloseTo(5 + 200, 9);
  });

  test("the same seed gives the same run; the malleable set grows with the fraction", () => {
    const trace = Array.from({ length: 120 }, (_, i) => ({ id: i + 1, line: i + 1, submit: i * 37, runtime: 200 + ((i * 7919) % 3000), procs: 1 + ((i * 13) % 16), estimate: 200 + ((i * 7919) % 3000) }));
    const a = buildWorkload(trace, { nodes: 16, coresPerNode: 1, malleable: 0.5, seed: 9 });
    const b = buildWorkload(trace, { nodes: 16, coresPerNode: 1, malleable: 0.5, seed: 9 });
    const r1 = simulate(a.jobs, { nodes: 16, seed: 9, config: resolveConfig({ policy: "ebb", interval: 30 }) });
    const r2 = simulate(b.jobs, { nodes: 16, seed: 9, config: resolveConfig({ policy: "ebb", interval: 30 }) });
    expect(r2.jobs).toEqual(r1.jobs);
    const quarter = new Set(buildWorkload(trace, { nodes: 16, coresPerNode: 1, malleable: 0.25, seed: 9 }).jobs.filter((j) => j.malleable).map((j) => j.id));
    const half = new Set(a.jobs.filter((j) => j.malleable).map((j) => j.id));
    for (const id of quarter) expect(half.has(id)).toBe(true);
    expect(half.size).toBeGreaterThan(quarter.size);
  });

  test("a plan that overcommits nodes is an error naming the policy", () => {
    const orig = POLICY_TABLE.easy.plan;
    (POLICY_TABLE.easy as { plan: (i: unknown) => PassPlan }).plan = () => ({ starts: [{ jobId: 1, nodes: 8, reason: "x" }], resizes: [], reservations: [], notes: [] });
    try {
      expect(() => run([rigid(1, 0, 4, 10)], "easy")).toThrow(/policy easy .*started on 8 nodes/);
    } finally {
      (POLICY_TABLE.easy as { plan: unknown }).plan = orig;
    }
  });

  test("every plan is re-checked as live (checkPlan): a resize of a rigid job is an error naming the policy and the reason", () => {
    const orig = POLICY_TABLE.easy.plan;
    let calls = 0;
    // The first pass starts job 1 on 2 of the 4 nodes and asks for another; that one asks to grow it (it is rigid).
    (POLICY_TABLE.easy as { plan: (i: unknown) => PassPlan }).plan = () =>
      calls++ === 0 ? { starts: [{ jobId: 1, nodes: 2, reason: "x" }], resizes: [], reservations: [], notes: [], again: true } : { starts: [], resizes: [{ jobId: 1, from: 2, to: 3, rule: "grow", reason: "y" }], reservations: [], notes: [] };
    try {
      expect(() => run([rigid(1, 0, 2, 10)], "easy")).toThrow(/policy easy .*job 1: grow 2 -> 3 nodes: the job cannot be resized now/);
    } finally {
      (POLICY_TABLE.easy as { plan: unknown }).plan = orig;
    }
  });

  test("a complete policy plans once per instant unless its pass says again", () => {
    const jobs = [rigid(1, 0, 2, 10), rigid(2, 0, 2, 10)];
    // EASY starts both at 0 in one pass; both end at 10: one pass per instant.
    const easy = run(jobs, "easy");
    expect(easy.jobs.map((j) => j.start)).toEqual([0, 0]);
    expect(easy.passes).toBe(2);
    const orig = POLICY_TABLE.easy.plan;
    // A pass that starts only the first waiting job: it starts the next at this instant only if it says again.
    const firstOnly = (again: boolean) => (i: PassInput) => ({ starts: i.pending.slice(0, 1).map((j) => ({ jobId: j.id, nodes: j.minNodes, reason: "x" })), resizes: [], reservations: [], notes: [], again: again && i.pending.length > 1 });
    try {
      (POLICY_TABLE.easy as { plan: (i: PassInput) => PassPlan }).plan = firstOnly(true);
      expect(run(jobs, "easy").jobs.map((j) => j.start)).toEqual([0, 0]);
      (POLICY_TABLE.easy as { plan: (i: PassInput) => PassPlan }).plan = firstOnly(false);
      expect(run(jobs, "easy").jobs.map((j) => j.start)).toEqual([0, 10]);
    } finally {
      (POLICY_TABLE.easy as { plan: unknown }).plan = orig;
    }
  });

  test("jobs larger than the cluster are left out of the workload with a reason", () => {
    const w = buildWorkload([{ id: 1, line: 4, submit: 0, runtime: 10, procs: 64, estimate: 10 }], { nodes: 16, coresPerNode: 2, malleable: 0, seed: 1 });
    expect(w.jobs).toEqual([]);
    expect(w.skipped[0]).toMatchObject({ line: 4 });
    expect(w.skipped[0]!.message).toContain("needs 32 nodes");
  });
});
