/** Time limits that follow a job's size (sched/limits.ts), and the simulator enforcing them as live. */
import { describe, expect, test } from "bun:test";
import { resolveConfig } from "../../src/sched/config.ts";
import { guardLimits, KEPT_LIMIT, keptLimit, limitRatio, rescaleLimit, shrinkKills } from "../../src/sched/limits.ts";
import type { JobState, PassInput } from "../../src/sched/types.ts";
import { simulate } from "../../src/sim/engine.ts";
import { amdahlWork, type SimJob } from "../../src/sim/job.ts";

const config = resolveConfig({ policy: "ebb" });

function job(over: Partial<JobState> = {}): JobState {
  return { id: 1, nodes: 4, minNodes: 1, maxNodes: 8, elastic: true, submitTime: 0, startTime: 0, timeLimit: 100, samples: [], adapting: false, ...over };
}

describe("limit ratio", () => {
  test("no model: a shrink by the linear bound n/m, a grow keeps the limit", () => {
    expect(limitRatio(job(), 2)).toEqual({ ratio: 2, source: "no measured model: at most 4/2 slower" });
    expect(limitRatio(job(), 8).ratio).toBe(1);
  });
  test("measured iteration times: their ratio, clamped to the linear bound both ways", () => {
    // T(p) = 10 + 80/p: 30 s at 4, 50 s at 2, 20 s at 8.
    const profile = [
      { nodes: 2, iterTime: 50 },
      { nodes: 4, iterTime: 30 },
    ];
    expect(limitRatio(job({ profile }), 2).ratio).toBeCloseTo(50 / 30, 12);
    expect(limitRatio(job({ profile }), 8).ratio).toBeCloseTo(20 / 30, 12);
    // Superlinear (cache effects): 2 nodes take 3x as long as 4; the limit grows by 2x at most.
    const superlinear = [
      { nodes: 2, iterTime: 90 },
      { nodes: 4, iterTime: 30 },
    ];
    const r = limitRatio(job({ profile: superlinear }), 2);
    expect(r.ratio).toBe(2);
    expect(r.predicted).toBeCloseTo(3, 12);
    expect(r.source).toContain("capped at 4/2");
  });
  test("a declared model when nothing was measured", () => {
    expect(limitRatio(job({ model: { a: 0, b: 0, c: 400 } }), 2)).toMatchObject({ ratio: 2, source: "declared runtime model" });
  });
});

describe("rescaling", () => {
  test("by hand: elapsed + the rest scaled + the adaptation; a grow only shortens it, never below the user's", () => {
    // 40 s into a 100 s limit, halved (x2), the adaptation took 5 s: 40 + 60*2 + 5.
    expect(rescaleLimit({ startTime: 0, limit: 100, original: 100, at: 40_000, ratio: 2, grow: false, adaptation: 5 })).toBe(165);
    // Then 50 s in, grown back (x0.5): 50 + 115*0.5 + 5 = 112.5, rounded up.
    expect(rescaleLimit({ startTime: 0, limit: 165, original: 100, at: 50_000, ratio: 0.5, grow: true, adaptation: 5 })).toBe(113);
    // A grow from the original size cannot cut below the user's limit...
    expect(rescaleLimit({ startTime: 0, limit: 100, original: 100, at: 10_000, ratio: 0.5, grow: true, adaptation: 1 })).toBe(100);
    // ...nor lengthen it (no model: ratio 1, the adaptation is the job's to pay).
    expect(rescaleLimit({ startTime: 0, limit: 165, original: 100, at: 10_000, ratio: 1, grow: true, adaptation: 9 })).toBe(165);
  });
  test("a user's own resize never raises the limit: its shrink keeps it, adaptation and all; its grow is the scheduler's", () => {
    expect(keptLimit({ nodes: 4 }, 1)).toEqual({ ratio: 1, source: KEPT_LIMIT });
    expect(keptLimit({ nodes: 2 }, 4)).toEqual(limitRatio({ nodes: 2 }, 4));
    // 4 -> 1 nodes 10 s into an hour: the scheduler's shrink makes it 10 + 3590*4 + 5; the user's leaves it.
    expect(rescaleLimit({ startTime: 0, limit: 3600, original: 3600, at: 10_000, ratio: 4, grow: false, adaptation: 5 })).toBe(14375);
    expect(rescaleLimit({ startTime: 0, limit: 3600, original: 3600, at: 10_000, ratio: 1, grow: false, adaptation: 5, rise: false })).toBe(3600);
  });
});

describe("no shrink that the limit would then kill", () => {
  const superlinear = [
    { nodes: 2, iterTime: 90 },
    { nodes: 4, iterTime: 30 },
  ];
  test("a job predicted 3x slower at half its size is not halved when it would need more than twice its limit", () => {
    const j = job({ profile: superlinear });
    expect(shrinkKills(j, 2, 40_000, config)).toMatch(/^shrink 4 -> 2 refused: predicted 180 s left at 2 nodes \(measured iteration times at 4 and 2 nodes, capped at 4\/2\) but its limit would leave 120 s$/);
    // A job that scales as its limit does is shrunk; so is one that ends well before its limit.
    expect(shrinkKills(job(), 2, 40_000, config)).toBeUndefined();
    expect(shrinkKills(job({ profile: superlinear, remaining: 30 }), 2, 40_000, config)).toBeUndefined();
  });
  test("a job measured a few percent worse than linear is shrunk (measurement noise); 10 % worse is not", () => {
    const measured = (at2: number) => job({ profile: [{ nodes: 2, iterTime: at2 }, { nodes: 4, iterTime: 30 }] });
    expect(shrinkKills(measured(61), 2, 40_000, config)).toBeUndefined();
    expect(shrinkKills(measured(66), 2, 40_000, config)).toMatch(/^shrink 4 -> 2 refused: predicted 132 s left/);
  });
  test("guardLimits drops such a shrink from any plan and says why", () => {
    const input: PassInput = { now: 40_000, upNodes: 8, idleNodes: 0, running: [job({ profile: superlinear }), job({ id: 2 })], pending: [], config };
    const plan = guardLimits(input, {
      starts: [],
      resizes: [
        { jobId: 1, from: 4, to: 2, rule: "admit", reason: "x" },
        { jobId: 2, from: 4, to: 2, rule: "admit", reason: "y" },
      ],
      reservations: [],
      notes: [],
    });
    expect(plan.resizes.map((r) => r.jobId)).toEqual([2]);
    expect(plan.notes).toEqual([{ jobId: 1, text: expect.stringMatching(/^shrink 4 -> 2 refused/) }]);
  });
});

describe("the simulator enforces limits as the controller does", () => {
  const rigid = (id: number, submit: number, nodes: number, runtime: number, estimate = runtime): SimJob => ({
    id,
    submit,
    nodes,
    minNodes: nodes,
    maxNodes: nodes,
    malleable: false,
    estimate,
    work: amdahlWork(runtime * nodes, 0),
    resizeCost: () => 0,
  });
  test("a job that runs past its requested time is killed at it", () => {
    const r = simulate([rigid(1, 0, 2, 100, 60), rigid(2, 0, 2, 30)], { nodes: 4, config: resolveConfig({ policy: "easy" }) });
    expect(r.jobs.map((j) => [j.id, j.end, j.killed])).toEqual([
      [1, 60, true],
      [2, 30, false],
    ]);
    expect(r.killed).toBe(1);
  });
  test("a job the scheduler shrinks is not killed at its original limit: its limit follows its size", () => {
    // apm-equi halves the malleable job (4 nodes, 100 s, limit 100 s exactly) at t=10 to start a
    // 2-node job: 90 s of work left at 4 nodes take 180 s at 2, the limit becomes 10 + 90*2 = 190.
    const mall: SimJob = { id: 1, submit: 0, nodes: 4, minNodes: 2, maxNodes: 4, malleable: true, estimate: 100, work: amdahlWork(400, 0), resizeCost: () => 0 };
    const r = simulate([mall, rigid(2, 10, 2, 500)], { nodes: 4, config: resolveConfig({ policy: "apm-equi" }) });
    const m = r.jobs.find((j) => j.id === 1)!;
    expect(m.resizes).toBe(1);
    expect(m.killed).toBe(false);
    expect(m.end).toBeCloseTo(190, 6);
    expect(m.limit).toBe(190);
    expect(r.killed).toBe(0);
  });
});
