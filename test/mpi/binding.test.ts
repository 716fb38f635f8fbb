/**
 * Where MPICH's ranks may run when they outnumber their CPUs. MPICH busy-polls: two ranks pinned
 * to one CPU never run at once, and every message between them waits for the scheduler (MPICH's
 * rma/atomic_get, 3 ranks on 2 CPUs: 16-21 s pinned 0,1,0 under ebb or Hydra with taskset, 6-13 s
 * unpinned). So ranks that outnumber their job's CPUs on a node are not bound to one each, and a
 * node whose cores are not CPUs of its own (more cores than CPUs, or `ebb agent --shared-cpus`: other
 * agents on the same host) does not hold a job to a core's CPU: it binds a step's ranks one to a
 * CPU by rank where they fit, so ranks on the host's several nodes never meet on one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { availableParallelism } from "node:os";
import { startCluster, type TestCluster } from "../support/cluster.ts";
import { mpi } from "./programs.ts";

const binding = await mpi("binding");
const hostCpus = (await Bun.file("/proc/self/status").text()).match(/^Cpus_allowed_list:\s*(\S+)/m)![1]!;

let c: TestCluster;
beforeAll(async () => {
  if (!binding) return;
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

async function ranks(args: string[]) {
  const r = await c.ebb(["run", ...args, binding!]);
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
  });

  test("nodes with more cores than CPUs, or --shared-cpus: a step whose ranks fit the host's CPUs gets one each by rank; a wider one is not bound", async () => {
    const host = parseList(hostCpus);
    const two = await ranks(["-x", "node01", "-N", "2", "-n", "2"]);
    expect(two.map((o) => [o.rank, o.sum, o.cpus])).toEqual([["0", "1", String(host[0])], ["1", "1", String(host[1 % host.length])]]);
    const three = await ranks(["-x", "node01", "-N", "2", "-n", "3"]);
    expect(three.map((o) => o.sum)).toEqual(["3", "3", "3"]);
    expect(three.map((o) => o.cpus)).toEqual(host.length < 3 ? [hostCpus, hostCpus, hostCpus] : host.slice(0, 3).map(String));
  });
});
