/** seff's report of a job, from ebb's record of it (plain data). */
import { expect, test } from "bun:test";
import type { JobView } from "../../src/api/schemas.ts";
import { seffReport } from "../../src/cli/seff.ts";

const share = (node: string, cpus: number, memMiB: number) => ({ node, cores: cpus === 1 ? "0" : `0-${cpus - 1}`, cpus, memMiB, gpus: [] });
const job = (over: Partial<JobView>): JobView => ({ id: 12, state: "COMPLETED", exitCode: 0, user: "alice", arrayJobId: null, arrayTaskId: null, startTime: "2026-12-01T10:00:00.000Z", endTime: "2026-12-01T10:10:00.000Z", shares: [share("n1", 4, 4096)], usage: { cpuSec: 1200, peakMemMiB: 1024 }, ...over }) as JobView;

test("an ended job on one node: its cores, CPU time over core-walltime, peak memory over what it held", () => {
  expect(seffReport(job({}), "lab", 0)).toBe(
    ["Job ID: 12", "Cluster: lab", "User/Group: alice/alice", "State: COMPLETED (exit code 0)", "Cores: 4", "CPU Utilized: 00:20:00", "CPU Efficiency: 50.00% of 00:40:00 core-walltime", "Job Wall-clock time: 00:10:00", "Memory Utilized: 1.00 GB", "Memory Efficiency: 25.00% of 4.00 GB", ""].join("\n"),
  );
});

test("several nodes, an array task, a running job (0 used so far, with seff's warning), a day's wall clock", () => {
  const r = seffReport(job({ id: 30, arrayJobId: 29, arrayTaskId: 1, state: "RUNNING", exitCode: null, endTime: null, usage: null, startTime: "2026-12-01T00:00:00.000Z", shares: [share("n1", 2, 512), share("n2", 2, 512)] }), "ebb", Date.parse("2026-12-02T01:00:00.000Z"));
  expect(r.split("\n")).toEqual(["Job ID: 30", "Array Job ID: 29_1", "Cluster: ebb", "User/Group: alice/alice", "State: RUNNING", "Nodes: 2", "Cores per node: 2", "CPU Utilized: 00:00:00", "CPU Efficiency: 0.00% of 4-04:00:00 core-walltime", "Job Wall-clock time: 1-01:00:00", "Memory Utilized: 0.00 MB (estimated maximum)", "Memory Efficiency: 0.00% of 1.00 GB (512.00 MB/node)", "WARNING: Efficiency statistics may be misleading for RUNNING jobs.", ""]);
});
