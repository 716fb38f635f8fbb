/** ReSHAPE's profile and APM's model from stored timing samples (sched/profile.ts), by hand. */
import { describe, expect, test } from "bun:test";
import { runtime } from "../../src/model/amdahl.ts";
import { measuredModel, measuredProfile } from "../../src/sched/profile.ts";

const s = (time: number, iterations: number, loopMs: number, commMs: number) => ({ time, iterations, loopNs: loopMs * 1e6, commNs: commMs * 1e6 });

describe("measured profile", () => {
  test("one point per configuration, warm-up and adaptations left out", () => {
    const configs = [
      { since: 0, nodes: 2 },
      { since: 10_000, nodes: 0 }, // adapting
      { since: 11_000, nodes: 3 },
    ];
    const samples = [
      s(1_000, 1, 9_999, 9_999), // warm-up of the first configuration: out
      s(2_000, 4, 2_000, 200), // 2 nodes: two ranks' sums, 500 ms per iteration, 50 of them MPI
      s(3_000, 4, 2_000, 200),
      s(10_500, 4, 9_999, 0), // during the adaptation: out
      s(11_500, 6, 9_999, 0), // warm-up at 3 nodes: out
      s(13_000, 6, 2_100, 300), // 3 nodes: 350 ms per iteration
    ];
    const p = measuredProfile(samples, configs, 1_000);
    expect(p).toEqual([
      { nodes: 2, iterTime: 0.5, commTime: 0.05, iterations: 8 },
      { nodes: 3, iterTime: 0.35, commTime: 0.05, iterations: 6 },
    ]);
  });
  test("a configuration with no whole iteration has no point", () => {
    expect(measuredProfile([s(5_000, 0, 100, 10)], [{ since: 0, nodes: 4 }], 1_000)).toEqual([]);
  });
});

describe("measured runtime model (APM)", () => {
  test("one size: Amdahl with the MPI time as the sequential part", () => {
    const m = measuredModel([{ nodes: 4, iterTime: 0.5, commTime: 0.1, iterations: 10 }])!;
    expect(runtime(m, 4)).toBeCloseTo(0.5, 12);
    // 0.4 s of computation at 4 nodes is 0.8 s at 2; the MPI part stays.
    expect(runtime(m, 2)).toBeCloseTo(0.9, 12);
  });
  test("three sizes: fitted through them", () => {
    const t = (p: number) => 0.1 + 0.01 * p + 1.6 / p;
    const pts = [2, 4, 8].map((p) => ({ nodes: p, iterTime: t(p), commTime: 0, iterations: 10 }));
    const m = measuredModel(pts)!;
    for (const p of [2, 4, 8, 16]) expect(runtime(m, p)).toBeCloseTo(t(p), 6);
  });
  test("nothing measured: no model", () => {
    expect(measuredModel([])).toBeUndefined();
  });
});
