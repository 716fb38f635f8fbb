import { describe, expect, test } from "bun:test";
import { amdahl } from "../../src/model/amdahl.ts";
import { resolveConfig, type PolicyName } from "../../src/sched/config.ts";
import { equipartition, maxSpeedup } from "../../src/sched/policies/apm.ts";
import { planPass, POLICY_TABLE } from "../../src/sched/policies/index.ts";
import { expansionHelped } from "../../src/sched/policies/reshape.ts";
import type { JobState, PassInput, PendingJob } from "../../src/sched/types.ts";

const NOW = 1_000_000;
const cfg = (policy: PolicyName) => resolveConfig({ policy, settle: 0 });
function running(id: number, nodes: number, extra: Partial<JobState> = {}): JobState {
  return { id, nodes, minNodes: 1, maxNodes: 32, elastic: true, submitTime: id, startTime: NOW - 1000, timeLimit: 3600, samples: [], adapting: false, ...extra };
}
const pending = (id: number, min: number, max = min, extra: Partial<PendingJob> = {}): PendingJob => ({ id, minNodes: min, maxNodes: max, timeLimit: 600, submitTime: NOW + id, ...extra });
const input = (policy: PolicyName, over: Partial<PassInput>): PassInput => ({ now: NOW, upNodes: 16, idleNodes: 0, running: [], pending: [], config: cfg(policy), ...over });

describe("static baselines", () => {
  test("fcfs never starts a job ahead of a blocked one; easy backfills", () => {
    const over = { idleNodes: 4, running: [running(1, 12, { elastic: false, expectedEnd: NOW + 100_000 })], pending: [pending(2, 8), pending(3, 2)] };
    expect(planPass(input("fcfs", over)).starts).toEqual([]);
    expect(planPass(input("easy", over)).starts).toEqual([{ jobId: 3, nodes: 2, reason: "backfill" }]);
  });

  test("static policies run a moldable job rigid at its requested size and never resize", () => {
    const p = planPass(input("easy", { idleNodes: 16, pending: [pending(2, 2, 16, { preferredNodes: 4 })], running: [] }));
    expect(p.starts).toEqual([{ jobId: 2, nodes: 4, reason: "fcfs" }]);
    expect(p.resizes).toEqual([]);
  });
});

describe("APM", () => {
  test("equipartition: floor(P/N) each, the oldest P mod N get one more", () => {
    const jobs = [3, 1, 2].map((age, i) => ({ id: i + 1, age, min: 1, max: 8 }));
    expect(equipartition(jobs, 8)).toEqual([2, 3, 3]);
    expect(equipartition(jobs, 9)).toEqual([3, 3, 3]);
  });

  test("equipartition respects [min, max]", () => {
    const jobs = [
      { id: 1, age: 1, min: 1, max: 2 },
      { id: 2, age: 2, min: 5, max: 9 },
      { id: 3, age: 3, min: 1, max: 9 },
    ];
    expect(equipartition(jobs, 12)).toEqual([2, 5, 5]);
    expect(equipartition(jobs, 100)).toEqual([2, 9, 9]);
  });

  test("maxS*: processors go where the differential speedup is largest, none past zero gain", () => {
    const linear = amdahl(1000, 0);
    const serial = amdahl(1000, 0.9);
    const jobs = [
      { id: 1, age: 1, min: 1, max: 16, model: serial },
      { id: 2, age: 2, min: 1, max: 16, model: linear },
    ];
    expect(maxSpeedup(jobs, 10)).toEqual([1, 9]);
    // A model whose runtime rises past 3 processors stops there even with processors left.
    const peaked = { a: 0, b: 10, c: 90 };
    expect(maxSpeedup([{ id: 1, age: 1, min: 1, max: 16, model: peaked }], 10)).toEqual([3]);
  });

  test("an arrival shrinks the running jobs to make its share (instant when free)", () => {
    const p = planPass(input("apm-equi", { upNodes: 8, running: [running(1, 8, { maxNodes: 8 })], pending: [pending(2, 1, 8, { elastic: true })] }));
    expect(p.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 8, to: 4, rule: "equi" })]);
    expect(p.starts).toEqual([]);
    expect(p.reservations[0]).toMatchObject({ jobId: 2 });
  });
});

describe("DRMS RS", () => {
  test("jobs start at their minimum; running jobs above theirs shrink for a waiting job", () => {
    const p = planPass(input("drms-rs", { running: [running(1, 10, { minNodes: 4 }), running(2, 6, { minNodes: 2 })], pending: [pending(3, 5)] }));
    expect(p.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 10, to: 5, rule: "admit" })]);
    const q = planPass(input("drms-rs", { idleNodes: 16, pending: [pending(3, 2, 8, { elastic: true })] }));
    expect(q.starts).toEqual([{ jobId: 3, nodes: 2, reason: "fcfs" }]);
  });

  test("with nothing waiting, idle nodes are dealt out one at a time, oldest first", () => {
    const p = planPass(input("drms-rs", { idleNodes: 3, running: [running(1, 4), running(2, 4)] }));
    expect(p.resizes.map((r) => [r.jobId, r.to])).toEqual([
      [1, 6],
      [2, 5],
    ]);
  });
});

describe("ReSHAPE", () => {
  const profile = (...pts: [number, number][]) => pts.map(([nodes, iterTime]) => ({ nodes, iterTime }));

  test("expands to the next valid size while the iteration time improves", () => {
    const p = planPass(input("reshape", { idleNodes: 10, running: [running(1, 4, { sizes: [2, 4, 6, 9], profile: profile([2, 130], [4, 112]) })] }));
    expect(p.resizes).toEqual([expect.objectContaining({ jobId: 1, to: 6, rule: "expand" })]);
  });

  test("reverts when the last expansion made it slower, and then stays", () => {
    const r = planPass(input("reshape", { idleNodes: 10, running: [running(1, 16, { profile: profile([12, 69.85], [16, 74.91]) })] }));
    expect(r.resizes).toEqual([expect.objectContaining({ to: 12, rule: "revert" })]);
    expect(expansionHelped(profile([12, 69.85], [16, 74.91], [12, 69.85]))).toBe(false);
    const s = planPass(input("reshape", { idleNodes: 10, running: [running(1, 12, { profile: profile([12, 69.85], [16, 74.91], [12, 69.85]) })] }));
    expect(s.resizes).toEqual([]);
  });

  test("shrinks to a size it ran at to admit the head of the queue", () => {
    const p = planPass(input("reshape", { running: [running(1, 12, { profile: profile([4, 100], [8, 60], [12, 50]) })], pending: [pending(2, 4)] }));
    expect(p.resizes).toEqual([expect.objectContaining({ jobId: 1, to: 8, rule: "admit" })]);
  });

  test("no decision without a measurement at the current size", () => {
    const p = planPass(input("reshape", { idleNodes: 10, running: [running(1, 6, { profile: profile([4, 100]) })] }));
    expect(p.resizes).toEqual([]);
  });
});

test("every policy is registered under its name", () => {
  for (const [name, p] of Object.entries(POLICY_TABLE)) expect(p.name).toBe(name as PolicyName);
});
