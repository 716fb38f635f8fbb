import { describe, expect, test } from "bun:test";
import { meanMetrics, runPolicies, runSeeds, type SeedsReport } from "../../src/sim/run.ts";
import { ReplayThreads, runSeedsOnThreads } from "../../src/sim/threads.ts";
import { buildWorkload } from "../../src/sim/workload.ts";
import { seedList } from "../../src/cli/sim.ts";

const trace = Array.from({ length: 80 }, (_, i) => ({ id: i + 1, line: i + 1, submit: i * 50, runtime: 300 + ((i * 7919) % 2000), procs: 1 + ((i * 13) % 12), estimate: 600 + ((i * 7919) % 2000) }));

describe("arrival scale", () => {
  test("multiplies every submit time, nothing else", () => {
    const a = buildWorkload(trace, { nodes: 16, coresPerNode: 1, malleable: 0.5, seed: 2 });
    const b = buildWorkload(trace, { nodes: 16, coresPerNode: 1, malleable: 0.5, seed: 2, arrivalScale: 0.5 });
    expect(b.jobs.map((j) => j.submit)).toEqual(a.jobs.map((j) => j.submit * 0.5));
    expect(b.jobs.map((j) => [j.nodes, j.minNodes, j.maxNodes, j.malleable, j.estimate])).toEqual(a.jobs.map((j) => [j.nodes, j.minNodes, j.maxNodes, j.malleable, j.estimate]));
  });
  test("denser arrivals make EASY's jobs wait longer on this trace", () => {
    const w = (arrivalScale: number) => runPolicies({ trace, workload: { nodes: 16, coresPerNode: 1, malleable: 0, seed: 1, arrivalScale }, policies: ["easy"] }).results[0]!.metrics.meanWait;
    expect(w(0.3)).toBeGreaterThan(w(1));
  });
  test("zero or negative is refused", () => {
    expect(() => buildWorkload(trace, { nodes: 16, coresPerNode: 1, malleable: 0, seed: 1, arrivalScale: 0 })).toThrow(/arrivalScale 0/);
  });
});

describe("seeds", () => {
  test("the metrics are the means of the seeds' runs", () => {
    const r = runSeeds({ trace, workload: { nodes: 16, coresPerNode: 1, malleable: 0.5 }, seeds: [1, 2, 3], policies: ["easy", "drms-rs"] });
    for (const [i, policy] of (["easy", "drms-rs"] as const).entries()) {
      const each = [1, 2, 3].map((seed) => runPolicies({ trace, workload: { nodes: 16, coresPerNode: 1, malleable: 0.5, seed }, policies: [policy] }).results[0]!.metrics);
      expect(r.results[i]!.policy).toBe(policy);
      expect(r.results[i]!.metrics.meanTurnaround).toBeCloseTo((each[0]!.meanTurnaround + each[1]!.meanTurnaround + each[2]!.meanTurnaround) / 3, 6);
      expect(r.results[i]!.metrics).toEqual(meanMetrics(each));
    }
  });
  test("--seeds: a range or a list, each seed once", () => {
    expect(seedList("1-5")).toEqual([1, 2, 3, 4, 5]);
    expect(seedList("7,3")).toEqual([7, 3]);
    expect(() => seedList("5-1")).toThrow(/ends before it starts/);
    expect(() => seedList("1,x")).toThrow(/"x" is not a seed/);
    expect(() => seedList("2,2")).toThrow(/appears twice/);
  });
});

describe("replays on threads", () => {
  const req = { trace, workload: { nodes: 16, coresPerNode: 1, malleable: 0.5 }, seeds: [1, 2], policies: ["easy", "ebb", "drms-rs"] as const, check: true };
  const plain = (r: SeedsReport) => r.results.map(({ wallMs: _, perSeed, ...x }) => ({ ...x, perSeed: perSeed.map(({ wallMs: _w, ...p }) => p) }));
  test("every (seed, policy) replay on a thread of its own gives runSeeds' report, field for field", async () => {
    const seen: number[] = [];
    const threaded = await runSeedsOnThreads({ ...req, onProgress: (label, done) => (expect(label).toBe("6 replays on 3 threads"), seen.push(done)) }, 3);
    expect(plain(threaded)).toEqual(plain(runSeeds(req)));
    expect(threaded.results.map((r) => r.perSeed.map((p) => p.run.policy))).toEqual([["easy", "easy"], ["ebb", "ebb"], ["drms-rs", "drms-rs"]]);
    // The set's progress only grows, and ends whole.
    expect(seen.every((d, i) => i === 0 || d >= seen[i - 1]!)).toBe(true);
    expect(seen.at(-1)).toBe(1);
  });
  test("a pool's threads serve request after request, and a failed request names its policy and seed and leaves the pool working", async () => {
    const pool = new ReplayThreads(2);
    try {
      const other = { ...req, workload: { ...req.workload, malleable: 1 }, seeds: [3] };
      expect(plain(await pool.runSeeds(other))).toEqual(plain(runSeeds(other)));
      await expect(pool.runSeeds({ ...req, workload: { ...req.workload, arrivalScale: 0 } })).rejects.toThrow(/^replay of (easy|ebb|drms-rs), seed [12]: RangeError: .*arrivalScale 0/);
      expect(plain(await pool.runSeeds(req))).toEqual(plain(runSeeds(req)));
    } finally {
      pool.close();
    }
  });
});
