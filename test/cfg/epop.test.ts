/**
 * The CFG monitoring's EPOP mode (dissertation §10.2.4): a program run by runEpop gets its CFG
 * from its phases, not from detecting its call sites. `ebb run -N 2 -n 4` of a two-phase EPOP
 * program whose iterations each make several comm calls at several sites: the job's CFG has
 * exactly one loop per phase (named by the phase), each run by all 4 ranks as often as the phase
 * iterated, with an MTCT; no loop comes from the call sites.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import type { JobDetail } from "../../src/api/schemas.ts";

const PROGRAM = join(import.meta.dir, "programs/epop-phases.ts");
let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 2 });
});
afterAll(async () => {
  await c?.stop();
});

test("EPOP mode: one loop per phase, named by the phase, none from call sites", async () => {
  const run = await c.ebb(["run", "-N", "2", "-n", "4", "--", process.execPath, PROGRAM, "--a", "30", "--b", "20"]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  expect(run.stdout).toContain("epop-phases: done");
  const jobs = (await c.api("GET", "/v1/jobs")).json.jobs as { id: number }[];
  const id = jobs[jobs.length - 1]!.id;
  const detail = await waitFor("the job's CFG from both nodes", async () => {
    const j = (await c.api("GET", `/v1/jobs/${id}`)).json as JobDetail;
    const loops = j.cfg?.loops.filter((l) => l.distributed) ?? [];
    return loops.length >= 2 && loops.every((l) => l.rankCount === 4) && loops.some((l) => l.visits === 20) ? j : undefined;
  }, 60_000);
  const cfg = detail.cfg!;
  expect(cfg.monitored).toBe(true);
  expect(cfg.ntasks).toBe(4);
  // Only the two phases: the sends, receives, allreduces and bcasts are no CFG nodes.
  expect(cfg.loops).toHaveLength(2);
  const [ring, sum] = [cfg.loops.find((l) => l.head === 2 ** 33 + 1)!, cfg.loops.find((l) => l.head === 2 ** 33 + 2)!];
  expect(ring).toMatchObject({ distributed: true, ranks: "0-3", visits: 30 });
  expect(sum).toMatchObject({ distributed: true, ranks: "0-3", visits: 20 });
  for (const l of [ring, sum]) {
    expect(l.mpiMs).toBeGreaterThan(0);
    expect(l.iterMs).toBeGreaterThan(l.mpiMs);
  }
});

test("while it runs, the API and ebb show name each loop by its phase", async () => {
  // An elastic step reports its structure and samples its CFG every second.
  const run = c.ebbSpawn(["run", "-N", "2", "-n", "4", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "--sample-interval", "1", "--", process.execPath, PROGRAM, "--a", "100000", "--b", "1"]);
  try {
    const loop = await waitFor("the ring phase's loop, named", async () => {
      const jobs = (await c.api("GET", "/v1/jobs?state=RUNNING")).json.jobs as { id: number }[];
      if (jobs.length === 0) return undefined;
      const j = (await c.api("GET", `/v1/jobs/${jobs[0]!.id}`)).json as JobDetail;
      return j.cfg?.loops.find((l) => l.phase === "ring" && l.distributed);
    }, 60_000);
    expect(loop.head).toBe(2 ** 33 + 1);
    const jobs = (await c.api("GET", "/v1/jobs?state=RUNNING")).json.jobs as { id: number }[];
    const shown = await c.ebb(["show", String(jobs[0]!.id)]);
    expect(shown.stdout).toMatch(/CALLS \/ PHASE[\s\S]*phase ring/);
    for (const j of jobs) await c.api("DELETE", `/v1/jobs/${j.id}`);
  } finally {
    run.kill();
    await run.exited;
  }
});
