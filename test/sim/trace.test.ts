import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { POLICIES } from "../../src/sched/config.ts";
import { runPolicies } from "../../src/sim/run.ts";
import { parseSwf, traceJobs } from "../../src/sim/swf.ts";

// A cut of the reference trace: small enough for a test, large enough to queue.
const all = traceJobs(parseSwf(readFileSync(new URL("../../../shared/workloads/lublin_256.swf", import.meta.url), "utf8"))).jobs;
const cut = all.slice(0, 250);
const workload = (malleable: number) => ({ nodes: 256, coresPerNode: 1, malleable, seed: 3 });

describe("trace cut (first 250 jobs of lublin_256)", () => {
  const report = runPolicies({ trace: cut, workload: workload(0.5), policies: [...POLICIES] });

  test("every policy finishes every job, each once, never before it was submitted", () => {
    for (const r of report.results) {
      expect(r.run.jobs).toHaveLength(cut.length);
      for (const j of r.run.jobs) {
        expect(j.start).toBeGreaterThanOrEqual(j.submit);
        expect(j.end).toBeGreaterThan(j.start);
      }
      expect(r.metrics.utilization).toBeGreaterThan(0);
      expect(r.metrics.utilization).toBeLessThanOrEqual(1 + 1e-9);
    }
  });

  test("static policies never resize; elastic ones do", () => {
    const by = new Map(report.results.map((r) => [r.policy, r.metrics]));
    expect(by.get("fcfs")!.resizes).toBe(0);
    expect(by.get("easy")!.resizes).toBe(0);
    expect(by.get("ebb")!.resizes).toBeGreaterThan(0);
  });

  test("with no malleable job ebb is EASY with the shortest jobs backfilled first: no resize, every reservation kept, the same jobs at the same sizes", () => {
    const r = runPolicies({ trace: cut, workload: workload(0), policies: ["easy", "ebb"], check: true });
    const [easy, ebb] = [r.results[0]!.run, r.results[1]!.run];
    expect(ebb.resizes).toBe(0);
    expect(ebb.violations).toEqual([]);
    expect(ebb.jobs.map((j) => [j.id, j.startNodes, j.peakNodes, j.end - j.start])).toEqual(easy.jobs.map((j) => [j.id, j.startNodes, j.peakNodes, j.end - j.start]));
    // The order of backfilling differs: some job starts at another time.
    expect(ebb.jobs.some((j, i) => j.start !== easy.jobs[i]!.start)).toBe(true);
  });

  test("the same seed replays the same schedule", () => {
    const again = runPolicies({ trace: cut, workload: workload(0.5), policies: ["ebb"] });
    expect(again.results[0]!.run.jobs).toEqual(report.results.find((r) => r.policy === "ebb")!.run.jobs);
  });
});
