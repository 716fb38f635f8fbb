/** Unmodified MPICH programs under ebb: 4 agents as separate processes, ranks launched through the tree. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { mpi, pmi2 } from "./programs.ts";

const hello = await mpi("hello");
const comms = await mpi("comms");
const pmi2Client = await pmi2();
const gated = await mpi("gated");
const universe = await mpi("universe");

let c: TestCluster;
beforeAll(async () => {
  if (hello) c = await startCluster({ agents: 4, cpus: 4 });
});
afterAll(async () => {
  await c?.stop();
});

function parse(stdout: string, prefix: string) {
  return stdout
    .split("\n")
    .filter((l) => l.startsWith(prefix))
    .map((l) => Object.fromEntries(l.slice(prefix.length).trim().split(" ").map((kv) => kv.split("=") as [string, string])));
}

describe.skipIf(!hello)("hello + MPI_Allreduce", () => {
  for (const [ranks, nodes] of [[1, 1], [2, 1], [2, 2], [4, 1], [4, 2], [4, 4], [8, 2], [8, 4]] as const) {
    test(`${ranks} rank(s) on ${nodes} node(s)`, async () => {
      const r = await c.ebb(["run", "-N", String(nodes), "-n", String(ranks), hello!]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const out = parse(r.stdout, "hello").sort((a, b) => Number(a.rank) - Number(b.rank));
      expect(out.map((o) => Number(o.rank))).toEqual(Array.from({ length: ranks }, (_, i) => i));
      const perNode = ranks / nodes;
      const used = [...new Set(out.map((o) => o.node))];
      expect(used).toHaveLength(nodes);
      for (const o of out) {
        expect(o.size).toBe(String(ranks));
        expect(o.sum).toBe(String((ranks * (ranks - 1)) / 2));
        expect(o.node).toBe(used[Math.floor(Number(o.rank) / perNode)]);
      }
    });
  }

  test("through a deeper tree (--fanout 2 over 4 nodes, --fanout 1: a chain): launch, fences and output relayed by agents", async () => {
    for (const fanout of ["2", "1"]) {
      const r = await c.ebb(["run", "-N", "4", "-n", "8", "--fanout", fanout, hello!]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const out = parse(r.stdout, "hello");
      expect(out.map((o) => Number(o.rank)).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(new Set(out.map((o) => o.node)).size).toBe(4);
      expect(out.every((o) => o.sum === "28")).toBe(true);
    }
  });

  test("PMI_PORT + PMI_ID instead of an inherited socket", async () => {
    const r = await c.ebb(["run", "-N", "2", "-n", "4", "--pmi-port", hello!]);
    expect(r.code).toBe(0);
    expect(parse(r.stdout, "hello").map((o) => o.sum)).toEqual(["6", "6", "6", "6"]);
  });

  test("--mpi=pmi1 serves PMI-1 only, and MPICH still runs", async () => {
    const r = await c.ebb(["run", "-N", "2", "-n", "2", "--mpi=pmi1", hello!]);
    expect(r.code).toBe(0);
    expect(parse(r.stdout, "hello")).toHaveLength(2);
  });

  test("--mpi=pmi2 with MPICH 4.0 (a PMI-1 client): the step fails saying what to use", async () => {
    const r = await c.ebb(["run", "-N", "1", "-n", "1", "--mpi=pmi2", hello!]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("this MPI speaks PMI-1; use --mpi pmi1 or both");
  });

  test("MPICH's PMI version switch (MPIR_CVAR_PMI_VERSION=2): hello + allreduce", async () => {
    // MPICH 4.0.2 has no PMI-2 client and ignores the switch; from 4.1 on it selects PMI-2.
    const r = await c.ebb(["run", "-N", "2", "-n", "4", hello!], { env: { MPIR_CVAR_PMI_VERSION: "2" } });
    expect(r.code).toBe(0);
    expect(parse(r.stdout, "hello").map((o) => o.sum)).toEqual(["6", "6", "6", "6"]);
  });

  test("from inside a batch script", async () => {
    writeFileSync(join(c.dir, "mpi.sh"), `#!/bin/sh\n#EBB -N 2 -n 4\nebb run -n 4 ${hello}\n`);
    const sub = await c.ebb(["submit", "--parsable", "mpi.sh"]);
    const id = Number(sub.stdout.trim());
    const job = await c.waitJob(id, ["COMPLETED", "FAILED"]);
    expect(job.state).toBe("COMPLETED");
    const out = parse(c.read(`ebb-${id}.out`), "hello");
    expect(out.map((o) => Number(o.rank)).sort()).toEqual([0, 1, 2, 3]);
    expect(new Set(out.map((o) => o.node))).toEqual(new Set(job.allocation));
  });

  test("submitted as a command job through the HTTP API", async () => {
    const id = await c.submit({ argv: [hello!], nodes: 2, tasks: 4 });
    const job = await c.waitJob(id, ["COMPLETED", "FAILED"]);
    expect(job.state).toBe("COMPLETED");
    expect(parse(c.read(job.output), "hello")).toHaveLength(4);
  });
});

describe.skipIf(!gated)("fences of a one-node step", () => {
  test("end on the node: its ranks get through MPI_Init and MPI_Barrier while ebb run is stopped", async () => {
    const dir = mkdtempSync(join(c.dir, "gated-"));
    const run = c.ebbSpawn(["run", "-N", "1", "-n", "2", gated!], { cwd: dir });
    try {
      await waitFor("both ranks to start", () => existsSync(join(dir, "waiting.0")) && existsSync(join(dir, "waiting.1")));
      run.kill("SIGSTOP");
      writeFileSync(join(dir, "go"), "");
      await waitFor("both ranks past MPI_Barrier", () => existsSync(join(dir, "done.0")) && existsSync(join(dir, "done.1")));
    } finally {
      run.kill("SIGCONT");
    }
    expect(await run.exited).toBe(0);
  });
});

describe.skipIf(!comms)("point-to-point and collectives on several communicators", () => {
  for (const [ranks, nodes] of [[3, 3], [4, 2], [8, 4]] as const) {
    test(`${ranks} ranks on ${nodes} nodes`, async () => {
      const r = await c.ebb(["run", "-N", String(nodes), "-n", String(ranks), comms!]);
      expect(r.stdout).not.toContain("bad");
      expect(r.code).toBe(0);
      const ok = parse(r.stdout, "ok");
      expect(ok.map((o) => Number(o.rank)).sort((a, b) => a - b)).toEqual(Array.from({ length: ranks }, (_, i) => i));
    });
  }
});

describe.skipIf(!pmi2Client)("the PMI-2 wire with a real PMI-2 client (Slurm's libpmi2) across nodes", () => {
  test("KVS fence and get across 2 nodes, process mapping, node attributes with wait", async () => {
    const r = await c.ebb(["run", "-N", "2", "-n", "4", "--mpi=pmi2", pmi2Client!]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = parse(r.stdout, "pmi2").sort((a, b) => Number(a.rank) - Number(b.rank));
    expect(out).toHaveLength(4);
    for (const o of out) {
      expect(o.sum).toBe("10");
      expect(o.map).toBe("(vector,(0,2,2))");
      expect(o.leader).toBe(o.node);
    }
  });
});

describe.skipIf(!universe)("MPI_UNIVERSE_SIZE", () => {
  test("a rigid job cannot grow: unset, as under Hydra with no slot count", async () => {
    const r = await c.ebb(["run", "-N", "2", "-n", "4", universe!]);
    expect(r.code).toBe(0);
    const out = parse(r.stdout, "universe");
    expect(out).toHaveLength(4);
    for (const o of out) expect(o).toMatchObject({ size: "4", set: "0" });
  });

  test("an elastic job: what it may grow to, its maximum nodes' slots", async () => {
    const r = await c.ebb(["run", "-N", "2", "--tasks-per-node", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "3", universe!]);
    expect(r.code).toBe(0);
    const out = parse(r.stdout, "universe");
    expect(out).toHaveLength(4);
    for (const o of out) expect(o).toMatchObject({ size: "4", set: "1", universe: "6" });
  });
});
