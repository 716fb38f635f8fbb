/**
 * `ebb sim --priority fairshare`: the simulator replays the queue in fair-share order, charging
 * each job's nodes to its user (SWF field 12), and EASY's reservation holds for the first job in
 * priority order.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { resolveConfig, type PolicyName } from "../../src/sched/config.ts";
import { resolvePriority } from "../../src/sched/priority.ts";
import { simulate } from "../../src/sim/engine.ts";
import { withHeavyUser } from "../../src/sim/heavy-user.ts";
import { amdahlWork, type SimJob } from "../../src/sim/job.ts";
import { runPolicies } from "../../src/sim/run.ts";
import { parseSwf, traceJobs } from "../../src/sim/swf.ts";
import { runProcess } from "../support/cluster.ts";

const ROOT = join(import.meta.dir, "../..");
const WORKLOADS = join(ROOT, "../shared/workloads");

const rigid = (id: number, user: string, submit: number, nodes: number, runtime: number): SimJob => ({ id, user, submit, nodes, minNodes: nodes, maxNodes: nodes, malleable: false, estimate: runtime, work: amdahlWork(runtime * nodes, 0), resizeCost: () => 0 });

describe("fair share in the simulator", () => {
  // 2 nodes. A student's array of 20 one-node jobs of 100 s at t=0..19; another user's job at t=50.
  const jobs = [...Array.from({ length: 20 }, (_, i) => rigid(i + 1, "student", i, 1, 100)), rigid(100, "other", 50, 1, 100)];
  const startOf = (policy: PolicyName, fair: boolean) => simulate(jobs, { nodes: 2, config: resolveConfig({ policy }), ...(fair ? { priority: resolvePriority({}) } : {}) }).jobs.find((j) => j.id === 100)!.start;

  for (const policy of ["easy", "ebb"] as const) {
    test(`${policy}: the other user's job starts when the first node frees (t=100), not after the array drains (t=1000)`, () => {
      expect(startOf(policy, false)).toBe(1000);
      expect(startOf(policy, true)).toBe(100);
    });
  }

  test("one user alone: fair share keeps submit order", () => {
    const one = jobs.map((j) => ({ ...j, user: "student" }));
    const order = (fair: boolean) => simulate(one, { nodes: 2, config: resolveConfig({ policy: "easy" }), ...(fair ? { priority: resolvePriority({}) } : {}) }).jobs.map((j) => [j.id, j.start]);
    expect(order(true)).toEqual(order(false));
  });

  for (const t of [
    { file: "lublin_256.swf", nodes: 256 },
    { file: "hpc2n_excerpt.swf", nodes: 240 },
  ]) {
    test(`${t.file}, first 1500 jobs, a heavy user with 30 % of the work: easy and ebb keep EASY's promise in priority order; the others wait less`, () => {
      const all = traceJobs(parseSwf(readFileSync(join(WORKLOADS, t.file), "utf8"))).jobs.slice(0, 1500);
      const { jobs: trace, heavy } = withHeavyUser(all, 0.3);
      const req = { trace, workload: { nodes: t.nodes, coresPerNode: 1, malleable: 0.5, seed: 1 }, policies: ["easy", "ebb"] as PolicyName[], check: true };
      const fair = runPolicies({ ...req, priority: resolvePriority({}) });
      const submit = runPolicies(req);
      for (const r of fair.results) {
        expect(r.run.heads).toBeGreaterThan(10);
        expect({ policy: r.policy, violations: r.run.violations.slice(0, 5) }).toEqual({ policy: r.policy, violations: [] });
      }
      const othersWait = (jobs: typeof fair.results[0]["run"]["jobs"]) => {
        const o = jobs.filter((j) => j.user !== String(heavy));
        return o.reduce((s, j) => s + j.start - j.submit, 0) / o.length;
      };
      expect(othersWait(fair.results[0]!.run.jobs)).toBeLessThan(othersWait(submit.results[0]!.run.jobs));
    });
  }

  test("withHeavyUser on hpc2n: its heaviest user (user 1, 48 % of the work) made to submit 30 %, every other user lighter", () => {
    const all = traceJobs(parseSwf(readFileSync(join(WORKLOADS, "hpc2n_excerpt.swf"), "utf8"))).jobs;
    const a = withHeavyUser(all, 0.3);
    expect(a.heavy).toBe(1);
    const work = new Map<number, number>();
    let total = 0;
    for (const j of a.jobs) {
      total += j.procs * j.runtime;
      work.set(j.user!, (work.get(j.user!) ?? 0) + j.procs * j.runtime);
    }
    expect(work.get(1)! / total).toBeCloseTo(0.3, 2);
    for (const [u, w] of work) if (u !== 1) expect(w / total).toBeLessThan(0.3);
  });

  test("ebb sim --priority fairshare runs; a bad --priority is refused with the choices", async () => {
    const ok = await runProcess([process.execPath, join(ROOT, "src/main.ts"), "sim", "--swf", join(WORKLOADS, "hpc2n_excerpt.swf"), "--limit", "300", "--policy", "easy", "--priority", "fairshare", "--check"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/check easy: 0 of \d+ first-in-line job\(s\)/);
    const bad = await runProcess([process.execPath, join(ROOT, "src/main.ts"), "sim", "--swf", join(WORKLOADS, "hpc2n_excerpt.swf"), "--priority", "fifo"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--priority fifo: choose submit or fairshare");
  });
});
