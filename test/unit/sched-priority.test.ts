/**
 * Multifactor priority and fair share (sched/priority.ts, sched/fairshare.ts) with plain data, and
 * a scheduling pass on priority order: the first job in priority order starts or gets the
 * reservation, backfill never delays it, on counts and on shared nodes.
 */
import { describe, expect, test } from "bun:test";
import { queueOrder } from "../../src/sched/batch.ts";
import { resolveConfig } from "../../src/sched/config.ts";
import { fairShare, jobRate, shareRate, UsageBook } from "../../src/sched/fairshare.ts";
import { makePlan, type Snapshot, type SnapshotJob } from "../../src/sched/plan.ts";
import { applyPriorities, DEFAULT_PRIORITY, prioritize, priorityConfigSchema, resolvePriority } from "../../src/sched/priority.ts";
import type { PendingJob } from "../../src/sched/types.ts";

const H = 3600;
const ms = (s: number) => s * 1000;

describe("usage decays with its half-life", () => {
  test("one unit per second for one half-life, then another half-life of nothing", () => {
    const book = new UsageBook(H);
    book.charge("a", 1, 0, ms(H));
    // The integral of 2^(-(H - s)/H) over [0, H] is H / ln 2 * (1 - 1/2).
    expect(book.usage("a", ms(H))).toBeCloseTo(H / Math.LN2 / 2, 6);
    expect(book.usage("a", ms(2 * H))).toBeCloseTo(H / Math.LN2 / 4, 6);
    expect(book.raw("a")).toBe(H);
    expect(book.usage("nobody", ms(H))).toBe(0);
  });

  test("charges in pieces add up to one charge; half-life 0 never decays", () => {
    const one = new UsageBook(H);
    one.charge("a", 2, 0, ms(3 * H));
    const pieces = new UsageBook(H);
    for (let k = 0; k < 3; k++) pieces.charge("a", 2, ms(k * H), ms((k + 1) * H));
    expect(pieces.usage("a", ms(5 * H))).toBeCloseTo(one.usage("a", ms(5 * H)), 6);
    const flat = new UsageBook(0);
    flat.charge("a", 2, 0, ms(H));
    expect(flat.usage("a", ms(100 * H))).toBe(2 * H);
  });

  test("charges in any order give the same usage (a restart replays the history by node, not by time)", () => {
    const inOrder = new UsageBook(H);
    inOrder.charge("a", 1, 0, ms(H));
    inOrder.charge("a", 3, ms(2 * H), ms(3 * H));
    const reversed = new UsageBook(H);
    reversed.charge("a", 3, ms(2 * H), ms(3 * H));
    reversed.charge("a", 1, 0, ms(H));
    expect(reversed.usage("a", ms(4 * H))).toBeCloseTo(inOrder.usage("a", ms(4 * H)), 9);
  });

  test("a job's rate: its shares weighted by cores, memory and GPUs, or its nodes whole", () => {
    const w = { cpu: 1, memGiB: 0.25, gpu: 2 };
    expect(shareRate({ cores: [0, 1], memMiB: 4096, gpus: [0] }, w)).toBe(2 + 1 + 2);
    const node = { cores: 8, memMiB: 8192, gpus: [null, null], features: [] };
    expect(jobRate({ nodes: ["a", "b"] }, () => node, w)).toBe(2 * (8 + 2 + 4));
    expect(jobRate({ nodes: ["a", "b"] }, () => undefined, w)).toBe(2);
  });
});

describe("fair-share factor 2^(-usage part / shares part)", () => {
  test("equal shares: the user who used three times as much has the lower factor; one who used nothing has 1", () => {
    const book = new UsageBook(0);
    book.charge("heavy", 3, 0, ms(100));
    book.charge("light", 1, 0, ms(100));
    const rows = fairShare(["heavy", "light", "new"], book, {}, ms(100));
    expect(rows.get("heavy")!.normShares).toBeCloseTo(1 / 3, 12);
    expect(rows.get("heavy")!.effectiveUsage).toBeCloseTo(0.75, 12);
    expect(rows.get("heavy")!.factor).toBeCloseTo(2 ** (-0.75 * 3), 12);
    expect(rows.get("light")!.factor).toBeCloseTo(2 ** (-0.25 * 3), 12);
    expect(rows.get("new")!.factor).toBe(1);
    expect(rows.get("heavy")!.rawUsage).toBe(300);
  });

  test("shares from the config: a user with three shares who used three times as much is at par", () => {
    const book = new UsageBook(0);
    book.charge("big", 3, 0, ms(100));
    book.charge("small", 1, 0, ms(100));
    const rows = fairShare(["big", "small"], book, { big: 3 }, ms(100));
    expect(rows.get("big")!.factor).toBeCloseTo(rows.get("small")!.factor, 12);
    expect(rows.get("big")!.factor).toBeCloseTo(0.5, 12);
  });
});

describe("priority", () => {
  const job = (id: number, user: string, submit: number, extra: Partial<PendingJob> = {}): PendingJob => ({ id, minNodes: 1, maxNodes: 1, timeLimit: 100, submitTime: ms(submit), ...extra });

  test("a light user's later job goes before a heavy user's earlier ones; one user's jobs stay in submit order", () => {
    const book = new UsageBook(DEFAULT_PRIORITY.halfLife);
    book.charge("heavy", 10, 0, ms(H));
    book.charge("light", 1, 0, ms(H));
    const pending = [job(1, "heavy", H), job(2, "heavy", H + 1), job(3, "light", H + 60)];
    const users = new Map([[1, "heavy"], [2, "heavy"], [3, "light"]]);
    const { factors, users: rows } = prioritize(pending.map((j) => ({ id: j.id, user: users.get(j.id)!, submitTime: j.submitTime, size: 0.1 })), book, DEFAULT_PRIORITY, ms(H + 120));
    expect(rows.get("heavy")!.factor).toBeLessThan(rows.get("light")!.factor);
    const f3 = factors.find((f) => f.jobId === 3)!;
    expect(f3.fairshare).toBeCloseTo(DEFAULT_PRIORITY.weights.fairshare * rows.get("light")!.factor, 9);
    expect(f3.age).toBeCloseTo((DEFAULT_PRIORITY.weights.age * 60) / DEFAULT_PRIORITY.maxAge, 9);
    expect(f3.jobSize).toBe(0);
    const ordered = applyPriorities(pending, new Map(factors.map((f) => [f.jobId, f])), DEFAULT_PRIORITY);
    expect(ordered.map((j) => j.id)).toEqual([3, 1, 2]);
    expect(ordered[0]!.priority).toBe(f3.priority);
  });

  test("a partition's tier goes before any priority; submit priority orders by tier, then submit time", () => {
    const pending = [job(1, "a", 0), job(2, "b", 10), job(3, "a", 20)];
    const f = new Map([
      [1, { priority: 5, tier: 0 }],
      [2, { priority: 9, tier: 0 }],
      [3, { priority: 1, tier: 2 }],
    ]);
    expect(applyPriorities(pending, f, { type: "multifactor" }).map((j) => j.id)).toEqual([3, 2, 1]);
    const plain = applyPriorities(pending, f, { type: "submit" });
    expect(plain.map((j) => j.id)).toEqual([3, 1, 2]);
    expect(plain.map((j) => j.priority)).toEqual([undefined, undefined, undefined]);
  });

  test("the age factor reaches its weight at maxAge; the size factor favours big jobs, or small ones", () => {
    const cfg = resolvePriority({ weights: { jobSize: 100 }, maxAge: 100 });
    const book = new UsageBook(0);
    const [a, b] = prioritize([{ id: 1, user: "u", submitTime: 0, size: 0.25 }, { id: 2, user: "u", submitTime: ms(950), size: 1 }], book, cfg, ms(1000)).factors;
    expect(a!.age).toBe(cfg.weights.age);
    expect(b!.age).toBeCloseTo(cfg.weights.age / 2, 9);
    expect([a!.jobSize, b!.jobSize]).toEqual([25, 100]);
    const small = prioritize([{ id: 1, user: "u", submitTime: 0, size: 0.25 }], book, { ...cfg, favorSmall: true }, ms(1000)).factors[0]!;
    expect(small.jobSize).toBe(75);
  });

  test("no priority on any job: queue order is submit order, as before priorities", () => {
    expect([job(2, "a", 5), job(1, "a", 5), job(3, "a", 1)].sort(queueOrder).map((j) => j.id)).toEqual([3, 1, 2]);
  });

  test("the config section: every field checked, the rest defaults", () => {
    expect(resolvePriority(priorityConfigSchema.parse({ weights: { age: 5 }, shares: { alice: 2 } }))).toEqual({ ...DEFAULT_PRIORITY, weights: { ...DEFAULT_PRIORITY.weights, age: 5 }, shares: { alice: 2 } });
    expect(priorityConfigSchema.safeParse({ weights: { age: -1 } }).success).toBe(false);
    expect(priorityConfigSchema.safeParse({ type: "fifo" }).success).toBe(false);
    expect(priorityConfigSchema.safeParse({ halfLife: 0 }).success).toBe(true);
    expect(priorityConfigSchema.safeParse({ wieghts: {} }).success).toBe(false);
  });
});

describe("a pass in priority order", () => {
  const base = (pending: PendingJob[], running: SnapshotJob[], nodes: Snapshot["nodes"]): Snapshot => ({ now: 0, nodes, pending, running, config: resolveConfig({ policy: "easy" }), reasons: true });
  const runningJob = (id: number, nodeNames: string[], end: number): SnapshotJob => ({ id, nodes: nodeNames.length, nodeNames, minNodes: nodeNames.length, maxNodes: nodeNames.length, elastic: false, submitTime: 0, startTime: 0, timeLimit: end / 1000, expectedEnd: end, samples: [], adapting: false });

  test("on counts: the higher priority starts first, the reservation is its, backfill ends before it", () => {
    const nodes = ["n1", "n2", "n3", "n4"].map((name, i) => ({ name, up: true, jobId: i < 2 ? 9 : undefined }));
    // Two idle nodes. Job 1 (submitted first, 2 nodes) has the lower priority; job 2 (3 nodes) the higher.
    const pending: PendingJob[] = [
      { id: 1, minNodes: 2, maxNodes: 2, timeLimit: 1000, submitTime: 0, priority: 1 },
      { id: 2, minNodes: 3, maxNodes: 3, timeLimit: 1000, submitTime: 10, priority: 2 },
      { id: 3, minNodes: 1, maxNodes: 1, timeLimit: 100, submitTime: 20, priority: 0 },
    ];
    const plan = makePlan(base(pending, [runningJob(9, ["n1", "n2"], 500_000)], nodes));
    // Job 2 cannot start (3 nodes, 2 idle): it gets the reservation at 500 s; job 1 would hold
    // 2 nodes until 1000 s and delay it; job 3 ends at 100 s and backfills.
    expect(plan.reservations.map((r) => [r.jobId, r.start])).toEqual([[2, 500_000]]);
    expect(plan.starts.map((s) => s.jobId)).toEqual([3]);
    expect(new Map(plan.waiting).get(1)).toBe("priority: would delay job 2");
    // Without priorities job 1 goes first and starts.
    const fifo = makePlan(base(pending.map((j) => ({ ...j, priority: undefined })), [runningJob(9, ["n1", "n2"], 500_000)], nodes));
    expect(fifo.starts.map((s) => s.jobId)).toEqual([1]);
  });

  test("on shared nodes: the same order on cores", () => {
    const resources = { cores: 4, memMiB: 4096, gpus: [], features: [] };
    const nodes = [{ name: "n1", up: true, resources }];
    const req = (tasks: number) => ({ tasks, cpusPerTask: 1, exclusive: false });
    const running = [{ ...runningJob(9, ["n1"], 500_000), shares: [{ node: "n1", cores: [0, 1], memMiB: 2048, gpus: [] }], resources: req(2) }];
    const pending: PendingJob[] = [
      { id: 1, minNodes: 1, maxNodes: 1, timeLimit: 1000, submitTime: 0, resources: req(2), priority: 1 },
      { id: 2, minNodes: 1, maxNodes: 1, timeLimit: 1000, submitTime: 10, resources: req(3), priority: 2 },
      { id: 3, minNodes: 1, maxNodes: 1, timeLimit: 100, submitTime: 20, resources: req(1), priority: 0 },
    ];
    const plan = makePlan(base(pending, running, nodes));
    expect(plan.reservations.map((r) => [r.jobId, r.start])).toEqual([[2, 500_000]]);
    expect(plan.starts.map((s) => s.jobId)).toEqual([3]);
    const fifo = makePlan(base(pending.map((j) => ({ ...j, priority: undefined })), running, nodes));
    expect(fifo.starts.map((s) => s.jobId)).toEqual([1]);
  });
  test("ebb's shortest-first backfill on shared nodes keeps the priority order; shortest first between equal priorities", () => {
    const resources = { cores: 4, memMiB: 4096, gpus: [], features: [] };
    const nodes = [{ name: "n1", up: true, resources }];
    const req = (tasks: number) => ({ tasks, cpusPerTask: 1, exclusive: false });
    const running = [{ ...runningJob(9, ["n1"], 500_000), shares: [{ node: "n1", cores: [0, 1], memMiB: 2048, gpus: [] }], resources: req(2) }];
    // Job 1 (3 cores) waits for job 9; jobs 2 (400 s) and 3 (100 s) each fit in the 2 free cores and end before it.
    const pending = (p2: number, p3: number): PendingJob[] => [
      { id: 1, minNodes: 1, maxNodes: 1, timeLimit: 1000, submitTime: 0, resources: req(3), priority: 9 },
      { id: 2, minNodes: 1, maxNodes: 1, timeLimit: 400, submitTime: 10, resources: req(2), priority: p2 },
      { id: 3, minNodes: 1, maxNodes: 1, timeLimit: 100, submitTime: 20, resources: req(2), priority: p3 },
    ];
    const ebb = (p: PendingJob[]) => makePlan({ ...base(p, running, nodes), config: resolveConfig({ policy: "ebb" }) });
    expect(ebb(pending(5, 1)).starts.map((s) => s.jobId)).toEqual([2]);
    expect(ebb(pending(1, 1)).starts.map((s) => s.jobId)).toEqual([3]);
  });
});
