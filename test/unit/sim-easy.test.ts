/**
 * Textbook EASY in the simulator, on small traces computed by hand: the shadow time counts every
 * job ending then, a never-resized job is expected to end at start + requested time (never at its
 * true end), and `check` holds a policy to the reservation its first waiting job got.
 */
import { describe, expect, test } from "bun:test";
import { planBatchCounts, shadowTime } from "../../src/sched/batch.ts";
import { resolveConfig, type PolicyName } from "../../src/sched/config.ts";
import { POLICY_TABLE } from "../../src/sched/policies/index.ts";
import type { PassInput, PassPlan, PendingJob } from "../../src/sched/types.ts";
import { simulate } from "../../src/sim/engine.ts";
import { amdahlWork, type SimJob } from "../../src/sim/job.ts";

/** A rigid job that runs `runtime` seconds but asked for `estimate`. */
function rigid(id: number, submit: number, nodes: number, runtime: number, estimate = runtime): SimJob {
  return { id, submit, nodes, minNodes: nodes, maxNodes: nodes, malleable: false, estimate, work: amdahlWork(runtime * nodes, 0), resizeCost: () => 0 };
}
const run = (jobs: SimJob[], nodes: number, policy: PolicyName = "easy") => simulate(jobs, { nodes, config: resolveConfig({ policy }), check: true });
const starts = (r: ReturnType<typeof run>) => Object.fromEntries(r.jobs.map((j) => [j.id, j.start]));
const pend = (id: number, nodes: number, timeLimit: number): PendingJob => ({ id, minNodes: nodes, maxNodes: nodes, timeLimit, submitTime: id });

describe("shadow time: ties", () => {
  test("every job ending at the shadow time adds its nodes to the extra nodes", () => {
    // 13 nodes, 3 free; three jobs (4, 3, 3 nodes) all end at +100 s. The head wants 9:
    // 3 + 4 = 7, + 3 = 10 >= 9 reaches the shadow time; the third job ending then adds 3 more,
    // so extra = 13 - 9 = 4 (not 1).
    const running = [
      { nodes: 4, expectedEnd: 100_000 },
      { nodes: 3, expectedEnd: 100_000 },
      { nodes: 3, expectedEnd: 100_000 },
    ];
    expect(shadowTime(running, 3, 9, 0)).toEqual({ time: 100_000, extra: 4 });
    // A long 3-node job (1,000 s) may then backfill into the extra nodes; with extra = 1 it could not.
    const plan = planBatchCounts({ now: 0, upNodes: 13, freeNodes: 3, running, pending: [pend(1, 9, 50), pend(2, 3, 1000)] });
    expect(plan.reservation).toMatchObject({ jobId: 1, start: 100_000, nodes: 9 });
    expect(plan.starts).toEqual([{ jobId: 2, nodes: 3, reason: "backfill" }]);
    expect(plan.extra).toBe(1);
  });

  test("a job ending after the shadow time does not count", () => {
    const running = [
      { nodes: 4, expectedEnd: 100_000 },
      { nodes: 3, expectedEnd: 100_000 },
      { nodes: 3, expectedEnd: 100_001 },
    ];
    expect(shadowTime(running, 3, 9, 0)).toEqual({ time: 100_000, extra: 1 });
  });

  test("jobs already past their expected end all count as ending now", () => {
    const running = [
      { nodes: 2, expectedEnd: 10_000 },
      { nodes: 2, expectedEnd: 20_000 },
    ];
    expect(shadowTime(running, 0, 2, 50_000)).toEqual({ time: 50_000, extra: 2 });
  });

  test("the running jobs' endings as columns in end order give the reservation the list gives, with the jobs started in the pass merged in", () => {
    // 12 nodes, 4 free: job 1 (3 nodes, 30 s) starts now and ends at +30 s, a running job ends then
    // too (the tie counts both), others at +20 s and +100 s. Job 2 wants 9: 1 + 2 (at +20 s) +
    // 3 + 4 (at +30 s) = 10 >= 9, one node extra; job 3 (1 node, 1,000 s) backfills into it.
    const running = [
      { nodes: 4, expectedEnd: 30_000 },
      { nodes: 2, expectedEnd: 20_000 },
      { nodes: 2, expectedEnd: 100_000 },
    ];
    const pending = [pend(1, 3, 30), pend(2, 9, 50), pend(3, 1, 1000)];
    const columns = { length: 3, ends: Float64Array.of(20_000, 30_000, 100_000), nodes: Float64Array.of(2, 4, 2) };
    const list = planBatchCounts({ now: 0, upNodes: 12, freeNodes: 4, running, pending });
    const byEnd = planBatchCounts({ now: 0, upNodes: 12, freeNodes: 4, running: [], runningByEnd: columns, pending });
    expect(list.reservation).toMatchObject({ jobId: 2, start: 30_000, nodes: 9 });
    expect(list.starts.map((s) => [s.jobId, s.reason])).toEqual([
      [1, "fcfs"],
      [3, "backfill"],
    ]);
    expect(list.extra).toBe(0);
    expect(byEnd).toEqual(list);
    // Nothing started before the head, and the head's nodes never free: no reservation time.
    const never = { now: 0, upNodes: 12, freeNodes: 1, pending: [pend(4, 12, 10)] };
    expect(planBatchCounts({ ...never, running: [], runningByEnd: columns }).reservation).toEqual(planBatchCounts({ ...never, running }).reservation);
    expect(planBatchCounts({ ...never, running }).reservation?.start).toBe(Number.POSITIVE_INFINITY);
  });

  test("in the simulator: a long job backfills into the nodes of every job ending at the shadow time", () => {
    // 6 nodes. Jobs 1 (3 nodes), 2 and 3 (1 node each) run 100 s from 0; 1 node is free. Job 4
    // (4 nodes) arrives at 1: shadow 100 (1 + 3 = 4 nodes), and jobs 2 and 3 end then too, so
    // 2 nodes are extra. Job 5 (1 node, 500 s) arrives at 2 and backfills on the free node at once
    // (counting only up to job 1 would leave no extra node and make it wait until 100).
    const r = run([rigid(1, 0, 3, 100), rigid(2, 0, 1, 100), rigid(3, 0, 1, 100), rigid(4, 1, 4, 10), rigid(5, 2, 1, 500)], 6);
    expect(starts(r)).toEqual({ 1: 0, 2: 0, 3: 0, 4: 100, 5: 2 });
    expect(r.violations).toEqual([]);
  });
});

describe("the scheduler knows a never-resized job's requested time, not its run time", () => {
  test("a short job backfills before the reservation the requested time implies", () => {
    // 4 nodes. Job 1 (2 nodes) runs 100 s but asked for 300 s. Job 2 (4 nodes) waits: reserved
    // at 300 (start + requested time). Job 3 (2 nodes, 250 s) arrives at 10 and ends by 260 <= 300:
    // it backfills. Were the true end (100) leaked, the shadow would be 100 and job 3 would wait.
    const r = run([rigid(1, 0, 2, 100, 300), rigid(2, 0, 4, 50), rigid(3, 10, 2, 250)], 4);
    expect(starts(r)).toEqual({ 1: 0, 2: 260, 3: 10 });
    expect(r.heads).toBe(1);
    expect(r.violations).toEqual([]);
  });

  test("the reservation does not slide while the running job makes progress", () => {
    // Job 1 (4 nodes, asked 1000 s, runs 1000 s). Job 2 (4 nodes) is reserved at 1000. Jobs 3..6
    // (1 node, 10 s... arriving every 100 s) cannot backfill: no node is free. Job 2 starts at 1000
    // exactly, the reservation it got at 0.
    const jobs = [rigid(1, 0, 4, 1000), rigid(2, 0, 4, 10), ...[3, 4, 5, 6].map((id) => rigid(id, id * 100, 1, 10))];
    const r = run(jobs, 4);
    expect(starts(r)).toEqual({ 1: 0, 2: 1000, 3: 1010, 4: 1010, 5: 1010, 6: 1010 });
    expect(r.violations).toEqual([]);
  });
});

describe("check: EASY's promise", () => {
  test("a policy that starts a long job on the reserved nodes is reported: job, reservation, actual start", () => {
    // 4 nodes. Job 1 (2 nodes, 100 s); job 2 (4 nodes) is first in line, reserved at 100; job 3
    // (2 nodes, 500 s) arrives at 5. A broken EASY that starts every job that fits delays job 2
    // to 505.
    const orig = POLICY_TABLE.easy.plan;
    (POLICY_TABLE.easy as { plan: (i: PassInput) => PassPlan }).plan = (input) => {
      const plan = orig(input);
      let free = input.idleNodes - plan.starts.reduce((n, s) => n + s.nodes, 0);
      for (const j of input.pending) {
        if (plan.starts.some((s) => s.jobId === j.id) || j.minNodes > free) continue;
        plan.starts.push({ jobId: j.id, nodes: j.minNodes, reason: "greedy" });
        free -= j.minNodes;
      }
      return plan;
    };
    try {
      const r = run([rigid(1, 0, 2, 100), rigid(2, 0, 4, 10), rigid(3, 5, 2, 500)], 4);
      expect(starts(r)).toEqual({ 1: 0, 2: 505, 3: 5 });
      expect(r.violations).toEqual([{ job: 2, reservation: 100, start: 505 }]);
    } finally {
      (POLICY_TABLE.easy as { plan: unknown }).plan = orig;
    }
    // The same trace under real EASY: job 3 waits behind job 2.
    const ok = run([rigid(1, 0, 2, 100), rigid(2, 0, 4, 10), rigid(3, 5, 2, 500)], 4);
    expect(starts(ok)).toEqual({ 1: 0, 2: 100, 3: 110 });
    expect(ok.violations).toEqual([]);
  });
});
