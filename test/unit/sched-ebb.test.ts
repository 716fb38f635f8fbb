/** The default policy `ebb` on plain data: shrink only to start waiting jobs when it pays, lend idle nodes, keep EASY's reservation. */
import { describe, expect, test } from "bun:test";
import { resolveConfig } from "../../src/sched/config.ts";
import { ebbQuiet, planEbb, priorityWeight } from "../../src/sched/policies/ebb.ts";
import { planEasy } from "../../src/sched/policies/static.ts";
import type { JobState, PassInput, PendingJob } from "../../src/sched/types.ts";
import { profileModel, speedOf } from "../../src/sched/worth.ts";
import { NOW, runningJob } from "../support/sched-data.ts";

const config = resolveConfig({ policy: "ebb" });

const job = runningJob;
const pend = (id: number, nodes: number, timeLimit = 600): PendingJob => ({ id, minNodes: nodes, maxNodes: nodes, timeLimit, submitTime: 1000 + id });
const input = (upNodes: number, idleNodes: number, running: JobState[], pending: PendingJob[] = []): PassInput => ({ now: NOW, upNodes, idleNodes, running, pending, config });

describe("nothing waits", () => {
  test("an inefficient job (MTCT 0.3) on a full cluster is not shrunk", () => {
    expect(planEbb(input(8, 0, [job(1, 8, 0.3, 3600)])).resizes).toEqual([]);
  });

  test("an efficient job grows into the idle nodes; the reason carries the numbers", () => {
    const plan = planEbb(input(16, 8, [job(1, 8, 0.005, 3600)]));
    expect(plan.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 8, to: 16, rule: "grow" })]);
    // 8 -> 16 nodes at MTCT 0.005: T ratio (0.5 + 0.005) / 1.005 = 0.5025, remaining 3600 -> 1809 s.
    expect(plan.resizes[0]!.reason).toMatch(/remaining 3600 s -> 1809 s at 16 nodes, predicted gain 1791 s > 2 adaptations of 10 s/);
  });

  test("loans with nobody waiting leave nothing for another pass at this instant; an admit asks for one", () => {
    expect(planEbb(input(16, 8, [job(1, 8, 0.005, 3600)])).again).toBe(false);
    const admit = planEbb(input(16, 0, [job(1, 16, 0.005, 36_000, { minNodes: 4 })], [pend(5, 4)]));
    expect(admit.resizes).toEqual([expect.objectContaining({ rule: "admit" })]);
    expect(admit.again).toBe(true);
  });

  test("nobody waiting, no loan out and no idle node: the pass plans nothing, as ebbQuiet says (a replay skips it)", () => {
    const plan = planEbb(input(16, 0, [job(1, 8, 0.3, 3600), job(2, 8, 0.005, 3600)]));
    expect(plan.starts).toEqual([]);
    expect(plan.resizes).toEqual([]);
    expect(ebbQuiet({ waiting: 0, idle: 0, lent: () => false, growable: () => true })).toBe(true);
    // Idle nodes with a job that may grow, a loan out, or a job waiting: not provably quiet.
    expect(ebbQuiet({ waiting: 0, idle: 8, lent: () => false, growable: () => true })).toBe(false);
    expect(ebbQuiet({ waiting: 0, idle: 8, lent: () => false, growable: () => false })).toBe(true);
    expect(ebbQuiet({ waiting: 0, idle: 0, lent: () => true, growable: () => false })).toBe(false);
    expect(ebbQuiet({ waiting: 1, idle: 0, lent: () => false, growable: () => false })).toBe(false);
  });

  test("starts alone ask for no other pass at this instant (the next instant's plans what it would)", () => {
    const plan = planEbb(input(16, 8, [job(1, 8, undefined, 3600)], [pend(5, 4)]));
    expect(plan.starts).toEqual([expect.objectContaining({ jobId: 5, nodes: 4 })]);
    expect(plan.again).toBe(false);
  });

  test("a grow that does not pay for its adaptation and the one giving the nodes back is not made", () => {
    expect(planEbb(input(16, 8, [job(1, 8, 0.005, 30)])).resizes).toEqual([]);
  });

  test("a job whose speed is unknown (no samples, no profile, no model) stays rigid", () => {
    expect(planEbb(input(16, 8, [job(1, 8, undefined, 3600)])).resizes).toEqual([]);
  });

  test("idle nodes go where they save most: the efficient job gets more of them", () => {
    const plan = planEbb(input(24, 8, [job(1, 8, 0.005, 3600), job(2, 8, 1, 3600)]));
    const to = Object.fromEntries(plan.resizes.map((r) => [r.jobId, r.to - r.from]));
    expect((to[1] ?? 0) + (to[2] ?? 0)).toBe(8);
    expect(to[1]!).toBeGreaterThan(to[2] ?? 0);
  });
});

describe("a job waits", () => {
  test("running jobs give exactly the nodes it lacks when its gain exceeds their stretch", () => {
    // 16 nodes, job 1 holds all of them for 10 h more. Job 5 (4 nodes) is reserved at +36,000 s.
    // 16 -> 12 nodes: ratio (16/12 + 0.005) / 1.005 = 1.3317, stretch 0.3317 * 36000 + 10 adaptation
    // ~ 11,950 s < gain 36,000 - 10 (adaptation, then it starts) = 35,990 s.
    const plan = planEbb(input(16, 0, [job(1, 16, 0.005, 36_000, { minNodes: 4 })], [pend(5, 4)]));
    expect(plan.starts).toEqual([]);
    expect(plan.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 16, to: 12, rule: "admit" })]);
    expect(plan.resizes[0]!.reason).toMatch(/predicted gain 35990 s > stretch 1195\d s/);
    expect(plan.reservations[0]).toMatchObject({ jobId: 5, start: NOW + 10_000, fromJobs: [1] });
  });

  test("no shrink when the stretch exceeds the gain: it waits for its reservation, and the note says why", () => {
    // Reserved at +600 s (job 1's estimate), but shrinking job 1 would cost it ~1,194 s of its 3,600.
    const plan = planEbb(input(16, 0, [job(1, 16, 0.005, 3600, { minNodes: 4, expectedEnd: NOW + 600_000 })], [pend(5, 4)]));
    expect(plan.resizes).toEqual([]);
    expect(plan.reservations[0]).toMatchObject({ jobId: 5, start: NOW + 600_000 });
    // The stretch passes the most the head could gain before every node is priced: the note says so.
    expect(plan.notes[0]!.text).toMatch(/^not admitted by shrinking: 4 node\(s\) would start it at most 590 s before its reservation, the shrunk jobs would lose more than 1\d\d\d s$/);
  });

  test("the jobs behind it that no backfill starts before it count in its gain: they wait for its start too", () => {
    // As above (reserved at +600 s, a shrink costs job 1 ~1,194 s), with jobs of 14 nodes behind it
    // that run past the reservation and do not fit in the 12 nodes it leaves over: two of them make
    // the gain 3 x 590 s > the stretch. Jobs that fit in those 12 nodes could backfill: they do not count.
    const run = () => [job(1, 16, 0.005, 3600, { minNodes: 4, expectedEnd: NOW + 600_000 })];
    const plan = planEbb(input(16, 0, run(), [pend(5, 4), pend(6, 14, 3600), pend(7, 14, 3600)]));
    expect(plan.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 16, to: 12, rule: "admit" })]);
    expect(plan.resizes[0]!.reason).toMatch(/^job 5, with 2 job\(s\) behind that no backfill starts before it, waits until its reservation in 600 s: give 4 node\(s\) so it starts in about 10 s; predicted gain 1770 s > stretch 1\d\d\d s/);
    expect(plan.reservations[0]).toMatchObject({ jobId: 5, start: NOW + 10_000, fromJobs: [1] });
    // One such job: 2 x 590 s does not pay for the stretch; nor do jobs that fit in the 12 nodes left over.
    expect(planEbb(input(16, 0, run(), [pend(5, 4), pend(6, 14, 3600)])).resizes).toEqual([]);
    expect(planEbb(input(16, 0, run(), [pend(5, 4), pend(6, 12, 3600), pend(7, 12, 3600)])).resizes).toEqual([]);
  });

  test("the nodes taken come from where they cost least (the inefficient job gives them)", () => {
    const plan = planEbb(input(16, 0, [job(1, 8, 0.005, 36_000), job(2, 8, 2, 36_000)], [pend(5, 2)]));
    expect(plan.resizes).toEqual([expect.objectContaining({ jobId: 2, from: 8, to: 6, rule: "admit" })]);
  });

  test("with priorities, a running job's stretch weighs its priority against the waiting job's", () => {
    // The case above that is not admitted (gain at most 590 s, stretch ~1,194 s): a running job of a
    // tenth of the head's priority (a heavy user's, under fair share) counts ~119 s, and gives.
    const running = (priority: number) => job(1, 16, 0.005, 3600, { minNodes: 4, expectedEnd: NOW + 600_000, priority });
    const low = planEbb(input(16, 0, [running(100)], [{ ...pend(5, 4), priority: 1000 }]));
    expect(low.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 16, to: 12, rule: "admit" })]);
    expect(planEbb(input(16, 0, [running(1000)], [{ ...pend(5, 4), priority: 1000 }])).resizes).toEqual([]);
    // The nodes come from the lower priority first, even from the efficient job.
    const two = planEbb(input(16, 0, [job(1, 8, 0.005, 36_000, { priority: 1 }), job(2, 8, 2, 36_000, { priority: 1000 })], [{ ...pend(5, 2), priority: 1000 }]));
    expect(two.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 8, to: 6, rule: "admit" })]);
  });

  test("priorityWeight: the ratio of the priorities when both have one, else 1", () => {
    expect(priorityWeight(1000, 100)).toBe(0.1);
    expect(priorityWeight(100, 1000)).toBe(10);
    expect(priorityWeight(undefined, 100)).toBe(1);
    expect(priorityWeight(1000, undefined)).toBe(1);
    expect(priorityWeight(0, 5)).toBe(1);
  });

  test("idle nodes are not lent to a job that runs past the reservation, not even the extra ones: they are for backfilling", () => {
    // 16 nodes: rigid job 9 (8 nodes) ends at +1000 s; job 1 (4 nodes, at its minimum) runs 10 h;
    // 4 idle. Job 5 needs 10: reserved at +1000 s with 4 + 8 = 12 nodes, 2 extra. A loan of those 2
    // would not come back for a job that could backfill into them: job 1 gets none.
    const rigid = job(9, 8, undefined, 1000, { elastic: false, minNodes: 8, maxNodes: 8 });
    const plan = planEbb(input(16, 4, [rigid, job(1, 4, 0.005, 36_000, { minNodes: 4 })], [pend(5, 10)]));
    expect(plan.resizes).toEqual([]);
    expect(plan.reservations[0]).toMatchObject({ jobId: 5, start: NOW + 1_000_000 });
  });

  test("a job predicted to end before the reservation gets the idle nodes it counts on, not the extra ones", () => {
    // The same, but job 1 has 600 s left at 4 nodes and job 5 needs 14: reserved at +1000 s with
    // 4 + 8 + 4 = 16 nodes, 2 extra; of the 4 idle, it counts on 2. On 6 nodes job 1 ends in about
    // 400 s, before +1000 s, and gives those 2 back by then. The 2 extra stay idle.
    const rigid = job(9, 8, undefined, 1000, { elastic: false, minNodes: 8, maxNodes: 8 });
    const plan = planEbb(input(16, 4, [rigid, job(1, 4, 0.005, 600, { minNodes: 4 })], [pend(5, 14)]));
    expect(plan.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 4, to: 6, rule: "grow" })]);
    expect(plan.reservations[0]).toMatchObject({ jobId: 5, start: NOW + 1_000_000 });
  });

  test("behind the first waiting job, the shortest is backfilled first", () => {
    // 16 nodes: rigid job 9 (12 nodes) ends at +1000 s; 4 idle. Job 5 (16) is reserved at +1000 s.
    // Jobs 6 (900 s) and 7 (300 s) both fit in the 4 nodes and end before it; job 7 goes first.
    const rigid = job(9, 12, undefined, 1000, { elastic: false, minNodes: 12, maxNodes: 12 });
    const i = input(16, 4, [rigid], [pend(5, 16), pend(6, 4, 900), pend(7, 4, 300)]);
    expect(planEasy(i).starts.map((s) => s.jobId)).toEqual([6]);
    const plan = planEbb(i);
    expect(plan.starts.map((s) => s.jobId)).toEqual([7]);
    expect(plan.reservations[0]).toMatchObject({ jobId: 5, start: NOW + 1_000_000 });
  });

  test("with priorities, backfill follows the priority order; shortest first only between equal priorities", () => {
    // The same cluster; job 6 (900 s) is a light user's, jobs 7 (300 s) and 8 (200 s) a heavy user's.
    const rigid = job(9, 12, undefined, 1000, { elastic: false, minNodes: 12, maxNodes: 12 });
    const ranked = (p: number[]) => input(16, 4, [rigid], [{ ...pend(5, 16), priority: 900 }, ...[6, 7, 8].map((id, k) => ({ ...pend(id, 4, [900, 300, 200][k]), priority: p[k] }))]);
    expect(planEbb(ranked([800, 10, 10])).starts.map((s) => s.jobId)).toEqual([6]);
    expect(planEbb(ranked([10, 10, 10])).starts.map((s) => s.jobId)).toEqual([8]);
  });

  test("with no malleable job and the backfill candidates already shortest first, the same plan as EASY", () => {
    const rigid = (id: number, nodes: number, end: number) => job(id, nodes, undefined, end, { elastic: false, minNodes: nodes, maxNodes: nodes });
    const i = input(16, 3, [rigid(1, 8, 500), rigid(2, 5, 900)], [pend(5, 10), pend(6, 3, 100), pend(7, 2, 5000), pend(8, 1, 6000)]);
    const e = planEasy(i);
    const b = planEbb(i);
    expect(b.starts).toEqual(e.starts);
    expect(b.reservations).toEqual(e.reservations);
    expect(b.resizes).toEqual([]);
  });
});

describe("many jobs wait: a node-second has a price", () => {
  const queueOf = (n: number, nodes: number) => Array.from({ length: n }, (_, i) => pend(10 + i, nodes));

  const rigidRun = (id: number, nodes: number, end: number) => job(id, nodes, undefined, end, { elastic: false, minNodes: nodes, maxNodes: nodes });
  const running = () => [rigidRun(9, 4, 100), job(1, 6, 2, 36_000, { minNodes: 2 }), job(2, 6, 0.001, 36_000, { minNodes: 2 })];

  test("an inefficient job shrinks toward the size that uses fewest node-seconds; an efficient one keeps its nodes", () => {
    // 16 nodes, all busy; 20 jobs of 4 nodes wait, the first reserved at +100 s (job 9's end).
    // Job 1 at MTCT 2 (efficiency 1/3) saves node-seconds by shrinking; job 2 at MTCT 0.001 hardly does.
    // Neither ends before the reservation, so it does not count on their nodes.
    const plan = planEbb(input(16, 0, running(), queueOf(20, 4)));
    expect(plan.starts).toEqual([]);
    expect(plan.resizes.map((r) => r.jobId)).toEqual([1]);
    expect(plan.resizes[0]!.to).toBeLessThan(6);
    expect(plan.resizes[0]!.reason).toMatch(/^20 job\(s\) wait: a node-second is worth \d+\.\d{4} s of their summed turnaround; at \d+ nodes its work takes \d+ node-s fewer, the queue gains \d+ s > its stretch \d+ s/);
    expect(plan.reservations[0]).toMatchObject({ jobId: 10, start: NOW + 100_000 });
  });

  test("a job whose end the reservation counts on does not shrink past it", () => {
    // Same, but job 1 ends at +100 s with job 9 and the head needs all 10 of their nodes.
    const plan = planEbb(input(16, 0, [rigidRun(9, 4, 100), job(1, 6, 2, 100, { minNodes: 2 }), job(2, 6, 0.001, 36_000, { minNodes: 2 })], queueOf(20, 10)));
    expect(plan.resizes).toEqual([]);
  });

  test("the shrinks together free no more nodes than the waiting jobs lack, the most gain per node first", () => {
    // Jobs of 2 and 1 nodes wait (3 nodes lacking), none idle; the head is reserved at +100 s (job 9's end)
    // and not admitted (its 90 s are worth less than the stretch). Jobs 1 and 2 (MTCT 2) would each
    // shrink 6 -> 4 by price; together they give only 3.
    const run = () => [rigidRun(9, 4, 100), job(1, 6, 2, 36_000), job(2, 6, 2, 36_000)];
    const plan = planEbb(input(16, 0, run(), [pend(10, 2), pend(11, 1)]));
    expect(plan.resizes.map((r) => [r.jobId, r.from, r.to])).toEqual([
      [1, 6, 4],
      [2, 6, 5],
    ]);
    // With 8 nodes lacking, both shrink as far as their price says.
    expect(planEbb(input(16, 0, run(), [pend(10, 2), pend(11, 6)])).resizes.map((r) => r.to)).toEqual([4, 4]);
  });

  test("the same jobs with nothing waiting are not shrunk", () => {
    expect(planEbb(input(16, 0, running())).resizes).toEqual([]);
  });

  test("with priorities, a job's own seconds weigh its priority against the first waiting job's: a low one gives nodes a high one keeps", () => {
    // As above; job 2 at MTCT 0.05 saves too few node-seconds to shrink at the head's priority, but
    // at a hundredth of it (a heavy user's job, under fair share) its own time weighs that much less.
    // The jobs behind the head end before its reservation (60 s limits): none waits for its start
    // (`blockedBehind`), so its admit is not worth the stretch and the shrinks are by price.
    const run = (p2: number) => [rigidRun(9, 4, 100), job(1, 6, 2, 36_000, { minNodes: 2, priority: 1000 }), job(2, 6, 0.05, 36_000, { minNodes: 2, priority: p2 })];
    const queue = queueOf(20, 4).map((j) => ({ ...j, timeLimit: 60, priority: 1000 }));
    expect(planEbb(input(16, 0, run(1000), queue)).resizes.map((r) => r.jobId)).toEqual([1]);
    const low = planEbb(input(16, 0, run(10), queue));
    expect(low.resizes.map((r) => [r.jobId, r.to])).toEqual([
      [1, 2],
      [2, 2],
    ]);
    expect(low.resizes[1]!.reason).toMatch(/of their summed turnaround, \d+\.\d{4} s of its own time \(its priority is 1\.0 % of the first waiting job's\)/);
  });
});

describe("moldable starts", () => {
  const rigidRun = (id: number, nodes: number, end: number) => job(id, nodes, undefined, end, { elastic: false, minNodes: nodes, maxNodes: nodes });
  const mall = (id: number, min: number, want: number, timeLimit: number): PendingJob => ({ id, minNodes: min, maxNodes: want, preferredNodes: want, timeLimit, submitTime: 1000 + id, elastic: true });

  test("the head starts below its size when it then ends sooner than at its reservation", () => {
    // 8 idle, its 16 free at +3600 s: at 8 nodes it ends by +1200 s (linear bound) < +4200 s.
    const plan = planEbb(input(16, 8, [rigidRun(9, 8, 3600)], [mall(5, 2, 16, 600)]));
    expect(plan.starts).toEqual([expect.objectContaining({ jobId: 5, nodes: 8 })]);
    expect(plan.starts[0]!.reason).toMatch(/^moldable: 8 of 16 nodes now, predicted \(at most linear slowdown\) to end 3000 s sooner/);
  });

  test("when it would end later, it starts small only if the jobs behind it gain more", () => {
    // Its 16 nodes are free at +300 s: at 8 now it ends at +1200 s instead of +900 s (300 s lost).
    const alone = planEbb(input(16, 8, [rigidRun(9, 8, 300)], [mall(5, 2, 16, 600)]));
    expect(alone.starts).toEqual([]);
    // 40 jobs behind it: the 8 nodes would idle 300 s, worth far more to them than 300 s.
    const busy = planEbb(input(16, 8, [rigidRun(9, 8, 300)], [mall(5, 2, 16, 600), ...Array.from({ length: 40 }, (_, i) => pend(20 + i, 16))]));
    expect(busy.starts).toEqual([expect.objectContaining({ jobId: 5, nodes: 8 })]);
    expect(busy.starts[0]!.reason).toMatch(/to end 300 s later than at 16 from its reservation; the queue gains \d+ s/);
  });

  test("a malleable job behind the head starts small only if the head's reservation holds", () => {
    // Head (rigid, 16) reserved at +1000 s, when job 9 ends; 8 idle, no extra nodes then.
    // Job 6 at 8 of 16 nodes: 600 s limit -> ends +1200 s, past the reservation: stays.
    expect(planEbb(input(16, 8, [rigidRun(9, 8, 1000)], [pend(5, 16), mall(6, 2, 16, 600)])).starts).toEqual([]);
    // 400 s limit -> ends by +800 s: starts, the reservation is kept.
    const plan = planEbb(input(16, 8, [rigidRun(9, 8, 1000)], [pend(5, 16), mall(6, 2, 16, 400)]));
    expect(plan.starts).toEqual([expect.objectContaining({ jobId: 6, nodes: 8 })]);
    expect(plan.starts[0]!.reason).toMatch(/ends before the reservation$/);
    expect(plan.reservations[0]).toMatchObject({ jobId: 5, start: NOW + 1_000_000 });
  });

  test("behind the head, a malleable job that would run past the reservation starts on the nodes it leaves over", () => {
    // Head (rigid, 12 of 16) reserved at +1900 s, 4 nodes left over then; 8 idle now; 10 jobs of 16 behind.
    // Job 6 (1000 s at 16): on 8 nodes it ends at +2000 s, past the reservation, and 8 > 4: not there.
    // On the 4 left over it ends by +4000 s (linear bound) instead of +2900 s, 1100 s later, but the
    // queue gains λ × 4 nodes × 1900 s.
    const queue = [pend(5, 12), mall(6, 2, 16, 1000), ...Array.from({ length: 10 }, (_, i) => pend(20 + i, 16))];
    const plan = planEbb(input(16, 8, [rigidRun(9, 8, 1900)], queue));
    expect(plan.starts).toEqual([expect.objectContaining({ jobId: 6, nodes: 4 })]);
    expect(plan.starts[0]!.reason).toMatch(/^moldable: 4 of 16 nodes now, .* to end 1100 s later .*; in the nodes the reservation leaves over$/);
    expect(plan.reservations[0]).toMatchObject({ jobId: 5, start: NOW + 1_900_000 });
  });
});

describe("the arrival reserve: growth into idle nodes does not make arrivals wait", () => {
  // Jobs that started as soon as they were submitted (no queue), 4 nodes each at first (their profile's first size).
  const onTime = (id: number, nodes: number, submit: number, extra: Partial<JobState> = {}) =>
    job(id, nodes, 0.005, 36_000, { submitTime: submit, startTime: submit, profile: [{ nodes: 4, iterTime: 1 }], ...extra });
  const rigidOnTime = (id: number, nodes: number, submit: number) => job(id, nodes, undefined, 36_000, { elastic: false, minNodes: nodes, maxNodes: nodes, submitTime: submit, startTime: submit });

  test("with nobody waiting, the nodes the arrivals asked for within one adaptation stay idle; the rest is lent", () => {
    // Rigid jobs of 3 and 2 nodes arrived 5 s apart (within the 10 s an adaptation is assumed to
    // take): 5 of the 8 idle nodes stay idle, job 1 grows by the other 3.
    const running = [onTime(1, 4, NOW - 3_600_000), rigidOnTime(2, 3, NOW - 60_000), rigidOnTime(3, 2, NOW - 55_000)];
    const plan = planEbb(input(17, 8, running));
    expect(plan.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 4, to: 7, rule: "grow" })]);
  });

  test("a malleable arrival too short to grow back once measured is kept the size it asked for, a longer one its minimum", () => {
    // Jobs 2 and 3 asked for 3 and 2 nodes (minimum 1) 5 s apart.
    const mallOnTime = (id: number, nodes: number, submit: number, timeLimit: number, extra: Partial<JobState> = {}) =>
      job(id, nodes, undefined, timeLimit / 2, { minNodes: 1, maxNodes: 2 * nodes, preferredNodes: nodes, timeLimit, submitTime: submit, startTime: submit, ...extra });
    const arrivals = (timeLimit: number, extra: Partial<JobState> = {}) => [onTime(1, 4, NOW - 3_600_000), mallOnTime(2, 3, NOW - 60_000, timeLimit, extra), mallOnTime(3, 2, NOW - 55_000, timeLimit, extra)];
    // 100 s: they end before their speed is known (3 samples, one a 60 s tick), started smaller they never grow back: 5 of the 8 idle nodes stay idle.
    expect(planEbb(input(17, 8, arrivals(100))).resizes).toEqual([expect.objectContaining({ jobId: 1, from: 4, to: 7, rule: "grow" })]);
    // The same, their size unknown (the controller's view): the size each first ran at counts.
    const unknown = arrivals(100, { preferredNodes: undefined }).map((j) => (j.id === 1 ? j : { ...j, profile: [{ nodes: j.nodes, iterTime: 1 }] }));
    expect(planEbb(input(17, 8, unknown)).resizes).toEqual([expect.objectContaining({ jobId: 1, from: 4, to: 7, rule: "grow" })]);
    // An hour: they can start on 1 node each and grow once measured: 2 stay idle.
    expect(planEbb(input(17, 8, arrivals(3600))).resizes).toEqual([expect.objectContaining({ jobId: 1, from: 4, to: 10, rule: "grow" })]);
  });

  test("arrivals far apart need only the largest of them", () => {
    const running = [onTime(1, 4, NOW - 3_600_000), rigidOnTime(2, 3, NOW - 600_000), rigidOnTime(3, 2, NOW - 60_000)];
    expect(planEbb(input(17, 8, running)).resizes).toEqual([expect.objectContaining({ jobId: 1, from: 4, to: 9, rule: "grow" })]);
  });

  test("when the idle nodes fall below the reserve, lent nodes come back, never below the size a job first ran at", () => {
    // Job 1 holds 12 nodes, 8 beyond its first 4; 1 node idle, the reserve is 5 (3 + 2): 4 come back.
    const running = [onTime(1, 12, NOW - 3_600_000), rigidOnTime(2, 3, NOW - 60_000), rigidOnTime(3, 2, NOW - 55_000)];
    const plan = planEbb(input(18, 1, running));
    expect(plan.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 12, to: 8, rule: "reserve" })]);
    expect(plan.resizes[0]!.reason).toMatch(/5 idle node\(s\) are kept for arrivals/);
    // The window of arrivals counted is one adaptation (defaultAdaptCost), not the elastic interval.
    expect(plan.resizes[0]!.reason).toContain(`within ${input(18, 1, running).config.defaultAdaptCost} s,`);
    // Nobody waits: nothing is left for another pass at this instant.
    expect(plan.again).toBe(false);
    // With 8 short instead, the give-back stops at its first size: 4 nodes.
    const far = planEbb(input(18, 1, [onTime(1, 6, NOW - 3_600_000), rigidOnTime(2, 8, NOW - 60_000), rigidOnTime(3, 3, NOW - 55_000)]));
    expect(far.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 6, to: 4, rule: "reserve" })]);
  });

  test("a job waiting alone that the loans cover gets them back when that ends it sooner than starting below its size", () => {
    // Job 1 holds 12 nodes, 8 lent beyond its first 4, for 10 h more; 1 node idle. Job 5 asks for 8
    // (malleable down to 1, 600 s): on the 1 idle node it would take 8 x 600 s; after one give-back
    // (10 s) it runs 600 s at its size. 7 come back, and its reservation is the give-back's commit.
    const mall = (id: number, min: number, want: number, timeLimit: number): PendingJob => ({ id, minNodes: min, maxNodes: want, preferredNodes: want, timeLimit, submitTime: NOW - 1000, elastic: true });
    const plan = planEbb(input(13, 1, [onTime(1, 12, NOW - 3_600_000)], [mall(5, 1, 8, 600)]));
    expect(plan.starts).toEqual([]);
    expect(plan.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 12, to: 5, rule: "admit" })]);
    expect(plan.reservations).toEqual([expect.objectContaining({ jobId: 5, start: NOW + config.defaultAdaptCost * 1000 })]);
    // Its promise is the give-back's own commit: 5 s + 0.2 s a node for 7 nodes, not the default 10 s.
    const costed = planEbb(input(13, 1, [onTime(1, 12, NOW - 3_600_000, { adaptCostModel: { fixed: 5, perNode: 0.2 } })], [mall(5, 1, 8, 600)]));
    expect(costed.reservations).toEqual([expect.objectContaining({ jobId: 5, start: NOW + 6_400 })]);
    // And no sooner than a shrink under way whose node it counts (job 2, 2 -> 1, commits in 30 s).
    const shrinking = job(2, 2, undefined, 36_000, { elastic: false, minNodes: 1, maxNodes: 2, submitTime: NOW - 3_600_000, startTime: NOW - 3_600_000, adapting: true, resizingTo: 1, adaptEnd: NOW + 30_000 });
    const underway = planEbb(input(15, 0, [onTime(1, 12, NOW - 3_600_000), shrinking], [mall(5, 1, 8, 600)]));
    expect(underway.reservations).toEqual([expect.objectContaining({ jobId: 5, start: NOW + 30_000 })]);
    // A rigid job the loans cover waits one give-back, not for job 1's end.
    const rigid = planEbb(input(13, 1, [onTime(1, 12, NOW - 3_600_000)], [pend(5, 4)]));
    expect(rigid.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 12, to: 9, rule: "admit" })]);
    // One node short of its 8 at 1,000 s (at most 8/7 slower: 143 s later, more than a give-back): the loan comes back.
    // One node short at 40 s (6 s later at most, 10 s a give-back): it starts on the 7 idle nodes at once.
    expect(planEbb(input(19, 7, [onTime(1, 12, NOW - 3_600_000)], [mall(5, 1, 8, 1000)])).resizes).toEqual([expect.objectContaining({ jobId: 1, from: 12, to: 11, rule: "admit" })]);
    const short = planEbb(input(19, 7, [onTime(1, 12, NOW - 3_600_000)], [mall(5, 1, 8, 40)]));
    expect(short.resizes.filter((r) => r.rule === "admit")).toEqual([]);
    expect(short.starts).toEqual([expect.objectContaining({ jobId: 5, nodes: 7 })]);
    // Not when its reservation comes before a give-back would (rigid job 9's 2 nodes end in 5 s).
    const rigidEnd = job(9, 2, undefined, 5, { elastic: false, minNodes: 2, maxNodes: 2, submitTime: NOW - 3_600_000, startTime: NOW - 3_600_000 });
    const soon = planEbb(input(15, 1, [onTime(1, 12, NOW - 3_600_000), rigidEnd], [pend(5, 3)]));
    expect(soon.resizes.filter((r) => r.rule === "admit")).toEqual([]);
    // Not with another job waiting behind it (an earlier reservation would shut out its backfill), nor while the queue was real.
    const admits = (p: ReturnType<typeof planEbb>) => p.resizes.filter((r) => r.rule === "admit" && r.reason.includes("lent beyond its first size"));
    expect(admits(planEbb(input(13, 1, [onTime(1, 12, NOW - 3_600_000)], [pend(5, 4), pend(6, 4)])))).toEqual([]);
    const waited = job(2, 1, undefined, 36_000, { elastic: false, minNodes: 1, maxNodes: 1, submitTime: NOW - 600_000, startTime: NOW - 55_000 });
    expect(admits(planEbb(input(14, 1, [onTime(1, 12, NOW - 3_600_000), waited], [pend(5, 4)])))).toEqual([]);
  });

  test("no reserve while a running job waited longer than an adaptation to start: the queue was real", () => {
    const running = [onTime(1, 4, NOW - 3_600_000), rigidOnTime(2, 3, NOW - 60_000), job(3, 2, undefined, 36_000, { elastic: false, minNodes: 2, maxNodes: 2, submitTime: NOW - 600_000, startTime: NOW - 55_000 })];
    expect(planEbb(input(17, 8, running)).resizes).toEqual([expect.objectContaining({ jobId: 1, from: 4, to: 12, rule: "grow" })]);
  });

  test("none either while a running job gave nodes below the size it started at and asked for: a waiting job took them", () => {
    // Job 3 started at once on the 4 nodes it asked for, gave 2 to a queue and got them back since (its profile): no reserve, job 1 takes all 8.
    const shrunk = onTime(3, 4, NOW - 55_000, { preferredNodes: 4, minNodes: 2, maxNodes: 4, profile: [{ nodes: 4, iterTime: 1 }, { nodes: 2, iterTime: 2 }, { nodes: 4, iterTime: 1 }] });
    expect(planEbb(input(17, 8, [onTime(1, 4, NOW - 3_600_000), rigidOnTime(2, 3, NOW - 60_000), shrunk])).resizes).toEqual([expect.objectContaining({ jobId: 1, from: 4, to: 12, rule: "grow" })]);
    // Regrown to its size since (a loan given back is no queue's): the reserve holds, job 1 grows by 3 of the 8.
    const back = onTime(3, 4, NOW - 55_000, { preferredNodes: 4, minNodes: 2, maxNodes: 4, profile: [{ nodes: 4, iterTime: 1 }, { nodes: 6, iterTime: 1 }, { nodes: 4, iterTime: 1 }] });
    expect(planEbb(input(17, 8, [onTime(1, 4, NOW - 3_600_000), rigidOnTime(2, 3, NOW - 60_000), back])).resizes).toEqual([expect.objectContaining({ jobId: 1, from: 4, to: 7, rule: "grow" })]);
  });
});

describe("start sizes: malleable jobs starting now make room for the head", () => {
  const mall = (id: number, min: number, want: number, timeLimit: number): PendingJob => ({ id, minNodes: min, maxNodes: want, preferredNodes: want, timeLimit, submitTime: 1000 + id, elastic: true });
  const rigidRun = (id: number, nodes: number, end: number) => job(id, nodes, undefined, end, { elastic: false, minNodes: nodes, maxNodes: nodes });

  test("a malleable job that would take every idle node starts smaller when the blocked job behind it then starts too and waits longer than it loses", () => {
    // 16 idle; job 5 (malleable, 4-16, 600 s) takes them all; job 6 (rigid 4) would wait 600 s, until
    // job 5 ends. At 12 nodes job 5 loses at most 600 * 16/12 - 600 = 200 s < 600 s: both start.
    const plan = planEbb(input(24, 16, [rigidRun(9, 8, 3600)], [mall(5, 4, 16, 600), pend(6, 4)]));
    expect(plan.starts).toEqual([expect.objectContaining({ jobId: 5, nodes: 12 }), expect.objectContaining({ jobId: 6, nodes: 4 })]);
    expect(plan.starts[0]!.reason).toMatch(/4 node\(s\) fewer so that job 6 starts now too: it would wait 600 s, the jobs starting smaller lose 200 s at most/);
  });

  test("not when the head's wait is shorter than what they would lose", () => {
    // Job 9 ends in 100 s: job 6 waits 100 s, less than job 5's 200 s.
    const plan = planEbb(input(24, 16, [rigidRun(9, 8, 100)], [mall(5, 4, 16, 600), pend(6, 4)]));
    expect(plan.starts).toEqual([expect.objectContaining({ jobId: 5, nodes: 16 })]);
  });
});

describe("what a job's speed is known from", () => {
  test("its MTCT samples, else the last two sizes of its profile, else its declared model", () => {
    expect(speedOf(job(1, 8, 0.1, 100), NOW, config)!.ratio(16)).toBeCloseTo((0.5 + 0.1) / 1.1, 12);
    // T(p) = 10 + 80/p: 20 s at 8 nodes, 15 s at 16.
    const profiled = job(1, 16, undefined, 100, { profile: [{ nodes: 8, iterTime: 20 }, { nodes: 16, iterTime: 15 }] });
    expect(profileModel(profiled.profile!)).toMatchObject({ a: 10, c: 80 });
    expect(speedOf(profiled, NOW, config)!.ratio(8)).toBeCloseTo(20 / 15, 12);
    const declared = job(1, 4, undefined, 100, { model: { a: 0, b: 0, c: 400 } });
    expect(speedOf(declared, NOW, config)!.ratio(8)).toBeCloseTo(0.5, 12);
    expect(speedOf(job(1, 4, undefined, 100), NOW, config)).toBeUndefined();
    // A profile that got slower with more nodes gives no model.
    expect(profileModel([{ nodes: 8, iterTime: 10 }, { nodes: 16, iterTime: 12 }])).toBeUndefined();
  });
});
