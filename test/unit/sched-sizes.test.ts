import { describe, expect, test } from "bun:test";
import { resolveConfig, type PolicyName } from "../../src/sched/config.ts";
import { POLICY_TABLE, planPass, UNSIZED_POLICIES } from "../../src/sched/policies/index.ts";
import { isValidSize, parseSizesSpec, resolveSizes, sizeAtLeast, sizeAtMost, sizedPlan, withinSizes } from "../../src/sched/sizes.ts";
import type { JobState, PassInput, PendingJob } from "../../src/sched/types.ts";
import { amdahlWork, type SimJob } from "../../src/sim/job.ts";
import { simulate } from "../../src/sim/engine.ts";
import { mulberry32 } from "../../src/sim/random.ts";

const SQUARES = [1, 4, 9, 16];
const NOW = 1_000_000;
const cfg = (policy: PolicyName) => resolveConfig({ policy, settle: 0 });
const running = (id: number, nodes: number, extra: Partial<JobState> = {}): JobState => ({
  id, nodes, minNodes: 1, maxNodes: 16, elastic: true, submitTime: id, startTime: NOW - 1000, timeLimit: 3600, samples: [], adapting: false, sizes: SQUARES, ...extra,
});
const pending = (id: number, min: number, max = min, extra: Partial<PendingJob> = {}): PendingJob => ({ id, minNodes: min, maxNodes: max, timeLimit: 600, submitTime: NOW + id, ...extra });
const input = (policy: PolicyName, over: Partial<PassInput>): PassInput => ({ now: NOW, upNodes: 16, idleNodes: 0, running: [], pending: [], config: cfg(policy), ...over });

describe("the helper", () => {
  test("rounds down and up to the nearest valid size; no sizes: any size", () => {
    expect(sizeAtMost(SQUARES, 8)).toBe(4);
    expect(sizeAtMost(SQUARES, 9)).toBe(9);
    expect(sizeAtMost([4, 9], 3)).toBeUndefined();
    expect(sizeAtLeast(SQUARES, 5)).toBe(9);
    expect(sizeAtLeast(SQUARES, 17)).toBeUndefined();
    expect(sizeAtMost(undefined, 7)).toBe(7);
    expect(sizeAtLeast([], 7)).toBe(7);
    expect(isValidSize(SQUARES, 9)).toBe(true);
    expect(isValidSize(SQUARES, 8)).toBe(false);
    expect(isValidSize(undefined, 8)).toBe(true);
  });

  test("specs: square within the range, lists checked against it, sorted and distinct", () => {
    expect(resolveSizes("square", 1, 16)).toEqual([1, 4, 9, 16]);
    expect(resolveSizes("square", 2, 20)).toEqual([4, 9, 16]);
    expect(resolveSizes("square", 5, 8)).toEqual({ error: "no square lies in the job's range 5-8" });
    expect(resolveSizes([9, 1, 4, 4], 1, 9)).toEqual([1, 4, 9]);
    expect(resolveSizes([1, 4, 9, 16], 1, 9)).toEqual({ error: "size 16 is outside the job's range 1-9" });
    expect(resolveSizes([], 1, 9)).toEqual({ error: "give at least one size" });
    expect(parseSizesSpec("square")).toBe("square");
    expect(parseSizesSpec("1,4,9")).toEqual([1, 4, 9]);
    expect(parseSizesSpec("1,,4")).toBeUndefined();
    expect(parseSizesSpec("squares")).toBeUndefined();
  });

  test("a range narrows to the valid sizes in it", () => {
    expect(withinSizes({ minNodes: 2, maxNodes: 12, sizes: SQUARES, preferredNodes: 12 })).toEqual({ minNodes: 4, maxNodes: 9, sizes: SQUARES, preferredNodes: 9 });
    const plain = { minNodes: 2, maxNodes: 12 };
    expect(withinSizes(plain)).toBe(plain);
  });

  test("plans: grows and starts round down, shrinks round down (or up to the smallest), no-ops are dropped with a note", () => {
    const inp = input("drms-rs", { running: [running(1, 4), running(2, 9), running(3, 9, { minNodes: 4, sizes: [4, 9] }), running(4, 4)] });
    const p = sizedPlan(inp, {
      starts: [],
      resizes: [
        { jobId: 1, from: 4, to: 7, rule: "grow", reason: "r" },
        { jobId: 2, from: 9, to: 6, rule: "admit", reason: "r" },
        { jobId: 3, from: 9, to: 3, rule: "admit", reason: "r" },
        { jobId: 4, from: 4, to: 8, rule: "grow", reason: "r" },
      ],
      reservations: [],
      notes: [],
    });
    expect(p.resizes.map((r) => [r.jobId, r.to])).toEqual([[2, 4], [3, 4]]);
    expect(p.resizes[0]!.reason).toContain("6 rounded to 4, a valid size");
    expect(p.notes.map((n) => n.jobId)).toEqual([1, 4]);
  });
});

describe("every policy picks valid sizes (plain data)", () => {
  test("drms-rs: a grow into 6 idle nodes goes 4 -> 9, not 10", () => {
    const over = { idleNodes: 6, upNodes: 10, running: [running(1, 4)] };
    expect(UNSIZED_POLICIES["drms-rs"].plan(input("drms-rs", over)).resizes.map((r) => r.to)).toEqual([10]);
    expect(planPass(input("drms-rs", over)).resizes.map((r) => r.to)).toEqual([9]);
  });

  test("drms-rs: a shrink to admit a 3-node job goes 9 -> 4, not 6", () => {
    const over = { idleNodes: 0, upNodes: 9, running: [running(1, 9)], pending: [pending(2, 3)] };
    expect(UNSIZED_POLICIES["drms-rs"].plan(input("drms-rs", over)).resizes.map((r) => r.to)).toEqual([6]);
    expect(planPass(input("drms-rs", over)).resizes.map((r) => r.to)).toEqual([4]);
  });

  test("ebb and apm: their own moldable starts on 7 idle nodes become 4", () => {
    for (const policy of ["ebb", "apm-equi", "apm-maxs"] as const) {
      const over = { idleNodes: 7, running: [running(9, 9, { elastic: false, sizes: undefined, minNodes: 9, maxNodes: 9 })], pending: [pending(2, 1, 16, { preferredNodes: 16, elastic: true, sizes: SQUARES })] };
      expect(UNSIZED_POLICIES[policy].plan(input(policy, over)).starts.map((s) => s.nodes)).toEqual([7]);
      expect(planPass(input(policy, over)).starts.map((s) => s.nodes)).toEqual([4]);
    }
  });

  test("apm-equi and apm-maxs: shares of 8 become 4", () => {
    for (const kind of ["apm-equi", "apm-maxs"] as const) {
      const over = { idleNodes: 8, running: [running(1, 4), running(2, 4, { submitTime: 2 })] };
      const raw = UNSIZED_POLICIES[kind].plan(input(kind, over)).resizes.map((r) => r.to);
      expect(raw.some((to) => !SQUARES.includes(to))).toBe(true);
      const sized = planPass(input(kind, over));
      for (const r of sized.resizes) expect(SQUARES).toContain(r.to);
    }
  });

  // reshape starts rigid at the size asked for (16): it waits, as without sizes.
  test("moldable starts (ers, ebb, drms-rs, apm) on 7 idle nodes start a square job on a square", () => {
    for (const policy of ["ers", "ebb", "drms-rs", "apm-equi", "apm-maxs"] as const) {
      const p = planPass(input(policy, { idleNodes: 7, upNodes: 16, running: [running(9, 9, { elastic: false, sizes: undefined, minNodes: 9, maxNodes: 9 })], pending: [pending(2, 1, 16, { preferredNodes: 16, elastic: true, sizes: SQUARES })] }));
      expect(p.starts.length).toBe(1);
      expect(SQUARES).toContain(p.starts[0]!.nodes);
    }
  });

  test("static baselines: a rigid start at an invalid preferred size rounds down", () => {
    for (const policy of ["fcfs", "easy"] as const) {
      const p = planPass(input(policy, { idleNodes: 16, pending: [pending(2, 1, 16, { preferredNodes: 8, sizes: SQUARES })] }));
      expect(p.starts).toEqual([{ jobId: 2, nodes: 4, reason: "fcfs" }]);
    }
  });
});

describe("every policy in the simulator only ever runs square jobs at squares", () => {
  // 40 malleable jobs on 16 nodes: half declare the squares 1..16, half any size. The engine
  // refuses (throws on) a start or resize at a size the job did not declare.
  function workload(seed: number): SimJob[] {
    const rng = mulberry32(seed);
    const jobs: SimJob[] = [];
    for (let id = 1; id <= 40; id++) {
      const square = id % 2 === 0;
      const nodes = square ? SQUARES[1 + Math.floor(rng.next() * 3)]! : 1 + Math.floor(rng.next() * 12);
      const s = rng.uniform(0.001, 0.05);
      jobs.push({
        id, submit: id * rng.uniform(5, 60), nodes, minNodes: 1, maxNodes: 16, malleable: true, estimate: 600,
        work: amdahlWork(rng.uniform(200, 2000) * nodes, s), resizeCost: () => 2, costModel: { fixed: 2, perNode: 0 },
        ...(square ? { sizes: SQUARES } : {}),
      });
    }
    return jobs;
  }
  for (const policy of Object.keys(POLICY_TABLE) as PolicyName[]) {
    test(policy, () => {
      let sizedResizes = 0;
      for (const seed of [1, 2, 3]) {
        const jobs = workload(seed);
        const run = simulate(jobs, { nodes: 16, seed, config: resolveConfig({ policy, settle: 0, interval: 30 }) });
        expect(run.jobs.length).toBe(40);
        for (const j of run.jobs) if (j.id % 2 === 0) {
          expect(SQUARES).toContain(j.startNodes);
          expect(SQUARES).toContain(j.peakNodes);
          sizedResizes += j.resizes;
        }
      }
      // The square jobs really are resized by every policy that resizes (ebb leaves jobs with sizes alone).
      if (POLICY_TABLE[policy].resizes && policy !== "ebb") expect(sizedResizes).toBeGreaterThan(0);
    });
  }
});
