/**
 * `ebb sim` with node availability (issue 34) on a shared trace: a generated availability (a
 * fraction of the nodes are workstations whose owners come and go) beside hpc2n_excerpt, ebb
 * against easy. Only what must hold: every job completes, no node is taken for new work while it
 * is not free, EASY's promise holds under --check (renewed when the availability takes a node
 * away), and the availability was replayed (owners' node-hours, moves weighed).
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runProcess } from "../support/cluster.ts";

const ROOT = join(import.meta.dir, "../..");
const TRACE = join(ROOT, "../shared/workloads/hpc2n_excerpt.swf");
const sim = (...args: string[]) => runProcess([process.execPath, join(ROOT, "src/main.ts"), "sim", "--swf", TRACE, ...args]);

interface Result {
  policy: string;
  jobs: number;
  moves: number;
  movesDeclined: number;
  ownerNodeHours: number;
  availability: { moves: number; declined: number; takenNotFree: number; nodeHours: { owner: number } };
  check: { heads: number; violations: unknown[]; overAllocated: unknown[] };
}

describe("ebb sim --availability-gen", () => {
  test("hpc2n_excerpt, first 600 jobs, generated owners: ebb and easy finish every job, take no node that is not free, keep EASY's promise", async () => {
    const r = await sim("--limit", "600", "--policy", "easy,ebb", "--availability-gen", "--workstations", "0.3", "--owner-every", "14400", "--check", "--json");
    expect(r.stderr).not.toContain("error");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { jobs: number; results: Result[] };
    expect(out.results.map((x) => x.policy)).toEqual(["easy", "ebb"]);
    for (const x of out.results) {
      expect({ policy: x.policy, jobs: x.jobs, takenNotFree: x.availability.takenNotFree, violations: x.check.violations.slice(0, 3) }).toEqual({ policy: x.policy, jobs: out.jobs, takenNotFree: 0, violations: [] });
      expect(x.check.heads).toBeGreaterThan(10);
      // The availability was replayed and its moves weighed.
      expect(x.ownerNodeHours).toBeGreaterThan(0);
      expect(x.moves + x.movesDeclined).toBeGreaterThan(0);
      expect(x.availability.moves).toBe(x.moves);
    }
  });

  test("a bad availability file is refused naming the line and field; the two sources exclude each other", async () => {
    const file = join(tmpdir(), `ebb-availability-${process.pid}.txt`);
    writeFileSync(file, "# owners\n0 1-4 owner\n3600 300 free\n");
    const bad = await sim("--availability", file, "--policy", "easy");
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain(`--availability ${file}: line 3, NODE "300": the cluster has nodes 1..240`);
    const both = await sim("--availability", file, "--availability-gen", "--policy", "easy");
    expect(both.stderr).toContain("--availability FILE and --availability-gen exclude each other");
    const stray = await sim("--owner-stay", "60", "--policy", "easy");
    expect(stray.stderr).toContain("--owner-stay goes with --availability-gen");
  });
});
