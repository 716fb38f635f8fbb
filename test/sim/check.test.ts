/**
 * EASY's promise on the shared traces: every policy that claims it is replayed with `check` on a
 * prefix of each trace (the whole traces take too long for CI under the elastic policies), and no
 * first-in-line job may start after the reservation it got when it became first. `ebb sim --check`
 * itself runs as a process once.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { POLICY_TABLE } from "../../src/sched/policies/index.ts";
import { POLICIES } from "../../src/sched/config.ts";
import { SimCluster } from "../../src/sim/cluster.ts";
import { runPolicies } from "../../src/sim/run.ts";
import { parseSwf, traceJobs } from "../../src/sim/swf.ts";
import { runProcess } from "../support/cluster.ts";

const ROOT = join(import.meta.dir, "../..");
const WORKLOADS = join(ROOT, "../shared/workloads");
const TRACES = [
  { file: "lublin_256.swf", nodes: 256, prefix: 1500 },
  { file: "hpc2n_excerpt.swf", nodes: 240, prefix: 1500 },
];
const claiming = POLICIES.filter((p) => POLICY_TABLE[p].easyPromise);

describe("--check on the shared traces", () => {
  test("easy claims the promise (the suite below cannot be empty)", () => {
    expect(claiming).toContain("easy");
  });
  for (const t of TRACES) {
    const trace = traceJobs(parseSwf(readFileSync(join(WORKLOADS, t.file), "utf8"))).jobs.slice(0, t.prefix);
    for (const malleable of [0.5]) {
      test(`${t.file}, first ${t.prefix} jobs, ${malleable * 100}% malleable: ${claiming.join(", ")} keep EASY's promise`, () => {
        const report = runPolicies({ trace, workload: { nodes: t.nodes, coresPerNode: 1, malleable, seed: 1 }, policies: claiming, check: true });
        for (const r of report.results) {
          expect(r.run.heads).toBeGreaterThan(10);
          expect({ policy: r.policy, violations: r.run.violations.slice(0, 5) }).toEqual({ policy: r.policy, violations: [] });
        }
      });
    }
  }

  test("textbook EASY on the whole lublin_256 trace: mean wait about 97,160 s, utilization 93.6% (two independent implementations)", () => {
    const trace = traceJobs(parseSwf(readFileSync(join(WORKLOADS, "lublin_256.swf"), "utf8"))).jobs;
    const r = runPolicies({ trace, workload: { nodes: 256, coresPerNode: 1, malleable: 0, seed: 1 }, policies: ["easy"], check: true }).results[0]!;
    expect(Math.abs(r.metrics.meanWait - 97_160)).toBeLessThan(50);
    expect(r.metrics.utilization).toBeCloseTo(0.936, 3);
    expect(r.run.violations).toEqual([]);
  });

  test("the check sees broken promises: drms-rs shrinks for the head, which then starts after its reservation", () => {
    const trace = traceJobs(parseSwf(readFileSync(join(WORKLOADS, "hpc2n_excerpt.swf"), "utf8"))).jobs.slice(0, 400);
    const r = runPolicies({ trace, workload: { nodes: 240, coresPerNode: 1, malleable: 0.5, seed: 1 }, policies: ["drms-rs"], check: true }).results[0]!;
    expect(r.run.violations.length).toBeGreaterThan(0);
    for (const v of r.run.violations) expect(v.start).toBeGreaterThan(v.reservation);
  });

  test("ebb sim --check: exit 0, one line per policy, each violation as a row", async () => {
    const r = await runProcess([process.execPath, join(ROOT, "src/main.ts"), "sim", "--swf", join(WORKLOADS, "hpc2n_excerpt.swf"), "--limit", "400", "--check", "--policy", "easy,drms-rs"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/check easy: 0 of \d+ first-in-line job\(s\) started after their reservation\n/);
    expect(r.stdout).toMatch(/check drms-rs: [1-9]\d* of \d+ first-in-line job\(s\) started after their reservation \(the policy does not claim EASY's promise\)/);
    expect(r.stdout).toMatch(/JOB +RESERVATION +START +LATE BY/);
  });
});

describe("--check on shared nodes (--cores-per-node)", () => {
  for (const t of [
    { file: "lublin_256.swf", procs: 256, prefix: 1000 },
    { file: "hpc2n_excerpt.swf", procs: 240, prefix: 1000 },
  ]) {
    const trace = traceJobs(parseSwf(readFileSync(join(WORKLOADS, t.file), "utf8"))).jobs.slice(0, t.prefix);
    for (const k of [8, 32]) {
      test(`${t.file}, first ${t.prefix} jobs, ${k} cores per node, 50% malleable: ${claiming.join(", ")} keep EASY's promise, no node over-allocated; EASY waits less than on whole nodes`, () => {
        const report = runPolicies({ trace, workload: { nodes: Math.ceil(t.procs / k), coresPerNode: k, shared: true, malleable: 0.5, seed: 1 }, policies: claiming, check: true });
        for (const r of report.results) {
          expect(r.run.heads).toBeGreaterThan(10);
          expect({ policy: r.policy, violations: r.run.violations.slice(0, 5), overAllocated: r.run.overAllocated.slice(0, 5) }).toEqual({ policy: r.policy, violations: [], overAllocated: [] });
          expect(r.run.capacity).toBe(Math.ceil(t.procs / k) * k);
        }
        // Nodes were shared: on whole nodes of the same machine EASY's jobs wait longer.
        const easy = report.results.find((r) => r.policy === "easy")!;
        const whole = runPolicies({ trace, workload: { nodes: Math.ceil(t.procs / k), coresPerNode: k, malleable: 0.5, seed: 1 }, policies: ["easy"] }).results[0]!;
        expect(easy.metrics.meanWait).toBeLessThan(whole.metrics.meanWait);
      });
    }
  }

  test("the check sees an over-allocated node", () => {
    const c = new SimCluster(2, 4, true);
    c.take(["n1"], 1, [{ node: "n1", cores: [0, 1], memMiB: 1000, gpus: [] }]);
    c.take(["n1"], 2, [{ node: "n1", cores: [1, 2], memMiB: 1000, gpus: [] }]);
    c.take(["n2"], 3, [{ node: "n2", cores: [0], memMiB: 5000, gpus: [] }]);
    expect(c.overAllocated).toEqual(["job 2 on n1: cores 1 already held or missing", "job 3 on n2: 5000 MiB of 4096"]);
    expect(c.held).toBe(5);
    c.release(["n1"], 1);
    expect(c.free).toBe(0);
    c.release(["n1"], 2);
    expect(c.free).toBe(1);
  });

  test("ebb sim --cores-per-node --check: exit 0, over-allocations counted", async () => {
    const r = await runProcess([process.execPath, join(ROOT, "src/main.ts"), "sim", "--swf", join(WORKLOADS, "hpc2n_excerpt.swf"), "--limit", "300", "--cores-per-node", "8", "--check", "--policy", "easy,ebb"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/on 30 nodes of 8 cores \(shared\)/);
    expect(r.stdout).toMatch(/check ebb: 0 of \d+ first-in-line job\(s\) started after their reservation; 0 share\(s\) over-allocated a node\n/);
  });
});
