/**
 * Nested loops of unmodified MPICH programs under the PMPI CFG library: a halo function called
 * three times per time step, a time step whose body holds two distributed loops, a recursive
 * exchange. `ebb run -N 2 -n 2 --sample-interval 1` of each (test/cfg/programs/nest.c):
 *   - while it runs, the job's timing samples (what the scheduler reads) fill as its CFG updates;
 *   - the loops form a forest: the time-step loop is the one root, run as often as the program
 *     stepped, current, with every other loop nested in it;
 *   - its MTCT is inclusive (the nested exchanges' MPI time is in it): within 20 % of the
 *     program's own measurement; the samples the scheduler reads are its windows, one for one
 *     (the same value, not another loop's);
 *   - `ebb show` prints every loop, the nested ones indented under the time step, an efficiency
 *     line with the communication share, and the MTCT line of the samples it lists.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { JobDetail } from "../../src/api/schemas.ts";
import { startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { parseReports } from "../support/comm-report.ts";
import { compileMpi } from "../support/mpi.ts";

let c: TestCluster;
let nest: string | undefined;
beforeAll(async () => {
  nest = await compileMpi("cfg-nest", readFileSync(join(import.meta.dir, "programs/nest.c"), "utf8"));
  c = await startCluster({ agents: 2 });
});
afterAll(async () => {
  await c?.stop();
});

type Report = { rank: number; job: string; sum: number; comm: number; compute: number };
type Loop = NonNullable<JobDetail["cfg"]>["loops"][number];

const STEPS = 150;
const detail = async (id: number | string) => (await c.api("GET", `/v1/jobs/${id}`)).json as JobDetail;
const whole = (l: Loop) => l.mpiMs / (l.iterMs - l.mpiMs);

/** What each program's loops under the time step look like: their keys, in order. */
const NESTED: Record<string, (keys: string[]) => void> = {
  halo: (keys) => expect(keys).toEqual(["p2p"]),
  two: (keys) => {
    expect(keys).toHaveLength(2);
    expect(keys).toContain("p2p");
    expect(keys.find((k) => k !== "p2p")).toMatch(/^collective@\d+$/);
  },
  rec: (keys) => {
    expect(keys).toHaveLength(2);
    expect(keys).toContain("p2p");
    expect(keys.find((k) => k !== "p2p")).toMatch(/^collective@\d+$/);
  },
};

describe("nested loops of MPICH programs: the forest, inclusive MTCT, the scheduler's MTCT", () => {
  for (const mode of ["halo", "two", "rec"] as const) {
    test(mode, async () => {
      if (!nest) return;
      const before = ((await c.api("GET", "/v1/jobs?limit=1")).json.jobs[0]?.id as number | undefined) ?? 0;
      const proc = c.ebbSpawn(["run", "-N", "2", "-n", "2", "--sample-interval", "1", nest, mode, String(STEPS), "10", "65536"]);
      let exited = false;
      void proc.exited.then(() => (exited = true));
      try {
        const job = await waitFor("the running job", async () => ((await c.api("GET", "/v1/jobs?state=RUNNING")).json.jobs as { id: number }[]).find((x) => x.id > before), 60_000);
        // While it runs: the CFG's time step reports iterations, and the samples fill with it.
        const running = await waitFor("timing samples while the job runs", async () => {
          const j = await detail(job.id);
          return j.state === "RUNNING" && !exited && j.samples.length > 0 && j.cfg?.current ? j : undefined;
        }, 60_000);
        const cur = running.cfg!.loops.find((l) => l.key === running.cfg!.current)!;
        expect(cur.parent).toBeNull();
        expect(cur.key).toMatch(/collective@/);
        expect(await proc.exited).toBe(0);
      } finally {
        if (!exited) proc.kill("SIGKILL");
      }
      const out = await new Response(proc.stdout).text();
      const reps = parseReports(out) as Report[];
      expect(reps).toHaveLength(2);
      const id = reps[0]!.job;
      const j = await waitFor("the job's final CFG", async () => {
        const d = await detail(id);
        const root = d.cfg?.loops.find((l) => l.parent === null && l.distributed);
        return d.cfg?.efficiency && root?.visits === STEPS ? d : undefined;
      }, 60_000);
      const cfg = j.cfg!;

      // The forest: one root, the time step, run as often as the program stepped; all else in it.
      const roots = cfg.loops.filter((l) => l.parent === null);
      expect(roots).toHaveLength(1);
      const step = roots[0]!;
      expect(step).toMatchObject({ distributed: true, ranks: "0-1", visits: STEPS });
      expect(cfg.current).toBe(step.key);
      const nested = cfg.loops.filter((l) => l !== step);
      for (const l of nested) expect([l.key, l.parent]).toEqual([l.key, step.key]);
      NESTED[mode]!(nested.map((l) => l.key).sort());

      // Inclusive: the time step's MPI time holds its nested exchanges (the program's own count).
      const own = reps.reduce((a, r) => a + r.comm, 0) / reps.reduce((a, r) => a + r.compute, 0);
      expect(Math.abs(whole(step) / own - 1)).toBeLessThan(0.2);

      // The scheduler reads the time step: each sample it got is one of the time step's windows
      // (the newest ones: the loop keeps 16), so its MTCT is the time step's inclusive MTCT.
      expect(j.samples.length).toBeGreaterThanOrEqual(2);
      const windows = step.iter.recent.map((it, i) => step.mpi.recent[i]! / (it - step.mpi.recent[i]!));
      const k = Math.min(j.samples.length, windows.length - 1);
      const sampled = j.samples.slice(-k).map((s) => s.mtct);
      for (const [i, w] of windows.slice(-k).entries()) expect(Math.abs(sampled[i]! / w - 1)).toBeLessThan(1e-6);
      expect(j.samples.at(-1)!.mtct).toBe(step.mtct!);

      // What a user reads.
      const shown = (await c.ebb(["show", id])).stdout;
      const table = shown.slice(shown.indexOf("Communication loops ("), shown.indexOf("\nEfficiency:"));
      const rows = table.split("\n").filter((l) => /^\s+L\d/.test(l));
      expect(rows).toHaveLength(cfg.loops.length);
      expect(rows[0]).toMatch(/^ {2}L1\* +0-1 +yes +150 /);
      for (const r of rows.slice(1)) expect(r).toMatch(/^ {4}L\d+ /);
      expect(shown).toMatch(/Efficiency: communication [\d.]+ % of loop time on 2 nodes/);
      expect(shown).not.toContain("communication 0.0 %");
      const mtctLine = shown.split("\n").find((l) => l.startsWith("MTCT"))!;
      expect(mtctLine).toContain(j.samples.at(-1)!.mtct.toFixed(4));
      expect(shown).toContain("Timing samples (MTCT per 1 s window");
    }, 180_000);
  }
});
