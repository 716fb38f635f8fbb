import { describe, expect, test } from "bun:test";
import { resolveConfig, type PolicyName } from "../../src/sched/config.ts";
import { checkPlan, makePlan, type Plan, type PlanJobState, type PlanState, type Snapshot, type SnapshotJob } from "../../src/sched/plan.ts";
import { POLICY_TABLE } from "../../src/sched/policies/index.ts";
import type { ClusterNode, PassPlan, PendingJob } from "../../src/sched/types.ts";

const NOW = 80_000_000;

/** n1..nN, `held` maps a node name to the job holding it. */
function cluster(n: number, held: Record<string, number> = {}, cpus = 1): ClusterNode[] {
  return Array.from({ length: n }, (_, i) => ({ name: `n${i + 1}`, up: true, cpus, ...(held[`n${i + 1}`] !== undefined ? { jobId: held[`n${i + 1}`] } : {}) }));
}

function pending(id: number, nodes: number, extra: Partial<PendingJob> = {}): PendingJob {
  return { id, minNodes: nodes, maxNodes: nodes, timeLimit: 600, submitTime: NOW - 1000 + id, ...extra };
}

function running(id: number, names: string[], extra: Partial<SnapshotJob> = {}): SnapshotJob {
  return {
    id,
    nodes: names.length,
    nodeNames: names,
    minNodes: 1,
    maxNodes: 8,
    elastic: true,
    submitTime: 1,
    startTime: NOW - 600_000,
    timeLimit: 7200,
    samples: [],
    adapting: false,
    ...extra,
  };
}

function snap(policy: PolicyName, over: Partial<Snapshot>): Snapshot {
  return { now: NOW, nodes: cluster(4), pending: [], running: [], config: resolveConfig({ policy }), ...over };
}

/** A PlanState over plain data: the nodes and the jobs as they are now. */
function stateOf(nodes: ClusterNode[], jobs: Record<number, PlanJobState>): PlanState {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  return { node: (name) => byName.get(name), job: (id) => jobs[id] };
}

const pendingState = (min: number, max = min, extra: Partial<PlanJobState> = {}): PlanJobState => ({ state: "pending", nodes: [], minNodes: min, maxNodes: max, resizable: false, ...extra });
const runningState = (nodes: string[], extra: Partial<PlanJobState> = {}): PlanJobState => ({ state: "running", nodes, minNodes: 1, maxNodes: 8, resizable: true, ...extra });

describe("makePlan: one pure pass from a snapshot to a plan with node names", () => {
  test("spawn grants come first, by cpus, oldest first; starts get the next idle nodes in name order", () => {
    const nodes = [...cluster(6, { n1: 9 }, 2)].reverse();
    const plan = makePlan(snap("easy", { nodes, running: [running(9, ["n1"])], spawns: [{ id: 1, jobId: 9, tasks: 3 }], pending: [pending(1, 2), pending(2, 2)] }));
    expect(plan.spawns).toEqual([{ id: 1, jobId: 9, tasks: 3, nodes: ["n2", "n3"], reason: "spawn of 3 processes: 2 idle nodes with 4 cpus" }]);
    expect(plan.starts).toEqual([{ jobId: 1, nodes: ["n4", "n5"], reason: "fcfs" }]);
    expect(plan.policy).toBe("easy");
  });

  test("a spawn request that does not fit stops the later ones and leaves the nodes to the queue", () => {
    const plan = makePlan(snap("easy", { running: [running(9, ["n1"])], nodes: cluster(4, { n1: 9 }), spawns: [{ id: 1, jobId: 9, tasks: 5 }, { id: 2, jobId: 9, tasks: 1 }], pending: [pending(1, 3)] }));
    expect(plan.spawns).toEqual([]);
    expect(plan.starts).toEqual([{ jobId: 1, nodes: ["n2", "n3", "n4"], reason: "fcfs" }]);
  });

  test("why the others wait, with the reasons asked for; a job bound to busy nodes waits outside the pass", () => {
    const plan = makePlan(snap("easy", { nodes: cluster(4, { n1: 9 }), running: [running(9, ["n1"], { elastic: false })], reasons: true, pending: [pending(1, 1, { nodelist: ["n1"] }), pending(2, 4), pending(3, 1)] }));
    expect(plan.starts.map((s) => [s.jobId, s.nodes])).toEqual([[3, ["n2"]]]);
    expect(new Map(plan.waiting)).toEqual(new Map([[1, "Resources: n1 (from its nodelist) is busy"], [2, "resources: first in line, nodes reserved"]]));
    expect(makePlan(snap("easy", { pending: [pending(2, 8)] })).waiting).toEqual([]);
  });

  test("a job that asked for a range of nodes starts on as many as are free under every policy", () => {
    for (const policy of ["fcfs", "easy", "ebb"] as const) {
      const plan = makePlan(snap(policy, { nodes: cluster(4, { n4: 9 }), running: [running(9, ["n4"], { elastic: false })], pending: [pending(1, 2, { maxNodes: 6, moldable: true })] }));
      expect(plan.starts).toEqual([{ jobId: 1, nodes: ["n1", "n2", "n3"], reason: "fcfs" }]);
    }
    // Without the flag, a static policy holds the job to the size it asked for.
    expect(makePlan(snap("easy", { nodes: cluster(4, { n4: 9 }), running: [running(9, ["n4"], { elastic: false })], pending: [pending(1, 2, { maxNodes: 6 })] })).starts).toEqual([]);
  });

  test("a grow names the idle nodes it takes; the remap appends their ranks", () => {
    const job = running(7, ["n3", "n1"], { tasks: [2, 2], minNodes: 2, maxNodes: 4 });
    const plan = makePlan(snap("drms-rs", { nodes: cluster(4, { n1: 7, n3: 7 }), running: [job] }));
    expect(plan.resizes).toHaveLength(1);
    const r = plan.resizes[0]!;
    expect(r).toMatchObject({ jobId: 7, from: 2, to: 4, rule: "grow", added: ["n2", "n4"], removed: [] });
    expect(r.remap).toEqual({ staying: 4, leaving: 0, joining: 4, tasks: [2, 2, 2, 2] });
    expect(r.limit.ratio).toBe(1);
    // A pass that may not resize (--test-only replays starts only) leaves the policy's resizes out.
    expect(makePlan(snap("drms-rs", { nodes: cluster(4, { n1: 7, n3: 7 }), running: [job], resizes: false })).resizes).toEqual([]);
  });

  test("one cadence, live and simulated: every pass plans resizes; makePlan keeps no state between passes", () => {
    const job = running(7, ["n1", "n3"], { minNodes: 2, maxNodes: 4 });
    const base = snap("drms-rs", { nodes: cluster(4, { n1: 7, n3: 7 }), running: [job] });
    // The same snapshot a second later (the controller's housekeeping pass) plans the same grow:
    // only the state the caller carries the plan out on changes what the next pass plans.
    for (const now of [NOW, NOW + 1000, NOW + base.config.interval * 1000 - 1]) expect(makePlan({ ...base, now }).resizes.map((r) => [r.jobId, r.to])).toEqual([[7, 4]]);
    expect(makePlan({ ...base, resizes: true }).resizes).toEqual(makePlan(base).resizes);
  });

  test("a shrink gives back the last nodes of the allocation, its highest ranks leave", () => {
    const job = running(7, ["n4", "n1", "n2", "n3"], { tasks: [1, 1, 1, 1], minNodes: 1, maxNodes: 4 });
    const plan = makePlan(snap("drms-rs", { nodes: cluster(4, { n1: 7, n2: 7, n3: 7, n4: 7 }), running: [job], pending: [pending(2, 2)] }));
    const r = plan.resizes[0]!;
    expect(r).toMatchObject({ jobId: 7, from: 4, to: 2, rule: "admit", added: [], removed: ["n2", "n3"] });
    expect(r.remap).toEqual({ staying: 2, leaving: 2, joining: 0, tasks: [1, 1] });
    expect(r.limit).toMatchObject({ ratio: 2, source: "no measured model: at most 4/2 slower" });
  });

  test("a pass that starts more nodes than are idle is an error that says so", () => {
    const orig = POLICY_TABLE.easy.plan;
    (POLICY_TABLE.easy as { plan: (i: unknown) => PassPlan }).plan = () => ({ starts: [{ jobId: 1, nodes: 2, reason: "x" }], resizes: [], reservations: [], notes: [] });
    try {
      expect(() => makePlan(snap("easy", { nodes: cluster(2, { n1: 9 }), pending: [pending(1, 2)], running: [running(9, ["n1"])] }))).toThrow(/job 1 started on 2 nodes, 1 are idle/);
    } finally {
      (POLICY_TABLE.easy as { plan: unknown }).plan = orig;
    }
  });
});

describe("checkPlan: every item against the state as it is now", () => {
  const plan = (over: Partial<Plan>): Plan => ({ now: NOW, policy: "easy", spawns: [], starts: [], resizes: [], reservations: [], notes: [], waiting: [], ...over });
  const grow = { jobId: 7, from: 2, to: 3, rule: "grow" as const, reason: "r", added: ["n3"], removed: [], remap: { staying: 2, leaving: 0, joining: 1, tasks: [1, 1, 1] }, limit: { ratio: 1, source: "s" } };

  test("a plan that still fits is accepted whole", () => {
    const p = plan({ starts: [{ jobId: 1, nodes: ["n4"], reason: "fcfs" }], resizes: [grow], spawns: [{ id: 1, jobId: 7, tasks: 1, nodes: ["n5"], reason: "x" }] });
    const r = checkPlan(p, stateOf(cluster(5, { n1: 7, n2: 7 }), { 1: pendingState(1), 7: runningState(["n1", "n2"]) }));
    expect(r.rejected).toEqual([]);
    expect(r.accepted).toEqual(p);
  });

  test("a start whose node another job took since is rejected with the reason; the rest still goes", () => {
    const p = plan({ starts: [{ jobId: 1, nodes: ["n3", "n4"], reason: "fcfs" }, { jobId: 2, nodes: ["n5"], reason: "backfill" }] });
    const r = checkPlan(p, stateOf(cluster(5, { n4: 8 }), { 1: pendingState(2), 2: pendingState(1) }));
    expect(r.rejected).toEqual([{ kind: "start", jobId: 1, reason: "start on 2 nodes: node n4 is held by job 8", item: p.starts[0]! }]);
    expect(r.accepted.starts.map((s) => s.jobId)).toEqual([2]);
  });

  test("the jobs must still be where the plan saw them", () => {
    const nodes = cluster(5, { n1: 7, n2: 7 });
    const st = (job: PlanJobState) => stateOf(nodes, { 1: pendingState(1), 7: job });
    const one = (p: Plan, s: PlanState) => checkPlan(p, s).rejected.map((x) => x.reason);
    expect(one(plan({ resizes: [grow] }), st(runningState(["n1", "n2"], { state: "adapting" })))).toEqual(["grow 2 -> 3 nodes: the job is adapting"]);
    expect(one(plan({ resizes: [grow] }), st(runningState(["n1"])))).toEqual(["grow 2 -> 3 nodes: it holds 1 nodes, the plan says 2"]);
    expect(one(plan({ resizes: [grow] }), st(runningState(["n1", "n2"], { resizable: false })))).toEqual(["grow 2 -> 3 nodes: the job cannot be resized now"]);
    expect(one(plan({ resizes: [grow] }), st(runningState(["n1", "n2"], { maxNodes: 2 })))).toEqual(["grow 2 -> 3 nodes: 3 nodes is outside its range 1-2"]);
    expect(one(plan({ resizes: [grow] }), st(runningState(["n1", "n2"], { sizes: [1, 2, 4] })))).toEqual(["grow 2 -> 3 nodes: 3 nodes is not one of its sizes 1,2,4"]);
    const shrink = { ...grow, from: 2, to: 1, rule: "admit" as const, added: [], removed: ["n1"] };
    expect(one(plan({ resizes: [shrink] }), st(runningState(["n1", "n2"])))).toEqual(["admit 2 -> 1 nodes: a shrink gives back the last 1 nodes of the allocation (n2), the plan names n1"]);
    expect(one(plan({ starts: [{ jobId: 1, nodes: ["n3"], reason: "fcfs" }] }), stateOf(nodes, { 1: pendingState(1, 1, { state: "held" }) }))).toEqual(["start on 1 nodes: the job is held"]);
    expect(one(plan({ spawns: [{ id: 1, jobId: 7, tasks: 1, nodes: ["n3"], reason: "x" }] }), stateOf(nodes, {}))).toEqual(["spawn grant of n3: the job is gone"]);
  });

  test("two items that name the same node: the later one is rejected", () => {
    const p = plan({ spawns: [{ id: 1, jobId: 7, tasks: 1, nodes: ["n3"], reason: "x" }], resizes: [grow] });
    const r = checkPlan(p, stateOf(cluster(4, { n1: 7, n2: 7 }), { 7: runningState(["n1", "n2"]) }));
    expect(r.accepted.spawns).toHaveLength(1);
    expect(r.rejected).toEqual([{ kind: "resize", jobId: 7, reason: "grow 2 -> 3 nodes: node n3 is taken by an earlier item of the plan", item: grow }]);
  });

  test("a down node, an excluded node and a missing nodelist node are refused", () => {
    const nodes = cluster(4);
    nodes[2]!.up = false;
    const reasons = (job: PlanJobState, names: string[]) => checkPlan(plan({ starts: [{ jobId: 1, nodes: names, reason: "fcfs" }] }), stateOf(nodes, { 1: job })).rejected.map((x) => x.reason);
    expect(reasons(pendingState(1), ["n3"])).toEqual(["start on 1 nodes: node n3 is not up"]);
    expect(reasons(pendingState(1, 1, { exclude: ["n2"] }), ["n2"])).toEqual(["start on 1 nodes: node n2 is excluded by the job"]);
    expect(reasons(pendingState(1, 1, { nodelist: ["n4"] }), ["n2"])).toEqual(["start on 1 nodes: node n4 of its nodelist is not among them"]);
    expect(reasons(pendingState(1), ["n9"])).toEqual(["start on 1 nodes: node n9 does not exist"]);
  });

  test("an item that names a node twice is refused for that, whatever else is wrong with it, short list or long", () => {
    const nodes = cluster(40, { n5: 8 });
    nodes[2]!.up = false;
    const reasons = (names: string[]) => checkPlan(plan({ starts: [{ jobId: 1, nodes: names, reason: "fcfs" }] }), stateOf(nodes, { 1: pendingState(1, 40) })).rejected.map((x) => x.reason);
    const long = Array.from({ length: 30 }, (_, i) => `n${i + 6}`);
    expect(reasons(["n1", "n2", "n1"])).toEqual(["start on 3 nodes: a node is named twice"]);
    expect(reasons([...long, "n20"])).toEqual(["start on 31 nodes: a node is named twice"]);
    // The second n1 comes after a node that is not up and one that is held: the twice still wins, as it is checked first.
    expect(reasons(["n1", "n3", "n1"])).toEqual(["start on 3 nodes: a node is named twice"]);
    expect(reasons([...long, "n5", "n6"])).toEqual(["start on 32 nodes: a node is named twice"]);
    expect(reasons([...long, "n5"])).toEqual(["start on 31 nodes: node n5 is held by job 8"]);
    expect(reasons(long)).toEqual([]);
    // A grow naming a node twice.
    const twice = { jobId: 7, from: 2, to: 4, rule: "grow" as const, reason: "r", added: ["n30", "n30"], removed: [], remap: { staying: 2, leaving: 0, joining: 2, tasks: [1, 1, 1, 1] }, limit: { ratio: 1, source: "s" } };
    const r = checkPlan(plan({ resizes: [twice] }), stateOf(cluster(40, { n1: 7, n2: 7 }), { 7: runningState(["n1", "n2"]) }));
    expect(r.rejected.map((x) => x.reason)).toEqual(["grow 2 -> 4 nodes: a node is named twice"]);
  });
});
