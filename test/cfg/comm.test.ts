/**
 * CFG monitoring of an ebb/comm program through the real system: `ebb run -N 2 -n 4` of a
 * two-phase program; `ebb show --json` must list both phases as distributed loops with MTCT
 * within 20 % of the program's own measurement, and the program's results must equal those of
 * the unmonitored run (--cfg=off).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { parseReports } from "../support/comm-report.ts";
import type { JobDetail } from "../../src/api/schemas.ts";

const PROGRAM = join(import.meta.dir, "programs/phases.ts");
let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 2 });
});
afterAll(async () => {
  await c?.stop();
});

type Phase = { comm: number; compute: number };
type Report = { rank: number; job: string; sum: number; phase: { A: Phase; B: Phase } };
const ARGS = ["30", "30", "20", "10", String(1 << 18)];

describe("CFG monitoring of an ebb/comm program", () => {
  test("two phases -> two distributed loops, MTCT within 20 % of the program's own; results unchanged", async () => {
    const on = await c.ebb(["run", "-N", "2", "-n", "4", "--", process.execPath, PROGRAM, ...ARGS]);
    expect(on.stderr).toBe("");
    expect(on.code).toBe(0);
    const reps = (parseReports(on.stdout) as Report[]).sort((a, b) => a.rank - b.rank);
    expect(reps).toHaveLength(4);
    const jobId = reps[0]!.job;

    // Both nodes' final reports reach the controller after the step; wait for them (no timing).
    const detail = await waitFor("the job's CFG from both nodes", async () => {
      const r = await c.ebb(["show", "--json", jobId]);
      const j = JSON.parse(r.stdout) as JobDetail;
      const loops = j.cfg?.loops.filter((l) => l.distributed) ?? [];
      return loops.length >= 2 && loops.every((l) => l.rankCount === 4) ? j : undefined;
    }, 60_000);
    const cfg = detail.cfg!;
    expect(cfg.monitored).toBe(true);
    expect(cfg.ntasks).toBe(4);
    const dist = cfg.loops.filter((l) => l.distributed);
    // Phase A: allreduce + bcast (collectives); phase B: the p2p ring (collapsed to one block, the
    // parity branch matched) and the alltoall.
    const a = dist.find((l) => l.key.includes("collective") && !l.key.includes("p2p"))!;
    const b = dist.find((l) => l.key.includes("p2p"))!;
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect(a.ranks).toBe("0-3");
    expect(b.ranks).toBe("0-3");
    expect(a.visits).toBe(30);
    expect(b.visits).toBe(30);

    const own = (k: "A" | "B") => {
      const comm = reps.reduce((s, r) => s + r.phase[k].comm, 0);
      const compute = reps.reduce((s, r) => s + r.phase[k].compute, 0);
      return comm / compute;
    };
    // The controller's MTCT of a loop is its newest window; the whole-run figure is mpiMs/(iterMs - mpiMs).
    const whole = (l: typeof a) => l.mpiMs / (l.iterMs - l.mpiMs);
    expect(Math.abs(whole(a) / own("A") - 1)).toBeLessThan(0.2);
    expect(Math.abs(whole(b) / own("B") - 1)).toBeLessThan(0.2);
    expect(own("B")).toBeGreaterThan(own("A"));

    const shown = await c.ebb(["show", jobId]);
    expect(shown.stdout).toContain("Communication loops (4 ranks");
    expect(shown.stdout).toContain("0-3");

    // Unmonitored: same results.
    const off = await c.ebb(["run", "-N", "2", "-n", "4", "--cfg=off", "--", process.execPath, PROGRAM, ...ARGS]);
    expect(off.code).toBe(0);
    const offReps = (parseReports(off.stdout) as Report[]).sort((x, y) => x.rank - y.rank);
    expect(offReps.map((x) => x.sum)).toEqual(reps.map((x) => x.sum));
    const offDetail = JSON.parse((await c.ebb(["show", "--json", offReps[0]!.job])).stdout) as JobDetail;
    expect(offDetail.cfg).toBeNull();
  });
});
