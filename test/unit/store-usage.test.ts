/**
 * ebb usage's sums from the allocation history (store/usage.ts): node-, core- and GPU-seconds per
 * user within the window, a job's cores and GPUs on a node counted from its share ("0,2"), a row
 * from before shares (no cores) counted with the node's CPUs and GPUs, an open row up to now.
 */
import { expect, test } from "bun:test";
import { openDb } from "../../src/store/db.ts";
import { countIndices, JobStore } from "../../src/store/jobs.ts";
import { upsertNode } from "../../src/store/nodes.ts";
import { usageByUser, type UserUsage } from "../../src/store/usage.ts";

const S = 1000;
function run(gen: Generator<void, UserUsage[]>): UserUsage[] {
  for (let r = gen.next(); ; r = gen.next()) if (r.done) return r.value;
}

test("core- and GPU-seconds: a share's cores and GPUs times the time held in the window, a whole-node row's node CPUs and GPUs, an open row up to now", () => {
  const store = new JobStore(openDb(":memory:"));
  const db = store.db;
  for (const name of ["gpu1", "cpu1"]) upsertNode(db, { name, cpus: 4, memoryMb: 1024, gpus: name === "gpu1" ? ["a100", "a100", "a100", "a100"] : [], features: [], addr: "x", status: "UP", reason: null, drain: null, ownerSince: null, registeredAt: 0, updatedAt: 0 });
  const job = (user: string) => store.insertJob({ name: "j", kind: "batch", argv: null, script: "true", nodes: 1, minNodes: 1, maxNodes: 1, timeLimit: 60, env: {}, cwd: "/", submitTime: 0, user });
  // alice: 2 GPUs of gpu1 from 0 to 100 s; the window [50 s, 200 s] holds 50 s of it.
  const a = job("alice");
  store.openAllocation(a, [{ node: "gpu1", cores: [0], memMiB: 10, gpus: [0, 2] }], 0);
  store.closeAllocation(a, 100 * S);
  // bob: gpu1 whole (a row from before shares: 4 GPUs), open since 150 s; now is 180 s. And a CPU-only job.
  const b = job("bob");
  store.openAllocation(b, [{ node: "gpu1", cores: [1], memMiB: 10, gpus: [] }], 150 * S);
  db.$client.run("UPDATE job_nodes SET cores = NULL, gpus = NULL WHERE job_id = ?", [b]);
  const c = job("bob");
  store.openAllocation(c, [{ node: "cpu1", cores: [0, 1], memMiB: 10, gpus: [] }], 60 * S);
  store.closeAllocation(c, 70 * S);
  const byUser = Object.fromEntries(run(usageByUser(db.$client, 50 * S, 200 * S, 180 * S, { chunk: 1 })).map((u) => [u.user, u]));
  expect(byUser.alice!.gpuSeconds).toBeCloseTo(2 * 50, 6);
  expect(byUser.bob!.gpuSeconds).toBeCloseTo(4 * 30, 6);
  expect(byUser.bob!.nodeSeconds).toBeCloseTo(30 + 10, 6);
  // alice held 1 of gpu1's 4 cores; bob all 4 of it (whole), then 2 of cpu1's.
  expect(byUser.alice!.coreSeconds).toBeCloseTo(1 * 50, 6);
  expect(byUser.bob!.coreSeconds).toBeCloseTo(4 * 30 + 2 * 10, 6);
  expect(run(usageByUser(db.$client, 50 * S, 200 * S, 180 * S, { user: "alice" })).map((u) => [u.user, u.gpuSeconds])).toEqual([["alice", 100]]);
});

test("countIndices counts a range list without listing it", () => {
  expect(["", "3", "0-3,8", "0,1", "2-2,5-7"].map(countIndices)).toEqual([0, 1, 5, 2, 4]);
});

test("a node's usage report goes on the job's latest row there: CPU seconds summed over its rows, the most memory of one; a node it never held takes none", () => {
  const store = new JobStore(openDb(":memory:"));
  for (const name of ["n1", "n2", "n3"]) upsertNode(store.db, { name, cpus: 4, memoryMb: 1024, gpus: [], features: [], addr: "x", status: "UP", reason: null, drain: null, ownerSince: null, registeredAt: 0, updatedAt: 0 });
  const job = store.insertJob({ name: "j", kind: "batch", argv: null, script: "true", nodes: 2, minNodes: 1, maxNodes: 2, timeLimit: 60, env: {}, cwd: "/", submitTime: 0 });
  const other = store.insertJob({ name: "k", kind: "batch", argv: null, script: "true", nodes: 1, minNodes: 1, maxNodes: 1, timeLimit: 60, env: {}, cwd: "/", submitTime: 0 });
  // n1 held, given back and held again (a shrink and a grow); n2 held once; the other job on n1 too.
  store.openAllocation(job, [{ node: "n1", cores: [0], memMiB: 10, gpus: [] }, { node: "n2", cores: [0], memMiB: 10, gpus: [] }], 0);
  store.closeAllocation(job, 10 * S, ["n1"]);
  store.openAllocation(job, [{ node: "n1", cores: [1], memMiB: 10, gpus: [] }], 20 * S, 2);
  store.openAllocation(other, [{ node: "n1", cores: [2], memMiB: 10, gpus: [] }], 0);
  expect(store.recordNodeUsage(job, "n1", 3, 100)).toEqual({ cpuSec: 3, peakMemMiB: 100 });
  expect(store.recordNodeUsage(job, "n2", 2, 300)).toEqual({ cpuSec: 5, peakMemMiB: 300 });
  // A later report from n1 replaces its earlier one.
  expect(store.recordNodeUsage(job, "n1", 4, 50)).toEqual({ cpuSec: 6, peakMemMiB: 300 });
  expect(store.recordNodeUsage(job, "n3", 1, 1)).toBeUndefined();
  // A job of one row: its totals are the report (no sum asked), as the sums would read them back.
  expect(store.recordNodeUsage(other, "n1", 0.1 + 0.2, 7.25)).toEqual({ cpuSec: 0.1 + 0.2, peakMemMiB: 7.25 });
  expect(store.db.$client.query(`SELECT coalesce(sum(cpu_sec), 0) AS cpuSec, coalesce(max(peak_mem_mib), 0) AS peakMemMiB FROM job_nodes WHERE job_id = ${other}`).get()).toEqual({ cpuSec: 0.1 + 0.2, peakMemMiB: 7.25 });
  const rows = store.db.$client.query("SELECT job_id, node, cpu_sec, peak_mem_mib FROM job_nodes ORDER BY id").values();
  expect(rows).toEqual([
    [job, "n1", null, null],
    [job, "n2", 2, 300],
    [job, "n1", 4, 50],
    [other, "n1", 0.1 + 0.2, 7.25],
  ]);
});

test("a node's usage report after the job got a new row there (a grow while it reports) goes on the new row; after its rows are purged, on none", () => {
  const store = new JobStore(openDb(":memory:"));
  for (const name of ["n1", "n2"]) upsertNode(store.db, { name, cpus: 4, memoryMb: 1024, gpus: [], features: [], addr: "x", status: "UP", reason: null, drain: null, ownerSince: null, registeredAt: 0, updatedAt: 0 });
  const job = store.insertJob({ name: "j", kind: "batch", argv: null, script: "true", nodes: 2, minNodes: 1, maxNodes: 2, timeLimit: 60, env: {}, cwd: "/", submitTime: 0 });
  store.openAllocation(job, [{ node: "n1", cores: [0], memMiB: 10, gpus: [] }, { node: "n2", cores: [0], memMiB: 10, gpus: [] }], 0);
  expect(store.recordNodeUsage(job, "n1", 1, 10)).toEqual({ cpuSec: 1, peakMemMiB: 10 });
  expect(store.recordNodeUsage(job, "n2", 2, 20)).toEqual({ cpuSec: 3, peakMemMiB: 20 });
  store.closeAllocation(job, 10 * S, ["n1"]);
  store.openAllocation(job, [{ node: "n1", cores: [1], memMiB: 10, gpus: [] }], 20 * S, 2);
  // The new n1 row takes it; the first keeps its last report.
  expect(store.recordNodeUsage(job, "n1", 5, 30)).toEqual({ cpuSec: 8, peakMemMiB: 30 });
  expect(store.db.$client.query(`SELECT node, cpu_sec FROM job_nodes WHERE job_id = ${job} ORDER BY id`).values()).toEqual([
    ["n1", 1],
    ["n2", 2],
    ["n1", 5],
  ]);
  store.closeAllocation(job, 30 * S);
  store.markEnded(job, "COMPLETED", 30 * S, 0, null);
  expect(store.purgeEnded(40 * S)).toBe(1);
  expect(store.recordNodeUsage(job, "n2", 3, 40)).toBeUndefined();
});

test("a job's first allocation rows are kept from their insert: its end with its node's report writes them without reading them; an id kept from a rolled-back insert, given to another job's row since, writes nothing there", () => {
  const store = new JobStore(openDb(":memory:"));
  for (const name of ["n1", "n2"]) upsertNode(store.db, { name, cpus: 4, memoryMb: 1024, gpus: [], features: [], addr: "x", status: "UP", reason: null, drain: null, ownerSince: null, registeredAt: 0, updatedAt: 0 });
  const submit = () => store.insertJob({ name: "j", kind: "command", argv: ["true"], script: null, nodes: 1, minNodes: 1, maxNodes: 1, timeLimit: 60, env: {}, cwd: "/", submitTime: 0 });
  const [a, b, c] = [submit(), submit(), submit()];
  const share = (node: string) => ({ node, cores: [0], memMiB: 10, gpus: [] });
  const rows = () => store.db.$client.query("SELECT job_id, node, until, cpu_sec, peak_mem_mib FROM job_nodes ORDER BY id").values();
  // Job a's start is rolled back: the id its row had goes to job b's row.
  expect(() =>
    store.tx(() => {
      store.openAllocation(a, [share("n1")], 5, 0, true);
      throw new Error("rolled back");
    }),
  ).toThrow("rolled back");
  store.tx(() => store.openAllocation(b, [share("n1")], 6, 0, true));
  expect(store.tx(() => store.markEndedWithUsage(a, "n1", 1, 2, "COMPLETED", 9, 0, null))).toBeUndefined();
  expect(store.recordNodeUsage(a, "n1", 1, 2)).toBeUndefined();
  expect(rows()).toEqual([[b, "n1", null, null, null]]);
  // A kept row on another node than the report's: nothing folded.
  store.tx(() => store.openAllocation(c, [share("n2")], 7, 0, true));
  expect(store.tx(() => store.markEndedWithUsage(c, "n1", 1, 2, "COMPLETED", 9, 0, null))).toBeUndefined();
  expect(store.tx(() => store.markEndedWithUsage(b, "n1", 0.5, 7.25, "COMPLETED", 9, 0, null))).toEqual({ cpuSec: 0.5, peakMemMiB: 7.25 });
  expect(rows()).toEqual([
    [b, "n1", 9, 0.5, 7.25],
    [c, "n2", null, null, null],
  ]);
  expect(store.getJob(b)).toMatchObject({ state: "COMPLETED", endTime: 9, usage: { cpuSec: 0.5, peakMemMiB: 7.25 } });
});
