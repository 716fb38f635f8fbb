/**
 * CFG monitoring of an unmodified MPICH program: the agent builds the interposition library with
 * mpicc at first need and preloads it. `ebb run -N 2 -n 4` of a two-phase C program: both phases
 * are distributed loops with MTCT within 20 % of the program's own measurement, and the output
 * equals the unmonitored run's (--cfg=off).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { JobDetail } from "../../src/api/schemas.ts";
import { startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { parseReports } from "../support/comm-report.ts";
import { compileMpi } from "../support/mpi.ts";
import { kneeNodes } from "../../src/model/scaling.ts";

let c: TestCluster;
let phases: string | undefined;
beforeAll(async () => {
  phases = await compileMpi("cfg-phases", readFileSync(join(import.meta.dir, "programs/phases.c"), "utf8"));
  c = await startCluster({ agents: 2 });
});
afterAll(async () => {
  await c?.stop();
});

type Phase = { comm: number; compute: number };
type Report = { rank: number; job: string; sum: number; phase: { A: Phase; B: Phase } };
const ARGS = ["30", "30", "20", "10", String(1 << 18)];

describe("CFG monitoring of an MPICH program (PMPI interposition)", () => {
  test("two phases -> two distributed loops, MTCT within 20 % of the program's own; output unchanged", async () => {
    if (!phases) return;
    const on = await c.ebb(["run", "-N", "2", "-n", "4", phases, ...ARGS]);
    expect(on.stderr).toBe("");
    expect(on.code).toBe(0);
    const reps = (parseReports(on.stdout) as Report[]).sort((a, b) => a.rank - b.rank);
    expect(reps).toHaveLength(4);
    const jobId = reps[0]!.job;
    const detail = await waitFor("the job's CFG from both nodes", async () => {
      const j = JSON.parse((await c.ebb(["show", "--json", jobId])).stdout) as JobDetail;
      const loops = j.cfg?.loops.filter((l) => l.distributed) ?? [];
      return loops.length >= 2 && loops.every((l) => l.rankCount === 4) ? j : undefined;
    }, 60_000);
    const dist = detail.cfg!.loops.filter((l) => l.distributed);
    const a = dist.find((l) => l.key.includes("collective") && !l.key.includes("p2p"))!;
    const b = dist.find((l) => l.key.includes("p2p"))!;
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect([a.ranks, b.ranks, a.visits, b.visits]).toEqual(["0-3", "0-3", 30, 30]);
    const own = (k: "A" | "B") => reps.reduce((s, r) => s + r.phase[k].comm, 0) / reps.reduce((s, r) => s + r.phase[k].compute, 0);
    const whole = (l: typeof a) => l.mpiMs / (l.iterMs - l.mpiMs);
    expect(Math.abs(whole(a) / own("A") - 1)).toBeLessThan(0.2);
    expect(Math.abs(whole(b) / own("B") - 1)).toBeLessThan(0.2);

    // After the end, the seff-like line: communication share per loop, the model's best size.
    const ended = await waitFor("the efficiency line after the job's end", async () => {
      const j = JSON.parse((await c.ebb(["show", "--json", jobId])).stdout) as JobDetail;
      return j.cfg?.efficiency ?? undefined;
    }, 60_000);
    expect(ended.nodes).toBe(2);
    const share = (k: "A" | "B") => own(k) / (1 + own(k));
    const effA = ended.loops.find((l) => l.key === a.key)!;
    const effB = ended.loops.find((l) => l.key === b.key)!;
    expect(Math.abs(effA.commShare / share("A") - 1)).toBeLessThan(0.2);
    expect(Math.abs(effB.commShare / share("B") - 1)).toBeLessThan(0.2);
    // Compute-heavy A has the smaller share and a best size at least B's (the absolute values
    // depend on the machine: 4 busy-polling ranks on a loaded 2-core box wait in MPI); each best
    // size is the knee of the loop's measured MTCT and near the knee of the program's own.
    expect(effA.commShare).toBeLessThan(effB.commShare);
    expect(effA.bestNodes!).toBeGreaterThanOrEqual(effB.bestNodes!);
    for (const [e, k] of [[effA, "A"], [effB, "B"]] as const) {
      expect(e.bestNodes).toBe(kneeNodes(2, e.mtct!));
      expect(Math.abs(e.bestNodes! - kneeNodes(2, own(k)))).toBeLessThanOrEqual(Math.max(1, 0.25 * kneeNodes(2, own(k))));
    }
    const shown = (await c.ebb(["show", jobId])).stdout;
    expect(shown).toMatch(/Efficiency: communication [\d.]+ % of loop time on 2 nodes; the model's best size \(efficiency per run time\): \d+ nodes?/);
    expect(shown).toMatch(/per loop: L\d [\d.]+ % \(best \d+ nodes?\), L\d [\d.]+ % \(best \d+ nodes?\)/);

    const off = await c.ebb(["run", "-N", "2", "-n", "4", "--cfg=off", phases, ...ARGS]);
    expect(off.code).toBe(0);
    const offReps = (parseReports(off.stdout) as Report[]).sort((x, y) => x.rank - y.rank);
    expect(offReps.map((x) => x.sum)).toEqual(reps.map((x) => x.sum));
  });
});

describe("--sample-interval applies to rigid jobs too", () => {
  test("a rigid MPI job with a 0.5 s interval reports its loops while it runs", async () => {
    if (!phases) return;
    // About 6 s of phase A then phase B; the default interval (60 s) would report only at the end.
    const proc = c.ebbSpawn(["run", "-N", "2", "-n", "4", "--sample-interval", "0.5", phases, "300", "100", "20", "10", String(1 << 16)]);
    let exited = false;
    void proc.exited.then(() => (exited = true));
    try {
      const job = await waitFor("the running job", async () => (await c.api("GET", "/v1/jobs?state=RUNNING")).json.jobs[0], 60_000);
      expect(job.elastic).toBe(false);
      const seen = await waitFor("a CFG report of the running job", async () => {
        const j = (await c.api("GET", `/v1/jobs/${job.id}`)).json as JobDetail;
        const loop = j.cfg?.loops.find((l) => l.distributed && l.iterations > 0);
        return loop ? { state: j.state, loop, exited } : undefined;
      }, 60_000);
      // Seen while the step still ran: not its final report.
      expect(seen.exited).toBe(false);
      expect(seen.state).toBe("RUNNING");
      expect(seen.loop.rankCount).toBe(4);
      expect(seen.loop.visits).toBeLessThan(300);
      // ... and again later, with more iterations (a second window while running).
      const later = await waitFor("a later CFG report", async () => {
        const j = (await c.api("GET", `/v1/jobs/${job.id}`)).json as JobDetail;
        const l = j.cfg?.loops.find((x) => x.key === seen.loop.key);
        return l && l.iterations > seen.loop.iterations ? { l, exited } : undefined;
      }, 60_000);
      expect(later.l.iterations).toBeGreaterThan(seen.loop.iterations);
      expect((await proc.exited)).toBe(0);
    } finally {
      if (!exited) proc.kill("SIGKILL");
    }
  });
});

describe("CFG monitoring without mpicc on the nodes", () => {
  let bare: TestCluster;
  afterAll(async () => {
    await bare?.stop();
  });

  test("the MPI step runs unmonitored and ebb show says why", async () => {
    if (!phases) return;
    // The agents' PATH has no mpicc (ranks are started by absolute path).
    bare = await startCluster({ agents: 1, agentEnv: { PATH: "/nonexistent" } });
    const r = await bare.ebb(["run", "-N", "1", "-n", "2", phases, "3", "3", "1", "1", "4096"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const reps = parseReports(r.stdout) as Report[];
    expect(reps).toHaveLength(2);
    const jobId = reps[0]!.job;
    const j = await waitFor("the job's monitoring report", async () => {
      const d = JSON.parse((await bare.ebb(["show", "--json", jobId])).stdout) as JobDetail;
      return d.cfg ?? undefined;
    }, 60_000);
    expect(j.monitored).toBe(false);
    expect(j.reason).toContain("mpicc not found");
    expect((await bare.ebb(["show", jobId])).stdout).toContain("Communication loops: not monitored (mpicc not found");
  });
});
