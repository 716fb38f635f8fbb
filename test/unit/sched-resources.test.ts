import { describe, expect, test } from "bun:test";
import type { NodeResources, NodeShare, ResourceRequest } from "../../src/domain/resources.ts";
import { demandOf, placeJob } from "../../src/sched/batch-vectors.ts";
import { resolveConfig, type PolicyName } from "../../src/sched/config.ts";
import { checkPlan, makePlan, requestedResize, type PlanJobState, type PlanNodeState, type PlanState, type Snapshot, type SnapshotJob } from "../../src/sched/plan.ts";
import { Pool } from "../../src/sched/pool.ts";
import { predictStart } from "../../src/sched/predict.ts";
import type { ClusterNode, PendingJob } from "../../src/sched/types.ts";
import { mulberry32 } from "../../src/sim/random.ts";

const NOW = 1_000_000_000;
const cpu = (cores = 8, memMiB = cores * 1000, gpus: (string | null)[] = []): NodeResources => ({ cores, memMiB, gpus, features: [] });
const nodes = (n: number, r: NodeResources = cpu()): ClusterNode[] => Array.from({ length: n }, (_, i) => ({ name: `n${i + 1}`, up: true, resources: r }));
const req = (over: Partial<ResourceRequest> = {}): ResourceRequest => ({ cpusPerTask: 1, exclusive: false, ...over });
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
const share = (node: string, cores: number[], memMiB = cores.length * 1000, gpus: number[] = []): NodeShare => ({ node, cores, memMiB, gpus });

/** A waiting job; `resources` absent: whole nodes. */
function pending(id: number, resources: ResourceRequest | undefined, timeLimit = 600, extra: Partial<PendingJob> = {}): PendingJob {
  return { id, minNodes: 1, maxNodes: 1, timeLimit, submitTime: NOW - 10_000 + id, ...(resources ? { resources } : {}), ...extra };
}

/** A running job holding `shares` (or its nodes whole) until `end` s from now. */
function running(id: number, shares: NodeShare[], end: number, extra: Partial<SnapshotJob> = {}): SnapshotJob {
  const names = shares.map((s) => s.node);
  return { id, nodes: names.length, nodeNames: names, shares, minNodes: names.length, maxNodes: names.length, elastic: false, submitTime: 1, startTime: NOW - 1000, timeLimit: 1000 + end, expectedEnd: NOW + end * 1000, samples: [], adapting: false, ...extra };
}

function snap(policy: PolicyName, over: Partial<Snapshot>): Snapshot {
  return { now: NOW, nodes: nodes(2), pending: [], running: [], config: resolveConfig({ policy }), reasons: true, ...over };
}

/** The plan's re-check state over plain data: each node's resources and the shares on it. */
function stateOf(ns: ClusterNode[], run: SnapshotJob[], jobs: Record<number, PlanJobState>): PlanState {
  const byName = new Map<string, PlanNodeState>(ns.map((n) => [n.name, { up: n.up, resources: n.resources, shares: new Map() }]));
  for (const j of run) for (const s of j.shares ?? []) (byName.get(s.node)!.shares as Map<number, NodeShare>).set(j.id, s);
  return { node: (name) => byName.get(name), job: (id) => jobs[id] };
}

describe("resource mode: many jobs share a node", () => {
  test("8 one-core jobs on 2 nodes of 8 cores all start, packed on one node", () => {
    const plan = makePlan(snap("easy", { pending: range(1, 8).map((id) => pending(id, req())) }));
    expect(plan.starts.map((s) => s.jobId)).toEqual(range(1, 8));
    expect(plan.starts.map((s) => s.nodes)).toEqual(range(1, 8).map(() => ["n1"]));
    expect(plan.starts.map((s) => s.shares![0]!.cores)).toEqual(range(0, 7).map((c) => [c]));
    expect(plan.starts[0]!.tasks).toEqual([1]);
    expect(plan.waiting).toEqual([]);
  });

  test("32 one-GPU jobs on 4 nodes of 8 GPUs all start, each on its own GPU", () => {
    const plan = makePlan(snap("ebb", { nodes: nodes(4, cpu(64, 256_000, Array(8).fill("a100"))), pending: range(1, 32).map((id) => pending(id, req({ gpusPerTask: 1 }))) }));
    expect(plan.starts.length).toBe(32);
    const held = new Set(plan.starts.map((s) => `${s.nodes[0]}:${s.shares![0]!.gpus.join(",")}`));
    expect(held.size).toBe(32);
    expect(plan.starts.every((s) => s.shares![0]!.gpus.length === 1)).toBe(true);
  });

  test("every policy starts jobs on shares and its plan passes the re-check", () => {
    for (const policy of ["fcfs", "easy", "ebb", "ers", "reshape", "apm-equi", "apm-maxs", "drms-rs"] as PolicyName[]) {
      const ns = nodes(2);
      const plan = makePlan(snap(policy, { nodes: ns, pending: [pending(1, req({ tasks: 3 })), pending(2, undefined), pending(3, req({ tasks: 2, cpusPerTask: 2 }))] }));
      const jobs = Object.fromEntries([1, 2, 3].map((id) => [id, { state: "pending", nodes: [], minNodes: 1, maxNodes: 1, resizable: false, ...(id !== 2 ? { resources: req() } : {}) }]));
      const { rejected } = checkPlan(plan, stateOf(ns, [], jobs));
      expect({ policy, rejected }).toEqual({ policy, rejected: [] });
      expect({ policy, started: plan.starts.length > 0 }).toEqual({ policy, started: true });
    }
  });
});

describe("resource mode: EASY's reservation with shared and exclusive jobs", () => {
  // n1: job 10 holds 6 cores for 100 s more; n2: job 11 holds it whole for 1000 s.
  const run = [running(10, [share("n1", range(0, 5))], 100), running(11, [share("n2", range(0, 7))], 1000)];

  test("the head's reservation is where and when it fits once the running jobs give their shares back", () => {
    const plan = makePlan(snap("easy", { running: run, pending: [pending(1, req({ tasks: 8 }))] }));
    expect(plan.starts).toEqual([]);
    expect(plan.reservations).toEqual([{ jobId: 1, start: NOW + 100_000, nodes: 1, shares: [share("n1", range(0, 7))] }]);
    expect(plan.waiting).toEqual([[1, "resources: first in line, nodes reserved"]]);
  });

  test("backfill: a job that ends before the reservation takes the reserved cores; one that runs past it waits", () => {
    const plan = makePlan(snap("easy", { running: run, pending: [pending(1, req({ tasks: 8 })), pending(2, req({ tasks: 1 }), 50), pending(3, req({ tasks: 1 }), 5000)] }));
    expect(plan.starts.map((s) => [s.jobId, s.nodes, s.shares![0]!.cores])).toEqual([[2, ["n1"], [6]]]);
    // Started on n1's last free core for 5000 s, job 3 would delay job 1 (it needs all 8 cores of n1 at +100 s).
    expect(plan.waiting).toContainEqual([3, "priority: would delay job 1"]);
  });

  test("a long job fits in what the reservation leaves over, node by node", () => {
    const plan = makePlan(snap("easy", { running: run, pending: [pending(1, req({ tasks: 6 })), pending(2, req({ tasks: 2 }), 5000), pending(3, req({ tasks: 1 }), 5000)] }));
    // Job 1 reserves cores 0-5 of n1 at +100 s: cores 6-7 are left over, job 2 may hold them past it.
    expect(plan.reservations[0]!.shares).toEqual([share("n1", range(0, 5))]);
    expect(plan.starts.map((s) => [s.jobId, s.shares![0]!.cores])).toEqual([[2, [6, 7]]]);
    expect(plan.waiting).toContainEqual([3, "resources"]);
  });

  test("a job that ends before the reservation takes what the reservation needs anyway, leaving the rest to one that runs past it", () => {
    // 4-core nodes. n1: job 10 holds cores 0-1 until +100 s; n2: job 11 cores 0-1, n3: job 12 cores
    // 0-2, both until +1000 s. Job 1 (6 cores) reserves n1 whole and n2's cores 2-3 at +100 s: one
    // core (n3's) is left over. Job 2 (1 core, 50 s) fits n3 best but takes a reserved core of n1;
    // job 3 (1 core, long) then holds n3's core past the reservation.
    const ns = nodes(3, cpu(4));
    const run = [running(10, [share("n1", [0, 1])], 100), running(11, [share("n2", [0, 1])], 1000), running(12, [share("n3", [0, 1, 2])], 1000)];
    const plan = makePlan(snap("easy", { nodes: ns, running: run, pending: [pending(1, req({ tasks: 6 })), pending(2, req({ tasks: 1 }), 50), pending(3, req({ tasks: 1 }), 5000)] }));
    expect(plan.reservations[0]!.shares).toEqual([share("n1", range(0, 3)), share("n2", [2, 3])]);
    expect(plan.starts.map((s) => [s.jobId, s.nodes])).toEqual([[2, ["n1"]], [3, ["n3"]]]);
  });

  test("a reservation takes what the running jobs release by then before what is free now", () => {
    // n1: job 10 holds cores 4-7 of 8 until +100 s; n2 is busy until +1000 s. Job 1 (6 cores)
    // reserves n1's cores 4-7 (released then) and two of the four free now; the other two stay
    // free past the reservation for job 2.
    const plan = makePlan(snap("easy", { running: [running(10, [share("n1", range(4, 7))], 100), running(11, [share("n2", range(0, 7))], 1000)], pending: [pending(1, req({ tasks: 6 })), pending(2, req({ tasks: 2 }), 5000)] }));
    expect(plan.reservations[0]!.shares).toEqual([share("n1", [0, 1, 4, 5, 6, 7])]);
    expect(plan.starts.map((s) => [s.jobId, s.shares![0]!.cores])).toEqual([[2, [2, 3]]]);
  });

  test("an exclusive job waits for an idle node; a shared one fits beside others", () => {
    const plan = makePlan(snap("easy", { nodes: nodes(3), running: [running(10, [share("n1", [0])], 100)], pending: [pending(1, req({ exclusive: true, nodes: 2 }), 50_000, { minNodes: 2, maxNodes: 2 }), pending(2, undefined, 50_000), pending(3, req({ tasks: 4 }), 50_000)] }));
    // Job 1 takes n2 and n3 whole; job 2 (whole nodes) waits for n1 at +100 s; job 3 would delay it there.
    expect(plan.starts.map((s) => [s.jobId, s.nodes])).toEqual([[1, ["n2", "n3"]]]);
    expect(plan.reservations).toEqual([{ jobId: 2, start: NOW + 100_000, nodes: 1, shares: [share("n1", range(0, 7))] }]);
    expect(plan.waiting).toContainEqual([3, "priority: would delay job 2"]);
  });

  test("a request no set of up nodes can hold is passed over, not made the head", () => {
    const plan = makePlan(snap("easy", { running: run, pending: [pending(1, req({ tasks: 1, memPerNodeMiB: 99_000 })), pending(2, req({ tasks: 2 }))] }));
    expect(plan.starts.map((s) => s.jobId)).toEqual([2]);
    expect(plan.waiting).toContainEqual([1, "resources: no up node set can ever hold it"]);
  });

  test("backfill never delays the head (random mixed clusters and queues)", () => {
    const rng = mulberry32(7);
    const pick = (n: number) => Math.floor(rng.next() * n);
    let heads = 0;
    let backfilled = 0;
    for (let trial = 0; trial < 300; trial++) {
      const ns = nodes(2 + pick(4), cpu(8, 16_000, [null, null]));
      const pool = Pool.of(ns, []);
      const run: SnapshotJob[] = [];
      for (let id = 100; id < 100 + 3 + pick(8); id++) {
        const p = placeJob(pool, pending(id, req({ tasks: 1 + pick(6), gpusPerTask: pick(3) === 0 ? 1 : undefined })), demandOf(pending(id, req({ tasks: 1 + pick(6) }))), false);
        if (!p) continue;
        pool.take(p.shares);
        run.push(running(id, p.shares, 10 + pick(500)));
      }
      const queue: PendingJob[] = range(1, 12).map((id) => {
        const kind = pick(4);
        const r = kind === 0 ? undefined : kind === 1 ? req({ exclusive: true, nodes: 1 + pick(2) }) : req({ tasks: 1 + pick(12), memPerCpuMiB: 500 + pick(3000), gpusPerTask: pick(4) === 0 ? 1 : undefined });
        return pending(id, r, 5 + pick(800));
      });
      const plan = makePlan(snap("easy", { nodes: ns, running: run, pending: queue }));
      const res = plan.reservations[0];
      if (!res) continue;
      heads++;
      backfilled += plan.starts.filter((s) => s.reason === "backfill").length;
      // At the reservation's start, what still runs (the running jobs that end later, the plan's
      // starts that run past it) must leave the head the shares it was promised.
      const endsAt = (id: number) => NOW + queue.find((q) => q.id === id)!.timeLimit * 1000;
      const still = [...run.filter((j) => j.expectedEnd! > res.start), ...plan.starts.filter((s) => endsAt(s.jobId) > res.start).map((s) => running(s.jobId, s.shares!, 0))];
      const state = stateOf(ns, still, { [res.jobId]: { state: "pending", nodes: [], minNodes: 1, maxNodes: 9, resizable: false, resources: req() } });
      const check = checkPlan({ now: res.start, policy: "easy", spawns: [], starts: [{ jobId: res.jobId, nodes: res.shares!.map((s) => s.node), shares: res.shares, reason: "fcfs" }], resizes: [], reservations: [], notes: [], waiting: [] }, state);
      expect({ trial, rejected: check.rejected.map((r) => r.reason) }).toEqual({ trial, rejected: [] });
    }
    expect(heads).toBeGreaterThan(100);
    expect(backfilled).toBeGreaterThan(100);
  });
});

describe("resource mode: the re-check rejects over-allocation", () => {
  const ns = nodes(1);
  const run = [running(5, [share("n1", [0, 1], 6000)], 100)];
  const jobs: Record<number, PlanJobState> = { 1: { state: "pending", nodes: [], minNodes: 1, maxNodes: 1, resizable: false, resources: req() }, 2: { state: "pending", nodes: [], minNodes: 1, maxNodes: 1, resizable: false, resources: req() } };
  const plan = (starts: { jobId: number; shares: NodeShare[] }[]) => ({ now: NOW, policy: "easy" as const, spawns: [], starts: starts.map((s) => ({ ...s, nodes: s.shares.map((x) => x.node), reason: "fcfs" })), resizes: [], reservations: [], notes: [], waiting: [] });
  const reasons = (starts: { jobId: number; shares: NodeShare[] }[]) => checkPlan(plan(starts), stateOf(ns, run, jobs)).rejected.map((r) => r.reason);

  test("a core another job holds, a core that does not exist, memory beyond the node's", () => {
    expect(reasons([{ jobId: 1, shares: [share("n1", [1, 2], 1000)] }])).toEqual(["start on 1 nodes: core 1 of node n1 is held by job 5"]);
    expect(reasons([{ jobId: 1, shares: [share("n1", [8], 1000)] }])).toEqual(["start on 1 nodes: node n1 has no core 8 (it has 8)"]);
    expect(reasons([{ jobId: 1, shares: [share("n1", [2], 3000)] }])).toEqual(["start on 1 nodes: node n1 has 2000 MiB of memory free, the share takes 3000"]);
    expect(reasons([{ jobId: 1, shares: [share("n1", [2], 2000)] }])).toEqual([]);
  });

  test("two items of one plan claiming the same core: the second is rejected", () => {
    expect(reasons([{ jobId: 1, shares: [share("n1", [2, 3], 1000)] }, { jobId: 2, shares: [share("n1", [3], 500)] }])).toEqual(["start on 1 nodes: core 3 of node n1 is taken by an earlier item of the plan"]);
  });

  test("a start without shares takes a node whole and needs it idle", () => {
    const r = checkPlan({ ...plan([]), starts: [{ jobId: 1, nodes: ["n1"], reason: "fcfs" }] }, stateOf(ns, run, jobs)).rejected;
    expect(r.map((x) => x.reason)).toEqual(["start on 1 nodes: node n1 is not idle: 2 of its cores are held"]);
  });
});

describe("resource mode: elastic jobs resize by nodes of their shape", () => {
  const elastic = (id: number, shares: NodeShare[], resources?: ResourceRequest): SnapshotJob => ({ ...running(id, shares, 3600, { elastic: true, minNodes: 1, maxNodes: 4 }), ...(resources ? { resources } : {}) });

  test("a job with a per-node shape grows onto a node that runs a one-core job", () => {
    const s = snap("ebb", { running: [elastic(1, [share("n1", range(0, 3), 4000)], req({ tasksPerNode: 4, memPerNodeMiB: 4000 })), running(2, [share("n2", [0])], 3600)] });
    const r = requestedResize(s, 1, 2, "user");
    expect(typeof r).toBe("object");
    if (typeof r === "string") return;
    expect(r.added).toEqual(["n2"]);
    expect(r.shares).toEqual([share("n2", range(1, 4), 4000)]);
    expect(r.remap.tasks).toEqual([1, 4]);
  });

  test("ebb lends a job with a per-node shape the nodes others hold part of; a job of whole nodes only idle ones", () => {
    // Every node runs a one-core job: none is idle. Job 1 (4 tasks of a core per node) is efficient and has an hour left.
    const samples = [0, 1, 2].map((k) => ({ time: NOW - k * 60_000, mtct: 0.005 }));
    const shaped = { ...elastic(1, [share("n1", range(1, 4), 4000)], req({ tasksPerNode: 4, memPerNodeMiB: 4000 })), samples, remaining: 3600, expectedEnd: NOW + 3_600_000, adaptCost: 10, timeLimit: 100_000 };
    const ones = [2, 3, 4].map((id, i) => running(id, [share(`n${i + 1}`, [0], 1000)], 3600)).concat([running(5, [share("n4", [0], 1000)], 3600)]);
    const plan = makePlan(snap("ebb", { nodes: nodes(4), running: [shaped, ...ones.slice(1)] }));
    expect(plan.resizes.map((r) => [r.jobId, r.rule, r.added, r.shares?.map((x) => x.cores)])).toEqual([[1, "grow", ["n2", "n3", "n4"], [range(1, 4), range(1, 4), range(1, 4)]]]);
    const whole = { ...shaped, resources: undefined, shares: [share("n1", range(1, 7), 7000)] };
    expect(makePlan(snap("ebb", { nodes: nodes(4), running: [whole, ...ones.slice(1)] })).resizes).toEqual([]);
  });

  test("a job of whole nodes grows only onto idle nodes", () => {
    const s = snap("ebb", { nodes: nodes(3), running: [elastic(1, [share("n1", range(0, 7), 8000)]), running(2, [share("n2", [0])], 3600)] });
    const r = requestedResize(s, 1, 2, "user");
    expect(typeof r === "object" && r.added).toEqual(["n3"]);
    expect(requestedResize(s, 1, 3, "user")).toBe("growing job 1 needs 2 more nodes of its shape (whole nodes); fewer are free");
  });
});

describe("resource mode: --test-only says where and when", () => {
  test("the start time and the shares it would get", () => {
    const s = snap("easy", { running: [running(10, [share("n1", range(0, 5))], 100), running(11, [share("n2", range(0, 7))], 1000)], pending: [pending(1, req({ tasks: 4 }))] });
    expect(predictStart(s, 1)).toEqual({ start: NOW + 100_000, nodes: ["n1"], shares: [share("n1", range(0, 3))] });
  });
});
