/**
 * Progress instead of the time limit (EPOP, issue 18): the controller hands ERS each running
 * job's expected end, min(start + limit, now + what its progress says is left). Time balancing
 * (rule 1) shrinks the jobs nearest their end first, so progress changes which job gives nodes.
 */
import { expect, test } from "bun:test";
import { resolveConfig } from "../../src/sched/config.ts";
import { planErs } from "../../src/sched/policies/ers.ts";
import type { JobState, PassInput } from "../../src/sched/types.ts";

const NOW = 10_000_000;
const config = resolveConfig({ policy: "ers", minSamples: 2, settle: 0, lower: 0, upper: 1 });
const samples = [
  { time: NOW - 2_000, mtct: 0.05 },
  { time: NOW - 1_000, mtct: 0.05 },
];
const running = (id: number, limit: number, extra: Partial<JobState> = {}): JobState => ({
  id, nodes: 4, minNodes: 1, maxNodes: 9, elastic: true, submitTime: id, startTime: NOW - 10_000, timeLimit: limit, samples, adapting: false, sizes: [1, 4, 9], ...extra,
});
// 9 nodes: two Cannons on 4 each, a third waiting for 4 (one node idle).
const input = (a: JobState, b: JobState): PassInput => ({
  now: NOW, upNodes: 9, idleNodes: 1, running: [a, b], pending: [{ id: 3, minNodes: 4, maxNodes: 4, timeLimit: 120, submitTime: NOW, sizes: [4] }], config,
});

test("by time limits the job with the shorter limit shrinks; with progress, the one that ends sooner by its progress does", () => {
  // Job 1: limit 300 s, job 2: limit 600 s. Only limits known: job 1 is nearer its end.
  const byLimit = planErs(input(running(1, 300), running(2, 600)));
  expect(byLimit.resizes.map((r) => [r.jobId, r.to, r.rule])).toEqual([[1, 1, "balance"]]);
  // Job 2's progress says it ends in 40 s (its expected end comes from progress, the limit caps it).
  const byProgress = planErs(input(running(1, 300), running(2, 600, { expectedEnd: NOW + 40_000 })));
  expect(byProgress.resizes.map((r) => [r.jobId, r.to, r.rule])).toEqual([[2, 1, "balance"]]);
  expect(byProgress.resizes[0]!.reason).toContain("job 3 waits for 3 more nodes");
});
