import { describe, expect, test } from "bun:test";
import { resolveConfig } from "../../src/sched/config.ts";
import { planElastic, type ElasticInput } from "../../src/sched/elastic.ts";
import type { JobState, PendingJob } from "../../src/sched/types.ts";

const NOW = 10_000_000;
const config = resolveConfig({ minSamples: 2, settle: 60, window: 300, defaultAdaptCost: 10 });

function job(id: number, nodes: number, mtct: number, remainingSec: number, extra: Partial<JobState> = {}): JobState {
  return {
    id,
    nodes,
    minNodes: 1,
    maxNodes: 64,
    elastic: true,
    submitTime: id,
    startTime: NOW - 3_600_000,
    timeLimit: 100_000,
    remaining: remainingSec,
    samples: [
      { time: NOW - 120_000, mtct },
      { time: NOW - 60_000, mtct },
    ],
    adapting: false,
    ...extra,
  };
}
const wait = (id: number, minNodes: number, maxNodes = minNodes): PendingJob => ({ id, minNodes, maxNodes, timeLimit: 600, submitTime: NOW });
const plan = (over: Partial<ElasticInput>) => planElastic({ now: NOW, upNodes: 64, idleNodes: 0, running: [], waiting: [], config, ...over });

describe("ERS candidates", () => {
  test("rigid, adapting, settling and sample-poor jobs are left alone, with a note", () => {
    const p = plan({
      running: [
        job(1, 8, 0.5, 1000, { elastic: false }),
        job(2, 8, 0.5, 1000, { adapting: true }),
        job(3, 8, 0.5, 1000, { lastAdaptEnd: NOW - 30_000 }),
        job(4, 8, 0.5, 1000, { samples: [{ time: NOW - 1000, mtct: 0.5 }] }),
        job(5, 8, 0.5, 1000, { lastAdaptEnd: NOW - 61_000 }),
      ],
    });
    expect(p.resizes.map((r) => r.jobId)).toEqual([5]);
    expect(p.notes.find((n) => n.jobId === 3)!.text).toContain("settling");
    expect(p.notes.find((n) => n.jobId === 4)!.text).toContain("1 of 2");
  });

  test("a mandatory halving carries the MTCT, the range and the rule in its reason", () => {
    const p = plan({ running: [job(1, 16, 0.25, 1000, { minNodes: 4 })] });
    expect(p.resizes).toHaveLength(1);
    expect(p.resizes[0]).toMatchObject({ jobId: 1, from: 16, to: 8, rule: "shrink" });
    expect(p.resizes[0]!.reason).toContain("0.25");
    expect(p.resizes[0]!.reason).toContain("range 4-8");
  });

  test("halving stops at minNodes", () => {
    const p = plan({ running: [job(1, 6, 0.25, 1000, { minNodes: 5 })] });
    expect(p.resizes[0]!.to).toBe(5);
    expect(plan({ running: [job(1, 5, 0.25, 1000, { minNodes: 5 })] }).resizes).toEqual([]);
  });

  test("an unsteady MTCT (one in band, one below) is not a candidate", () => {
    const j = job(1, 8, 0.05, 1000);
    j.samples = [
      { time: NOW - 1_000_000, mtct: 0.05 },
      { time: NOW - 900_000, mtct: 0.05 },
      { time: NOW - 10_000, mtct: 0.001 },
    ];
    const p = plan({ running: [j], idleNodes: 8 });
    expect(p.resizes).toEqual([]);
    expect(p.ranges).toEqual([]);
    expect(p.notes[0]!.text).toContain("not a candidate");
  });
});

describe("why a candidate keeps its size", () => {
  test("every candidate left alone gets one note saying why; a clamp note does not replace it", () => {
    const p = plan({
      running: [
        job(1, 8, 0.05, 1000),
        job(2, 8, 0.001, 1000),
        job(3, 64, 0.001, 1000),
        job(4, 8, 0.05, 1000, { overrides: { upper: 0.5 } }),
        job(5, 2, 0.3, 1000, { minNodes: 2 }),
      ],
      limits: { upper: [0.02, 0.2] },
    });
    expect(p.resizes).toEqual([]);
    const of = (id: number) => p.notes.filter((n) => n.jobId === id).map((n) => n.text);
    expect(of(1)).toEqual(["kept at 8: MTCT avg 0.050 trend 0.050: within [0.01, 0.1], hold"]);
    expect(of(2)).toEqual(["kept at 8: MTCT avg 0.0010 trend 0.0010: below lower 0.01, may double, but no idle node may be lent"]);
    expect(of(3)).toEqual(["kept at 64: MTCT avg 0.0010 trend 0.0010: below lower 0.01, may double, but already at its maximum"]);
    expect(of(5)).toEqual(["kept at 2: MTCT avg 0.30 trend 0.30: above upper 0.1, halve (mandatory), but already at its minimum"]);
    expect(of(4)).toEqual(["upper 0.5 clamped to 0.2 (allowed 0.02-0.2)", "kept at 8: MTCT avg 0.050 trend 0.050: within [0.01, 0.2], hold"]);
  });

  test("a job that is resized gets no such note", () => {
    const p = plan({ running: [job(1, 8, 0.001, 1000)], idleNodes: 8 });
    expect(p.resizes).toHaveLength(1);
    expect(p.notes).toEqual([]);
  });
});

describe("rule 2: resource filling with the payoff rule", () => {
  test("idle nodes go to grow candidates, longest remaining first, up to double", () => {
    const p = plan({ idleNodes: 10, running: [job(1, 4, 0.001, 1000), job(2, 4, 0.001, 5000), job(3, 4, 0.05, 9000)] });
    expect(p.resizes.map((r) => [r.jobId, r.to, r.rule])).toEqual([
      [1, 8, "fill"],
      [2, 8, "fill"],
    ]);
    expect(p.resizes.find((r) => r.jobId === 2)!.reason).toContain("rule 2");
  });

  test("a grow whose gain over the remaining time is below the job's measured cost is refused", () => {
    // 4 -> 8 at MTCT ~0 saves ~half the remaining time: 30 s left saves ~15 s.
    const cheap = plan({ idleNodes: 4, running: [job(1, 4, 0.001, 30, { adaptCost: 10 })] });
    expect(cheap.resizes).toHaveLength(1);
    expect(cheap.resizes[0]!.reason).toMatch(/gain .* > cost/);
    const dear = plan({ idleNodes: 4, running: [job(1, 4, 0.001, 30, { adaptCost: 20 })] });
    expect(dear.resizes).toEqual([]);
    expect(dear.notes[0]!.text).toContain("payoff");
    const off = planElastic({ now: NOW, upNodes: 64, idleNodes: 4, waiting: [], config: { ...config, payoff: false }, running: [job(1, 4, 0.001, 30, { adaptCost: 20 })] });
    expect(off.resizes).toHaveLength(1);
  });

  test("without a measured cost the configured default is used", () => {
    expect(plan({ idleNodes: 4, running: [job(1, 4, 0.001, 18)] }).resizes).toEqual([]);
    expect(plan({ idleNodes: 4, running: [job(1, 4, 0.001, 22)] }).resizes).toHaveLength(1);
  });
});

describe("rule 1: time balancing to admit waiting jobs", () => {
  test("the jobs nearest their end are picked, balanced over what is left, and the freed nodes reserved", () => {
    const p = plan({
      idleNodes: 2,
      running: [job(1, 16, 0.05, 1000), job(2, 16, 0.05, 3000), job(3, 4, 0.05, 50_000), job(4, 8, 0.05, 90_000)],
      waiting: [wait(9, 20)],
    });
    // Need 18 beyond the idle 2: jobs 1 and 2 (shortest remaining) give it. Their 14 remaining nodes
    // split 1:3 by work (3.5 / 10.5), floored to 3 / 10, the one left over to the longer job.
    expect(p.resizes.map((r) => [r.jobId, r.to, r.rule])).toEqual([
      [1, 3, "balance"],
      [2, 11, "balance"],
    ]);
    expect(p.resizes[0]!.reason).toContain("rule 1");
    expect(p.reservations).toEqual([expect.objectContaining({ jobId: 9, nodes: 20, start: NOW + 10_000, fromJobs: [1, 2] })]);
  });

  test("a waiting job the spare nodes cannot cover gets no shrinks (and FCFS: nothing behind it)", () => {
    const p = plan({ idleNodes: 0, running: [job(1, 8, 0.05, 1000, { minNodes: 6 })], waiting: [wait(9, 10), wait(10, 1)] });
    expect(p.resizes).toEqual([]);
    expect(p.reservations).toEqual([]);
  });

  test("shrinks already under way count: no second shrink for the same waiting job", () => {
    const p = plan({
      running: [job(1, 16, 0.05, 1000, { adapting: true, resizingTo: 8 }), job(2, 16, 0.05, 1000)],
      waiting: [wait(9, 8)],
    });
    expect(p.resizes).toEqual([]);
    expect(p.reservations[0]).toMatchObject({ jobId: 9 });
  });

  test("a mandatory shrink may not push a job past the reservation of the job that waits for it", () => {
    // Job 9 needs all 16 nodes; they are free when job 1 ends in 100 s. Halving job 1 would end it later.
    const p = plan({
      running: [job(1, 16, 0.5, 100, { expectedEnd: NOW + 100_000 })],
      waiting: [wait(9, 20)],
      upNodes: 16,
      batchReservation: { jobId: 9, start: NOW + 100_000, nodes: 16 },
      batchExtra: 0,
    });
    expect(p.resizes).toEqual([]);
    expect(p.notes.map((n) => n.text).join("\n")).toContain("delay job 9");
  });

  test("behind a head that cannot be served, a job that would backfill may start on nodes a shrink frees", () => {
    // Job 9 needs all 20 nodes at +1000 s, when rigid job 1 ends. Elastic job 2 (4 nodes, 100 s left)
    // can shrink to 1 and still end long before that; job 10 (2 nodes, 60 s) then fits before +1000 s.
    const base = {
      upNodes: 20,
      batchReservation: { jobId: 9, start: NOW + 1_000_000, nodes: 20 },
      batchExtra: 0,
    };
    const running = [job(1, 16, 0, 1000, { elastic: false, expectedEnd: NOW + 1_000_000 }), job(2, 4, 0.05, 100, { expectedEnd: NOW + 100_000 })];
    const p = plan({ ...base, running, waiting: [wait(9, 20), wait(10, 2)] });
    expect(p.resizes).toEqual([expect.objectContaining({ jobId: 2, from: 4, to: 2, rule: "balance" })]);
    expect(p.resizes[0]!.reason).toContain("before job 9's reservation");
    expect(p.reservations).toEqual([expect.objectContaining({ jobId: 10, nodes: 2, fromJobs: [2] })]);
    // A job that would outlast the reservation and does not fit in what it leaves over may not.
    const long = plan({ ...base, running, waiting: [wait(9, 20), { ...wait(10, 2), timeLimit: 5000 }] });
    expect(long.resizes).toEqual([]);
    // Nor may a shrink push a job the reservation counts on past its start.
    const late = plan({ ...base, running: [running[0]!, job(2, 4, 0.05, 900, { expectedEnd: NOW + 900_000 })], waiting: [wait(9, 20), wait(10, 2)] });
    expect(late.resizes).toEqual([]);
  });
});
