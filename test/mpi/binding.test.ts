/**
 * Where MPICH's ranks may run when they outnumber their CPUs. MPICH busy-polls: two ranks pinned
 * to one CPU never run at once, and every message between them waits for the scheduler (MPICH's
 * rma/atomic_get, 3 ranks on 2 CPUs: 16-21 s pinned 0,1,0 under ebb or Hydra with taskset, 6-13 s
 * unpinned). So ranks that outnumber their job's CPUs on a node are not bound to one each, and a
 * node whose cores are not CPUs of its own (more cores than CPUs, or `ebb agent --shared-cpus`: other
 * agents on the same host) does not hold a job to a core's CPU: it binds a step's ranks one to a
 * CPU by rank where they fit, so ranks on the host's several nodes never meet on one. Unbound
 * ranks that outnumber their CPUs run one OpenMP thread each (OMP_NUM_THREADS=1), as they did bound
 * one to a CPU: LULESH (-fopenmp), 27 ranks on 2 CPUs, took 540 s with two threads a rank, 6 s with one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { availableParallelism } from "node:os";
import { startCluster, type TestCluster } from "../support/cluster.ts";
import { compileC } from "../support/mpi.ts";

// With OpenMP, as LULESH is built: each rank says how many threads its runtime would start.
const binding = await compileC("mpi-binding-omp", await Bun.file(new URL("./programs/binding.c", import.meta.url)).text(), { flags: ["-fopenmp"] });
const hostCpus = (await Bun.file("/proc/self/status").text()).match(/^Cpus_allowed_list:\s*(\S+)/m)![1]!;

let c: TestCluster;
beforeAll(async () => {
  if (!binding) return;
  // The ranks inherit `ebb run`'s environment: what they are told of OpenMP must be ebb's doing.
  delete process.env.OMP_NUM_THREADS;
  c = await startCluster({ agents: 0 });
  c.startAgent("node01", ["--cpus", "2"]);
  // Cores that are no CPU's own: more of them than the host has CPUs, or CPUs other agents share.
  c.startAgent("node02", ["--cpus", String(availableParallelism() + 1)]);
  c.startAgent("node03", ["--cpus", "2", "--shared-cpus"]);
  await c.waitNodes(3, "IDLE", 90_000);
});
afterAll(async () => {
  await c?.stop();
});

const parseList = (list: string) => list.split(",").flatMap((part) => {
  const [a, b = a] = part.split("-").map(Number);
  return Array.from({ length: b! - a! + 1 }, (_, k) => a! + k);
});

async function ranks(args: string[], env: Record<string, string> = {}) {
  const r = await c.ebb(["run", ...args, binding!], { env });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  return r.stdout
    .split("\n")
    .filter((l) => l.startsWith("binding "))
    .map((l) => Object.fromEntries(l.slice(8).split(" ").map((kv) => kv.split("=") as [string, string])))
    .sort((a, b) => Number(a.rank) - Number(b.rank));
}

describe.skipIf(!binding)("MPICH ranks and CPUs", () => {
  test("3 ranks on a node of 2 cores (-O -c 2): each may use both of the job's CPUs, none is pinned to one another shares", async () => {
    const out = await ranks(["-w", "node01", "-N", "1", "-n", "3", "-O", "-c", "2"]);
    expect(out.map((o) => [o.rank, o.sum])).toEqual([["0", "3"], ["1", "3"], ["2", "3"]]);
    expect(new Set(out.map((o) => o.cpus)).size).toBe(1);
    if (availableParallelism() > 1) expect(out[0]!.cpus).toMatch(/[-,]/);
    expect(out.map((o) => o.threads)).toEqual(["1", "1", "1"]);
  });

  test("LULESH's shape, 9 ranks on one `ebb up`-like node (--shared-cpus, -n 9 -O): unbound on the host's CPUs, each runs one OpenMP thread, not one per CPU; a step's own OMP_NUM_THREADS is kept", async () => {
    const host = parseList(hostCpus);
    const out = await ranks(["-w", "node03", "-n", "9", "-O"]);
    expect(out.map((o) => o.sum)).toEqual(Array(9).fill("36"));
    expect(out.map((o) => o.threads)).toEqual(Array(9).fill("1"));
    // A host of 9 CPUs or more binds them one to a CPU: their runtime needs telling nothing.
    if (host.length < 9) expect(out.map((o) => [o.cpus, o.omp])).toEqual(Array(9).fill([hostCpus, "1"]));
    const told = await ranks(["-w", "node03", "-n", "9", "-O"], { OMP_NUM_THREADS: "3" });
    expect(told.map((o) => [o.threads, o.omp])).toEqual(Array(9).fill(["3", "3"]));
  });

  test.skipIf(availableParallelism() < 2)("ranks that fit their CPUs are bound to a CPU each and told nothing of OpenMP", async () => {
    const out = await ranks(["-w", "node01", "-N", "1", "-n", "2"]);
    expect(out.map((o) => [o.threads, o.omp])).toEqual([["1", "-"], ["1", "-"]]);
    expect(out[0]!.cpus).not.toBe(out[1]!.cpus);
  });

  test("nodes with more cores than CPUs, or --shared-cpus: a step whose ranks fit the host's CPUs gets one each by rank; a wider one is not bound", async () => {
    const host = parseList(hostCpus);
    const two = await ranks(["-x", "node01", "-N", "2", "-n", "2"]);
    expect(two.map((o) => [o.rank, o.sum, o.cpus])).toEqual([["0", "1", String(host[0])], ["1", "1", String(host[1 % host.length])]]);
    if (host.length > 1) expect(two.map((o) => [o.threads, o.omp])).toEqual([["1", "-"], ["1", "-"]]);
    const three = await ranks(["-x", "node01", "-N", "2", "-n", "3"]);
    expect(three.map((o) => o.sum)).toEqual(["3", "3", "3"]);
    expect(three.map((o) => o.cpus)).toEqual(host.length < 3 ? [hostCpus, hostCpus, hostCpus] : host.slice(0, 3).map(String));
    expect(three.map((o) => o.threads)).toEqual(["1", "1", "1"]);
  });
});
