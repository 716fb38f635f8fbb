/** ebb's start sizes by the node price (policies/start-size.ts), on plain data. */
import { describe, expect, test } from "bun:test";
import { resolveConfig } from "../../src/sched/config.ts";
import { planEbb } from "../../src/sched/policies/ebb.ts";
import { cheapestStart, efficiencyPrior, growStarts, startRatio, startSizeWhileWaiting } from "../../src/sched/policies/start-size.ts";
import type { JobState, PassInput, PendingJob } from "../../src/sched/types.ts";
import { NOW, runningJob } from "../support/sched-data.ts";

const config = resolveConfig({ policy: "ebb" });

/** A running malleable job at `nodes` with three MTCT samples and 10 hours of work left. */
const running = (id: number, nodes: number, mtct: number | undefined, extra: Partial<JobState> = {}) => runningJob(id, nodes, mtct, 36_000, { maxNodes: 32, ...extra });
const malleable = (id: number, asked: number, min: number, max: number, timeLimit = 3600): PendingJob => ({ id, minNodes: min, maxNodes: max, preferredNodes: asked, elastic: true, timeLimit, submitTime: NOW - 1000 + id });
const rigid = (id: number, nodes: number, timeLimit = 3600): PendingJob => ({ id, minNodes: nodes, maxNodes: nodes, timeLimit, submitTime: NOW - 1000 + id });
const input = (upNodes: number, idleNodes: number, runningJobs: JobState[], pending: PendingJob[]): PassInput => ({ now: NOW, upNodes, idleNodes, running: runningJobs, pending, config });

// At n nodes an MTCT k means an iteration of n/p + k (its compute at n = 1): at n = asked = 8,
// MTCT 4/3 is an efficiency (8 + 4/3) / (8 + 8 * 4/3) = 0.5.
const HALF = 4 / 3;

describe("the prior: the efficiency the running jobs measured at the size they asked for", () => {
  test("the median over the malleable jobs with enough samples; none: undefined", () => {
    const jobs = [running(1, 8, HALF, { preferredNodes: 8 }), running(2, 4, 0, { preferredNodes: 4 }), running(3, 8, 0.2, { preferredNodes: 8 }), running(4, 8, 5, { elastic: false }), running(5, 8, 5, { samples: [{ time: NOW, mtct: 5 }] })];
    // Job 3: (8 + 0.2) / (8 + 8 * 0.2) = 0.854; jobs 4 (rigid) and 5 (one sample) do not count.
    expect(efficiencyPrior(jobs, NOW, config)).toBeCloseTo(0.8542, 3);
    expect(efficiencyPrior([running(1, 8, undefined)], NOW, config)).toBeUndefined();
  });

  test("worked out again when a measurement changes, the jobs and their count the same", () => {
    const a = [running(1, 8, HALF, { preferredNodes: 8 }), running(2, 8, 0.2, { preferredNodes: 8 })];
    const b = [running(1, 8, HALF, { preferredNodes: 8 }), running(2, 8, HALF, { preferredNodes: 8 })];
    expect(efficiencyPrior(a, NOW, config)).toBeCloseTo((0.5 + 8.2 / 9.6) / 2, 9);
    expect(efficiencyPrior(b, NOW, config)).toBeCloseTo(0.5, 9);
    expect(efficiencyPrior(a, NOW, config)).toBeCloseTo((0.5 + 8.2 / 9.6) / 2, 9);
  });

  test("read at the size it asked for, not the one it runs at", () => {
    // Shrunk to 4 from 8: MTCT 2/3 at 4 nodes is the same code as 4/3 at 8.
    expect(efficiencyPrior([running(1, 4, 2 / 3, { preferredNodes: 8 })], NOW, config)).toBeCloseTo(0.5, 9);
  });
});

describe("a waiting job's speed", () => {
  test("its declared model, else Amdahl through the prior, else at most linear", () => {
    const job = malleable(1, 8, 2, 16);
    expect(startRatio({ ...job, model: { a: 100, b: 0, c: 800 } }, 0.5)(4)).toBeCloseTo(300 / 200, 9);
    // Efficiency 0.5 at 8: MTCT 4/3; at 4 nodes (2 + 4/3) / (1 + 4/3) = 1.4286 times as long.
    expect(startRatio(job, 0.5)(4)).toBeCloseTo((2 + HALF) / (1 + HALF), 9);
    expect(startRatio(job, undefined)(4)).toBe(2);
  });
});

describe("the start size while jobs wait: T(k)(1 + λk) least", () => {
  test("an inefficient job under a long queue starts smaller; the same job with a short queue, or scaling perfectly, at its size", () => {
    const job = malleable(1, 8, 2, 16);
    // T(k) ∝ 8/k + 4/3; with λ = 0.25: 8/k + 1/3 k + const, least at k = sqrt(24) ≈ 4.9 -> 5.
    expect(startSizeWhileWaiting(job, 0.25, 0.5)).toBe(5);
    expect(startSizeWhileWaiting(job, 0.0625, 0.5)).toBe(8);
    expect(startSizeWhileWaiting(job, 0.25, undefined)).toBe(8);
    expect(startSizeWhileWaiting(job, 0, 0.5)).toBe(8);
    expect(startSizeWhileWaiting(rigid(2, 8), 0.25, 0.5)).toBe(8);
  });

  test("the same job object read again after a field it depends on changed gets a new size", () => {
    const job = malleable(1, 8, 2, 16);
    expect(startSizeWhileWaiting(job, 0.25, 0.5)).toBe(5);
    job.sizes = [2, 4, 8];
    expect(startSizeWhileWaiting(job, 0.25, 0.5)).toBe(4);
    job.minNodes = 6;
    job.sizes = undefined;
    expect(startSizeWhileWaiting(job, 0.25, 0.5)).toBe(6);
  });

  test("the walk over a wide range finds what pricing every size finds", () => {
    for (const [lambda, mtct] of [[0.01, 0.5], [0.3, 2], [0.05, 0.05], [1, 10]] as const) {
      const ratio = (k: number) => (512 / k + mtct) / (1 + mtct);
      let best = 512;
      for (let k = 512; k >= 16; k--) if (ratio(k) * (1 + lambda * k) < ratio(best) * (1 + lambda * best)) best = k;
      expect(cheapestStart(ratio, 16, 512, lambda)).toBe(best);
    }
  });
});

describe("nobody waits: malleable jobs start large at once", () => {
  test("the surplus goes where the time drops most, up to the maximum, if it pays for a give-back", () => {
    const a = malleable(1, 4, 1, 8, 3600);
    const b = malleable(2, 4, 1, 8, 600);
    const add = growStarts([{ job: a, nodes: 4 }, { job: b, nodes: 4 }], 6, 0.9, () => 10);
    // The longer job gains more per node: it takes its 4, the other the 2 left.
    expect(Object.fromEntries(add)).toEqual({ 1: 4, 2: 2 });
    // A short job whose gain is below one adaptation gets nothing.
    expect(growStarts([{ job: malleable(3, 4, 1, 8, 15), nodes: 4 }], 4, 0.9, () => 10).size).toBe(0);
    // Nothing known of its speed (no model, no prior): it starts at the size it asked for.
    expect(growStarts([{ job: a, nodes: 4 }], 4, undefined, () => 10).size).toBe(0);
    expect(growStarts([{ job: { ...a, model: { a: 0, b: 0, c: 3600 } }, nodes: 4 }], 4, undefined, () => 10).get(1)).toBe(4);
  });
});

describe("planEbb", () => {
  test("while jobs wait, a malleable job starts where its price is least, with the numbers in its reason", () => {
    // 16 nodes, 8 held by a running job measured at efficiency 0.5; 4 rigid 8-node jobs wait behind
    // a malleable one that asked for 8: λ = 4/16, and it starts on 5.
    const jobs = [running(9, 8, HALF, { preferredNodes: 8 })];
    const pending = [malleable(1, 8, 2, 16), rigid(2, 8), rigid(3, 8), rigid(4, 8), rigid(5, 8)];
    const plan = planEbb(input(16, 8, jobs, pending));
    expect(plan.starts).toEqual([expect.objectContaining({ jobId: 1, nodes: 5 })]);
    expect(plan.starts[0]!.reason).toMatch(/5 of 8 nodes: 4 job\(s\) wait, a node-second is worth 0\.2500 s.*efficiency 0\.50 at the size asked/);
    expect(plan.reservations[0]).toMatchObject({ jobId: 2 });
    // Nothing measured: no prior, and at most linear slowdown never pays.
    expect(planEbb(input(16, 8, [running(9, 8, undefined)], pending)).starts).toEqual([expect.objectContaining({ jobId: 1, nodes: 8 })]);
  });

  test("the head's moldable start reads its speed the same way: it starts on the idle nodes when that ends it sooner", () => {
    // 12 of 16 nodes busy for 2,500 s more; the head asked for 8 (3,600 s). On the 4 idle nodes at
    // most linearly slower it would end 1,100 s later than from its reservation; at efficiency 0.5
    // at 8 (as the running job measured), 1.43x as long, 957 s sooner: it starts now.
    // (MTCT 1.2 at 12 nodes: efficiency (12 + 1.2) / (12 + 12 * 1.2) = 0.5.) It was submitted long
    // ago: no arrivals are expected behind it, the queue gains nothing.
    const busy = (mtct: number | undefined) => [running(9, 12, mtct, { preferredNodes: 12, expectedEnd: NOW + 2_500_000, remaining: 2500 })];
    const head = { ...malleable(1, 8, 2, 16), submitTime: NOW - 1e9 };
    const plan = planEbb(input(16, 4, busy(1.2), [head]));
    expect(plan.starts).toEqual([expect.objectContaining({ jobId: 1, nodes: 4 })]);
    expect(plan.starts[0]!.reason).toMatch(/^moldable: 4 of 8 nodes now, predicted \(efficiency 0\.50 at the size asked.*957 s sooner/);
    expect(planEbb(input(16, 4, busy(undefined), [head])).starts).toEqual([]);
  });

  test("nobody waits and the machine is light: a malleable job starts on more than it asked for, beyond the arrival reserve", () => {
    // The running job started a second after it was submitted; the reserve is one node (its minimum).
    // It measured efficiency 0.5 at the size it asked for: the prior.
    const light = [running(9, 8, HALF, { preferredNodes: 8, submitTime: NOW - 601_000 })];
    const plan = planEbb(input(32, 24, light, [malleable(1, 4, 1, 8)]));
    expect(plan.starts).toEqual([expect.objectContaining({ jobId: 1, nodes: 8 })]);
    expect(plan.starts[0]!.reason).toMatch(/4 idle node\(s\) more at once/);
    // Nothing measured: it starts at the size it asked for.
    expect(planEbb(input(32, 24, [running(9, 8, undefined, { submitTime: NOW - 601_000 })], [malleable(1, 4, 1, 8)])).starts).toEqual([expect.objectContaining({ jobId: 1, nodes: 4 })]);
  });

  test("not when the queue was real (a running job waited longer than a give-back to start): arrivals are coming", () => {
    const plan = planEbb(input(32, 24, [running(9, 8, HALF, { preferredNodes: 8, submitTime: NOW - 700_000 })], [malleable(1, 4, 1, 8)]));
    expect(plan.starts).toEqual([expect.objectContaining({ jobId: 1, nodes: 4 })]);
  });
});
