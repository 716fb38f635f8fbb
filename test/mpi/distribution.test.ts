/**
 * -m/--distribution with an unmodified MPICH program on 3 agents: every rank's node, Slurm's
 * variables and MPICH's own view of who shares its node (built from PMI_process_mapping) agree
 * with the layout asked for, and collectives across the nodes work. Under ebb run, srun, and
 * srun in a batch script whose #SBATCH -m sets the default.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startCluster, type TestCluster } from "../support/cluster.ts";
import { mpi } from "./programs.ts";

const where = await mpi("where");

let c: TestCluster;
beforeAll(async () => {
  if (where) c = await startCluster({ agents: 3, cpus: 4 });
});
afterAll(async () => {
  await c?.stop();
});

type Line = Record<string, string>;
const parse = (stdout: string): Line[] =>
  stdout
    .split("\n")
    .filter((l) => l.startsWith("where "))
    .map((l) => Object.fromEntries(l.slice(6).trim().split(" ").map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)])))
    .sort((a, b) => Number(a.rank) - Number(b.rank));

/** Checks every rank of a step of `size` ranks against `nodeOf` (the step's node index of each rank). */
function expectLayout(lines: Line[], nodeOf: number[], dist?: string): void {
  const size = nodeOf.length;
  expect(lines.map((l) => Number(l.rank))).toEqual(nodeOf.map((_, r) => r));
  const byNode = nodeOf.map((_, n) => nodeOf.flatMap((m, r) => (m === n ? [r] : []))).filter((rs) => rs.length > 0);
  // One node name per step node index, each index's ranks on one host.
  const names = new Map<string, string>();
  for (const l of lines) {
    const r = Number(l.rank);
    const here = byNode[nodeOf[r]!]!;
    expect(l.procid).toBe(String(r));
    expect(l.size).toBe(String(size));
    expect(l.sum).toBe(String((size * (size - 1)) / 2));
    expect(l.nodeid).toBe(String(nodeOf[r]));
    expect(l.localid).toBe(String(here.indexOf(r)));
    expect(l.gtids).toBe(here.join(","));
    // MPICH's node communicator: the ranks PMI_process_mapping puts on this node, in order.
    expect(l.mpilocalsize).toBe(String(here.length));
    expect(l.mpilocal).toBe(String(here.indexOf(r)));
    expect(l.lowest).toBe(String(here[0]));
    if (dist !== undefined) expect(l.dist).toBe(dist);
    const seen = names.get(l.nodeid!);
    if (seen === undefined) names.set(l.nodeid!, l.node!);
    else expect(l.node).toBe(seen);
  }
  expect(new Set(names.values()).size).toBe(names.size);
}

describe.skipIf(!where)("-m cyclic and plane=N with MPICH", () => {
  test("ebb run -m cyclic, 6 ranks on 3 nodes: rank r on node r mod 3", async () => {
    const r = await c.ebb(["run", "-N", "3", "-n", "6", "-m", "cyclic", where!]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expectLayout(parse(r.stdout), [0, 1, 2, 0, 1, 2]);
  });

  test("ebb run -m cyclic, 5 ranks on 2 nodes (3 + 2), and the block layout beside it", async () => {
    const cyclic = await c.ebb(["run", "-N", "2", "-n", "5", "--distribution=cyclic", where!]);
    expect(cyclic.code).toBe(0);
    expectLayout(parse(cyclic.stdout), [0, 1, 0, 1, 0]);
    const block = await c.ebb(["run", "-N", "2", "-n", "4", "-m", "block", where!]);
    expect(block.code).toBe(0);
    expectLayout(parse(block.stdout), [0, 0, 1, 1]);
  });

  test("srun -m plane=2 -n 6 inside a 3-node job, and srun without -m taking #SBATCH -m cyclic:cyclic", async () => {
    writeFileSync(
      join(c.dir, "dist.sh"),
      ["#!/bin/bash", "#SBATCH -N 3", "#SBATCH --ntasks-per-node=2", "#SBATCH -m cyclic:cyclic", "#SBATCH -o dist-%j.out", `srun -n 6 ${where}`, "echo ---", `srun -n 6 -m plane=2 ${where}`, "echo ---", `srun -n 3 -N 3 -m block ${where}`].join("\n") + "\n",
    );
    const sub = await c.ebb(["submit", "dist.sh"]);
    expect(sub.code).toBe(0);
    expect(sub.stderr).toContain("the :cyclic level is ignored");
    const id = Number(/Submitted batch job (\d+)/.exec(sub.stdout)?.[1]);
    const job = await c.waitJob(id, ["COMPLETED", "FAILED"], 120_000);
    const out = readFileSync(join(c.dir, `dist-${id}.out`), "utf8");
    expect(job.state, out).toBe("COMPLETED");
    const [fromJob, plane, block] = out.split("---\n");
    expectLayout(parse(fromJob!), [0, 1, 2, 0, 1, 2], "cyclic:cyclic");
    expectLayout(parse(plane!), [0, 0, 1, 1, 2, 2], "plane");
    expectLayout(parse(block!), [0, 1, 2], "block");
  });
});

