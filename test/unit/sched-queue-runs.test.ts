/**
 * Queue order by merging runs (sched/queue-runs.ts) against the full sort it replaces, on plain
 * data: random queues of several users and tiers, priorities made by `prioritize` as a pass makes
 * them (multifactor without the size factor, and submit order), jobs given in id order or shuffled.
 * And the pass's priorities without factor objects (`priorityOfEach`) against `prioritize`'s.
 */
import { describe, expect, test } from "bun:test";
import { queueOrder } from "../../src/sched/batch.ts";
import { UsageBook } from "../../src/sched/fairshare.ts";
import { DEFAULT_PRIORITY, priorityOfEach, prioritize, type PriorityConfig, type PriorityJob } from "../../src/sched/priority.ts";
import { queueOrderByRuns } from "../../src/sched/queue-runs.ts";
import type { PendingJob } from "../../src/sched/types.ts";

/** A small deterministic generator (mulberry32): the same queues every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NOW = 1_800_000_000_000;

/** A queue as a pass would order it: each job's priority and tier set, and its run (tier and user). */
function queue(seed: number, cfg: PriorityConfig, shuffle: boolean): { jobs: PendingJob[]; runs: string[]; asked: PriorityJob[]; book: UsageBook } {
  const r = rng(seed);
  const users = 1 + Math.floor(r() * 6);
  const n = Math.floor(r() * 300);
  const book = new UsageBook(cfg.halfLife);
  for (let u = 0; u < users; u++) book.charge(`u${u}`, r() * 64, NOW - 3_600_000 * (1 + r() * 48), NOW - r() * 60_000);
  const asked: PriorityJob[] = [];
  let t = NOW - 30 * 86_400_000;
  for (let id = 1; id <= n; id++) {
    // Ties of submit time, and jobs older than maxAge (their age factors equal), on purpose.
    if (r() < 0.7) t += Math.floor(r() * 3 * 86_400_000);
    asked.push({ id, user: `u${Math.floor(r() * users)}`, submitTime: Math.min(t, NOW), size: r(), tier: r() < 0.3 ? Math.floor(r() * 3) * 5 : 0 });
  }
  if (shuffle) for (let i = asked.length - 1; i > 0; i--) {
    const k = Math.floor(r() * (i + 1));
    [asked[i], asked[k]] = [asked[k]!, asked[i]!];
  }
  const { factors } = prioritize(asked, book, cfg, NOW);
  const jobs = asked.map((a, i): PendingJob => {
    const f = factors[i]!;
    return { id: a.id, minNodes: 1, maxNodes: 1, timeLimit: 60, submitTime: a.submitTime, priority: cfg.type === "multifactor" ? f.priority : undefined, tier: f.tier !== 0 ? f.tier : undefined };
  });
  return { jobs, runs: factors.map((f) => `${f.tier}\0${f.user}`), asked, book };
}

const ids = (jobs: readonly PendingJob[]) => jobs.map((j) => j.id);
const multifactor: PriorityConfig = { ...DEFAULT_PRIORITY, weights: { fairshare: 10_000, age: 1_000, jobSize: 0 }, maxAge: 7 * 86_400 };
const submit: PriorityConfig = { ...DEFAULT_PRIORITY, type: "submit" };

describe("queue order by merging each user's and tier's run is the full sort's", () => {
  for (const [name, cfg] of [["multifactor without the size factor", multifactor], ["submit order", submit]] as const) {
    for (const shuffle of [false, true]) {
      test(`${name}, jobs ${shuffle ? "shuffled" : "in id order"}: 200 random queues`, () => {
        for (let seed = 1; seed <= 200; seed++) {
          const { jobs, runs } = queue(seed * (shuffle ? 7919 : 1), cfg, shuffle);
          const sorted = [...jobs].sort(queueOrder);
          expect(ids(queueOrderByRuns(jobs, (i) => runs[i]!))).toEqual(ids(sorted));
        }
      });
    }
  }

  test("no jobs", () => {
    expect(queueOrderByRuns([], () => "x")).toEqual([]);
  });

  test("the precondition matters: with the size factor, one user's jobs are not in submit order, and the merge is not the sort", () => {
    const sized: PriorityConfig = { ...multifactor, weights: { ...multifactor.weights, jobSize: 5_000 } };
    let differs = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const { jobs, runs } = queue(seed, sized, false);
      if (JSON.stringify(ids(queueOrderByRuns(jobs, (i) => runs[i]!))) !== JSON.stringify(ids([...jobs].sort(queueOrder)))) differs++;
    }
    expect(differs).toBeGreaterThan(0);
  });
});

test("priorityOfEach gives prioritize's priorities to the last bit, with and without the size factor, shares in the config", () => {
  const cfgs: PriorityConfig[] = [
    multifactor,
    { ...multifactor, weights: { fairshare: 7_777, age: 1_234.5, jobSize: 3_000 }, favorSmall: true, shares: { u0: 3, u2: 0.5, nobody: 2 } },
    { ...multifactor, weights: { ...multifactor.weights, jobSize: 10 }, halfLife: 0 },
  ];
  let compared = 0;
  for (const cfg of cfgs)
    for (let seed = 1; seed <= 100; seed++) {
      const { asked, book } = queue(seed, cfg, seed % 2 === 0);
      const want = prioritize(asked, book, cfg, NOW).factors.map((f) => f.priority);
      const got = priorityOfEach(asked, book, cfg, NOW);
      expect(got.length).toBe(want.length);
      for (let i = 0; i < want.length; i++) if (!Object.is(got[i], want[i])) expect(`${i}: ${got[i]}`).toBe(`${i}: ${want[i]}`);
      compared += want.length;
    }
  expect(compared).toBeGreaterThan(10_000);
});
