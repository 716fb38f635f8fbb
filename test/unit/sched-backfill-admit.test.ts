/** ebb's admit-by-shrink for jobs that would backfill (issue 35): plain data. */
import { describe, expect, test } from "bun:test";
import { resolveConfig } from "../../src/sched/config.ts";
import { atMinimum, backfillWants, donorFloor } from "../../src/sched/policies/backfill-admit.ts";
import { planEbb } from "../../src/sched/policies/ebb.ts";
import type { JobState, PassInput, PendingJob } from "../../src/sched/types.ts";
import { NOW, runningJob } from "../support/sched-data.ts";

const config = resolveConfig({ policy: "ebb" });

const job = (id: number, nodes: number, mtct: number | undefined, remaining: number, extra: Partial<JobState> = {}) => runningJob(id, nodes, mtct, remaining, { minNodes: 2, ...extra });
const rigid = (id: number, nodes: number, remaining: number) => job(id, nodes, undefined, remaining, { elastic: false, minNodes: nodes, maxNodes: nodes });
const pend = (id: number, nodes: number, timeLimit = 600): PendingJob => ({ id, minNodes: nodes, maxNodes: nodes, timeLimit, submitTime: 1000 + id });
const input = (upNodes: number, idleNodes: number, running: JobState[], pending: PendingJob[]): PassInput => ({ now: NOW, upNodes, idleNodes, running, pending, config });

describe("backfillWants: the jobs behind the head that would backfill but for the nodes", () => {
  const res = { jobId: 5, start: NOW + 36_000_000, nodes: 16 };
  // 2 nodes at +300 s, 4 at +600 s (columns in end order).
  const ends = { length: 2, ends: Float64Array.of(NOW + 300_000, NOW + 600_000), nodes: Float64Array.of(2, 4) };
  test("free nodes serve the queue in order; a job that lacks nodes waits until enough jobs end", () => {
    const q = [pend(5, 16), pend(6, 1, 60), pend(7, 4, 60), pend(8, 2, 60)];
    const w = backfillWants(q, new Set(), 5, res, NOW, 2, 0, 10_000, ends);
    // Job 6 takes 1 of the 2 free nodes; job 7 lacks 3 (1 free + 2 at +300 s + 4 at +600 s: +600 s); job 8 fits in the 1 left? no: it asks 2, lacks 1, +300 s.
    expect(w.map((x) => [x.job.id, x.need, x.otherwise - NOW])).toEqual([
      [7, 3, 600_000],
      [8, 1, 300_000],
    ]);
  });
  test("a job that would run past the reservation only if it fits in the nodes the reservation leaves over, and then not before it", () => {
    const q = [pend(5, 16), pend(6, 2, 100_000), pend(7, 3, 100_000)];
    const w = backfillWants(q, new Set(), 5, res, NOW, 0, 2, 10_000, ends);
    expect(w.map((x) => [x.job.id, x.need, x.otherwise - NOW, x.fromExtra])).toEqual([[6, 2, 36_000_000, 2]]);
  });
  test("at most `limit` jobs", () => {
    const q = [pend(5, 16), pend(6, 4, 60), pend(7, 4, 60), pend(8, 4, 60)];
    expect(backfillWants(q, new Set(), 5, res, NOW, 0, 0, 10_000, ends, 2).map((x) => x.job.id)).toEqual([6, 7]);
  });
  test("jobs ahead of the head and jobs starting in this pass are not listed", () => {
    const q = [pend(4, 1, 60), pend(5, 16), pend(6, 1, 60)];
    expect(backfillWants(q, new Set([6]), 5, res, NOW, 0, 0, 10_000, ends)).toEqual([]);
  });
});

describe("atMinimum: a malleable job's want at its minimum", () => {
  const res = { jobId: 5, start: NOW + 36_000_000, nodes: 16 };
  const mall = (id: number, asked: number, min: number, timeLimit = 60): PendingJob => ({ id, minNodes: min, maxNodes: 16, preferredNodes: asked, elastic: true, timeLimit, submitTime: 1000 + id });
  test("it lacks fewer nodes there, and its start otherwise moves earlier by what it loses on them", () => {
    // Asks 8, 3 free (lacks 5); at its minimum 2 it lacks none: nothing to admit.
    expect(atMinimum({ job: mall(6, 8, 2), need: 5, otherwise: NOW + 600_000, fromExtra: 0 }, NOW, 10_000, res, 0, 4, 4)).toBeUndefined();
    // 0 free: it lacks 2 at its minimum; 60 s at 4 times as long loses 180 s.
    expect(atMinimum({ job: mall(6, 8, 2), need: 8, otherwise: NOW + 600_000, fromExtra: 0 }, NOW, 10_000, res, 0, 4, 4)).toEqual({ job: mall(6, 8, 2), need: 2, otherwise: NOW + 420_000, fromExtra: 0, nodes: 2 });
  });
  test("the reservation holds: it ends before it at its minimum (by the bound), or fits in the nodes it leaves over", () => {
    const long = mall(6, 8, 2, 10_000);
    const w = { job: long, need: 8, otherwise: NOW + 36_000_000, fromExtra: 8 };
    // 10,000 s at 4 times as long runs past +36,000 s: only in 2 extra nodes.
    expect(atMinimum(w, NOW, 10_000, res, 1, 4, 4)).toBeUndefined();
    expect(atMinimum(w, NOW, 10_000, res, 2, 4, 4)).toMatchObject({ need: 2, fromExtra: 2 });
    // At 3 times as long (its model) it ends in time and takes none of them.
    expect(atMinimum(w, NOW, 10_000, res, 0, 3, 3)).toMatchObject({ need: 2, fromExtra: 0 });
  });
  test("none for a rigid job, one bound to sizes, or one asking its minimum", () => {
    const w = (job: PendingJob) => ({ job, need: 8, otherwise: NOW + 600_000, fromExtra: 0 });
    expect(atMinimum(w(pend(6, 8)), NOW, 10_000, res, 0, 4, 4)).toBeUndefined();
    expect(atMinimum(w({ ...mall(6, 8, 2), sizes: [2, 4, 8] }), NOW, 10_000, res, 0, 4, 4)).toBeUndefined();
    expect(atMinimum(w(mall(6, 8, 8)), NOW, 10_000, res, 0, 1, 1)).toBeUndefined();
  });
});

describe("donorFloor: how far a running job may shrink for a backfill", () => {
  // Linear: k nodes take 600 s × 8 / k, plus a 10 s adaptation.
  const endAt = (k: number) => NOW + (600 * (8 / k) + 10) * 1000;
  test("a job the reservation does not count on (it ends after it) may go to its minimum", () => {
    expect(donorFloor(8, 2, NOW + 600_000, NOW + 500_000, endAt)).toBe(2);
  });
  test("a job it counts on only as far as it still ends before the reservation", () => {
    // 8 -> 6: 810 s, 5: 970 s, 4: 1210 s; the reservation at +1000 s.
    expect(donorFloor(8, 2, NOW + 600_000, NOW + 1_000_000, endAt)).toBe(5);
    // At 7 nodes: 696 s, past +690 s.
    expect(donorFloor(8, 2, NOW + 600_000, NOW + 690_000, endAt)).toBe(8);
  });
});

describe("planEbb: a short job behind a blocked head is admitted by a shrink the reservation survives", () => {
  test("it is, when its wait is worth more than the shrunk job's stretch", () => {
    // 16 nodes: malleable job 1 (8 nodes, 600 s left) and rigid job 2 (8 nodes, 10 h). Head job 5
    // (16) is reserved at +36,000 s and cannot be admitted (job 1 has 6 nodes above its minimum).
    // Job 6 (2 nodes, 60 s) would wait 600 s for job 1's end; 8 -> 6 nodes costs job 1 ~209 s.
    const plan = planEbb(input(16, 0, [job(1, 8, 0.005, 600), rigid(2, 8, 36_000)], [pend(5, 16), pend(6, 2, 60)]));
    expect(plan.starts).toEqual([]);
    expect(plan.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 8, to: 6, rule: "admit" })]);
    expect(plan.resizes[0]!.reason).toMatch(/^backfill: job 6 waits/);
    expect(plan.reservations[0]).toMatchObject({ jobId: 5, start: NOW + 36_000_000 });
  });
  test("the jobs ahead of it that no shrink can serve do not keep it waiting (up to 16 are tried)", () => {
    // The same, with five 12-node jobs (more than job 1 can give) between the head and job 6.
    const big = [7, 8, 9, 10, 11].map((id) => ({ ...pend(id, 12, 60), submitTime: 1000 + 5.5 }));
    const plan = planEbb(input(16, 0, [job(1, 8, 0.005, 600), rigid(2, 8, 36_000)], [pend(5, 16), ...big, { ...pend(6, 2, 60), submitTime: 1010 }]));
    expect(plan.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 8, to: 6, rule: "admit" })]);
    expect(plan.resizes[0]!.reason).toMatch(/^backfill: job 6 waits/);
  });
  test("not when the shrunk job would then end after the reservation that counts on it", () => {
    // The same, but job 2 ends at +700 s: the reservation counts on job 1 ending by then, and at 7
    // nodes it is predicted to end at ~760 s (with the margin).
    const plan = planEbb(input(16, 0, [job(1, 8, 0.005, 600), rigid(2, 8, 700)], [pend(5, 16), pend(6, 2, 60)]));
    expect(plan.resizes).toEqual([]);
    expect(plan.reservations[0]).toMatchObject({ jobId: 5, start: NOW + 700_000 });
  });
  test("a malleable job is admitted at its minimum when too few nodes can be given for its size", () => {
    // Job 6 asks 8 nodes (minimum 2, 60 s): job 1 can give only 2 (its minimum is 6). At 2 nodes it
    // runs about 4 times as long (240 s) but starts ~600 s sooner than when job 1 ends.
    const plan = planEbb(input(16, 0, [job(1, 8, 0.005, 600, { minNodes: 6 }), rigid(2, 8, 36_000)], [pend(5, 16), { ...pend(6, 2, 60), maxNodes: 16, preferredNodes: 8, elastic: true }]));
    expect(plan.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 8, to: 6, rule: "admit" })]);
    expect(plan.resizes[0]!.reason).toMatch(/^backfill \(on 2 of its 8 nodes, its minimum\): job 6 waits/);
    expect(plan.reservations[0]).toMatchObject({ jobId: 5, start: NOW + 36_000_000 });
  });
  test("not when its wait is shorter than the stretch", () => {
    // Job 1 has 6,000 s left but is expected to end in 100 s (its estimate): job 6 would wait 100 s.
    const plan = planEbb(input(16, 0, [job(1, 8, 0.005, 6000, { expectedEnd: NOW + 100_000 }), rigid(2, 8, 36_000)], [pend(5, 16), pend(6, 2, 60)]));
    expect(plan.resizes).toEqual([]);
  });
});
