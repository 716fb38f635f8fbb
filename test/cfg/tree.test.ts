/**
 * The distributed CFG reduction over the launch tree (§10.2.3) and across an elastic grow:
 * - `ebb run --fanout 1 -N 3`: the tree is a chain (launcher -> node 0 -> node 1 -> node 2), so
 *   node 2's loops reach the controller only if every level merges its children's CFG into its
 *   own: the job's CFG must show ranks 0-2 in one distributed loop.
 * - An elastic job grown from 1 to 2 nodes: the joining step's ranks and the first step's ranks
 *   are one world, and the job's CFG covers both (ranks 0-1, distributed), not only the newest step.
 * - The CFG is kept in SQLite: after the controller is killed and restarted, `GET /v1/jobs/:id`
 *   returns the same `cfg`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { COUNTER, elasticRun } from "../support/elastic-run.ts";
import type { JobDetail } from "../../src/api/schemas.ts";
import { parseReports } from "../support/comm-report.ts";

const PROGRAM = join(import.meta.dir, "programs/phases.ts");
let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 3 });
});
afterAll(async () => {
  await c?.stop();
});

const detail = async (id: number | string) => (await c.api("GET", `/v1/jobs/${id}`)).json as JobDetail;

describe("distributed CFG reduction over the launch tree", () => {
  test("a chain of three agents (fan-out 1): every level merges, the job's CFG has ranks 0-2", async () => {
    const r = await c.ebb(["run", "-N", "3", "-n", "3", "--fanout", "1", "--", process.execPath, PROGRAM, "10", "10", "5", "2", "4096"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const jobId = (parseReports(r.stdout) as { job: string }[])[0]!.job;
    const j = await waitFor("the step's merged CFG", async () => {
      const d = await detail(jobId);
      return (d.cfg?.loops.filter((l) => l.distributed).length ?? 0) >= 2 ? d : undefined;
    }, 60_000);
    expect(j.cfg!.ntasks).toBe(3);
    for (const l of j.cfg!.loops.filter((x) => x.distributed)) {
      expect(l.ranks).toBe("0-2");
      expect(l.visits).toBe(10);
    }
  });

  test("an elastic job grown from 1 to 2 nodes: the CFG covers the ranks of both steps", async () => {
    await c.waitNodes(3, "IDLE");
    const job = await elasticRun(c, ["-N", "1", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "--sample-interval", "0.5", "--", process.execPath, COUNTER, "300", "10"], /rank=0 status=new/);
    const a = await c.resize(job.id, 2);
    expect(a.state).toBe("COMMITTED");
    const { code, err } = await job.finished;
    expect(err).toBe("");
    expect(code).toBe(0);
    const j = await waitFor("the job's CFG over both steps", async () => {
      const d = await detail(job.id);
      return d.cfg?.loops.some((l) => l.distributed) ? d : undefined;
    }, 60_000);
    expect(j.cfg!.ntasks).toBe(2);
    const loop = j.cfg!.loops.find((l) => l.distributed)!;
    // Rank 0 ran in the first step, rank 1 joined in the grow's step.
    expect(loop.ranks).toBe("0-1");
    expect(j.steps.length).toBeGreaterThanOrEqual(2);
  });

  test("the job's CFG survives a controller restart (SQLite)", async () => {
    await c.waitNodes(3, "IDLE");
    const r = await c.ebb(["run", "-N", "2", "-n", "2", "--", process.execPath, PROGRAM, "8", "8", "5", "2", "4096"]);
    expect(r.code).toBe(0);
    const jobId = (parseReports(r.stdout) as { job: string }[])[0]!.job;
    const before = await waitFor("the final CFG", async () => {
      const d = await detail(jobId);
      return d.state === "COMPLETED" && (d.cfg?.loops.filter((l) => l.distributed && l.rankCount === 2).length ?? 0) >= 2 ? d.cfg : undefined;
    }, 60_000);
    expect(before!.efficiency).not.toBeNull();
    c.controller.kill("SIGKILL");
    await c.controller.exited;
    await c.startController();
    const after = (await detail(jobId)).cfg;
    expect(after).toEqual(before);
  });
});
