/**
 * ebb/comm through the real system: ranks started by `ebb run` on agents that are separate
 * processes, wired up through the agents' PMI, every collective checked against plain arithmetic.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startCluster, type TestCluster } from "../support/cluster.ts";
import { expectCollectives } from "../support/comm-expected.ts";
import { parseReports } from "../support/comm-report.ts";
import { expectP2p } from "../support/p2p-expected.ts";

const PROGRAMS = join(import.meta.dir, "../comm/programs");
let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 4 });
});
afterAll(async () => {
  await c?.stop();
});

type Report = { rank: number; size: number; results: Record<string, unknown> };
const reports = (stdout: string): Report[] => (parseReports(stdout) as Report[]).sort((a, b) => a.rank - b.rank);

describe("collectives and point-to-point between ranks on different agents", () => {
  for (const [n, nodes] of [[1, 1], [2, 2], [4, 2], [8, 4]] as const) {
    test(`every collective with every op: ${n} rank(s) on ${nodes} agent(s)`, async () => {
      const r = await c.ebb(["run", "-N", String(nodes), "-n", String(n), "--", process.execPath, join(PROGRAMS, "collectives.ts")]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const got = reports(r.stdout);
      expect(got.map((g) => g.rank)).toEqual(Array.from({ length: n }, (_, i) => i));
      for (const g of got) expectCollectives(g, n, g.rank);
    });
  }

  test("every collective, 4 ranks on 2 agents, wired up over PMI_PORT (--pmi-port) with pipelined PMI requests", async () => {
    const r = await c.ebb(["run", "-N", "2", "-n", "4", "--pmi-port", "--", process.execPath, join(PROGRAMS, "collectives.ts")]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const got = reports(r.stdout);
    expect(got.map((g) => g.rank)).toEqual([0, 1, 2, 3]);
    for (const g of got) expectCollectives(g, 4, g.rank);
  });

  test("point-to-point with tags, any-source, every dtype and 4 MiB messages across 3 agents", async () => {
    const r = await c.ebb(["run", "-N", "3", "-n", "3", "--", process.execPath, join(PROGRAMS, "p2p.ts")]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const res = reports(r.stdout).map((g) => g.results);
    expect(res).toHaveLength(3);
    // Ranks on different agents talk over TCP only.
    expectP2p(res, "tcp");
  });
});
