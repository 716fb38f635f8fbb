import { describe, expect, test } from "bun:test";
import type { HostState, HostStateName } from "../../src/domain/host-state.ts";
import { resolveConfig, type PolicyName } from "../../src/sched/config.ts";
import { checkPlan, makePlan, type PlanJobState, type Snapshot, type SnapshotJob } from "../../src/sched/plan.ts";
import { hostSpeed, measuredSpeed } from "../../src/sched/moves.ts";
import type { ClusterNode, PendingJob } from "../../src/sched/types.ts";

const NOW = 80_000_000;

const host = (state: HostStateName, inputs: Record<string, number> = {}): HostState => ({ state, rule: state === "owner" ? "ebb drain --owner" : "cpu.other > 0.5", inputs, since: NOW - 10_000 });

/** n1..nN; `held` maps a node to its job, `hosts` a node to its host state. */
function cluster(n: number, held: Record<string, number> = {}, hosts: Record<string, HostState> = {}): ClusterNode[] {
  return Array.from({ length: n }, (_, i) => {
    const name = `n${i + 1}`;
    return { name, up: true, cpus: 2, ...(held[name] !== undefined ? { jobId: held[name] } : {}), ...(hosts[name] ? { host: hosts[name] } : {}) };
  });
}

function running(id: number, names: string[], extra: Partial<SnapshotJob> = {}): SnapshotJob {
  return { id, nodes: names.length, nodeNames: names, minNodes: 1, maxNodes: 8, elastic: true, submitTime: 1, startTime: NOW - 60_000, timeLimit: 3600, samples: [], adapting: false, adaptCost: 0.5, ...extra };
}

function snap(over: Partial<Snapshot>, policy: PolicyName = "easy"): Snapshot {
  return { now: NOW, nodes: cluster(5), pending: [], running: [], config: resolveConfig({ policy }), ...over };
}

const pendingJob = (id: number, nodes: number): PendingJob => ({ id, minNodes: nodes, maxNodes: nodes, timeLimit: 600, submitTime: NOW - 1000 });

const held4 = { n1: 7, n2: 7, n3: 7, n4: 7 };

describe("moves off nodes whose jobs should leave (issue 34)", () => {
  test("an elastic job on an owner node moves to the free node when the gain pays: a shrink, then a grow back onto the free node", () => {
    const plan = makePlan(snap({ nodes: cluster(5, held4, { n3: host("owner") }), running: [running(7, ["n1", "n2", "n3", "n4"])] }));
    expect(plan.resizes).toHaveLength(1);
    const m = plan.resizes[0]!;
    expect({ rule: m.rule, from: m.from, to: m.to, removed: m.removed, added: m.added }).toEqual({ rule: "move", from: 4, to: 2, removed: ["n3", "n4"], added: [] });
    expect({ from: m.then!.from, to: m.then!.to, added: m.then!.added }).toEqual({ from: 2, to: 4, added: ["n4", "n5"] });
    expect(m.then!.remap).toEqual({ staying: 2, leaving: 0, joining: 2, tasks: [1, 1, 1, 1] });
    // The numbers: 3540 s left, speed 0 on an owner node, against 2 adaptations of 0.5 s.
    expect(m.reason).toContain("remaining 3540 s × (1 − speed 0.00 / 1.00) = 3540 s gained > cost 2 × measured 0.50 s per adaptation = 1.00 s");
    expect(m.reason).toContain("to n5 (speed 1.00, 2 cpus)");
  });

  test("when the loaded node is the allocation's last, the move is one swap: it leaves and the free node joins in one adaptation", () => {
    const plan = makePlan(snap({ nodes: cluster(5, held4, { n4: host("owner") }), running: [running(7, ["n1", "n2", "n3", "n4"], { tasks: [2, 2, 2, 2] })] }));
    const m = plan.resizes[0]!;
    expect({ rule: m.rule, from: m.from, to: m.to, removed: m.removed, added: m.added, then: m.then, remap: m.remap }).toEqual({ rule: "move", from: 4, to: 4, removed: ["n4"], added: ["n5"], then: undefined, remap: { staying: 6, leaving: 2, joining: 2, tasks: [2, 2, 2, 2] } });
    expect(m.reason).toContain("gained > cost 1 × measured 0.50 s per adaptation = 0.50 s; one swap at 4 nodes");
    const job: PlanJobState = { state: "running", nodes: ["n1", "n2", "n3", "n4"], minNodes: 1, maxNodes: 8, resizable: true };
    const nodes = new Map(cluster(5, held4).map((n) => [n.name, n]));
    expect(checkPlan(plan, { node: (x) => nodes.get(x), job: () => job }).rejected).toEqual([]);
    // Not the last nodes: refused.
    const wrong = { ...plan, resizes: [{ ...m, removed: ["n3"] }] };
    expect(checkPlan(wrong, { node: (x) => nodes.get(x), job: () => job }).rejected[0]?.reason).toBe("move 4 -> 4 nodes: a swap gives back the last nodes of the allocation and adds as many, the plan names -n3 +n5");
  });

  test("the move's plan passes the re-check, and a grow back onto a node that is no longer free is rejected", () => {
    const nodes = cluster(5, held4, { n3: host("owner") });
    const plan = makePlan(snap({ nodes, running: [running(7, ["n1", "n2", "n3", "n4"])] }));
    const job: PlanJobState = { state: "running", nodes: ["n1", "n2", "n3", "n4"], minNodes: 1, maxNodes: 8, resizable: true };
    const byName = new Map(nodes.map((n) => [n.name, { up: n.up, jobId: n.jobId }]));
    expect(checkPlan(plan, { node: (x) => byName.get(x), job: () => job }).rejected).toEqual([]);
    byName.set("n5", { up: true, jobId: 9 });
    expect(checkPlan(plan, { node: (x) => byName.get(x), job: () => job }).rejected[0]?.reason).toBe("move 4 -> 2 nodes: node n5 is held by job 9");
  });

  test("destinations are chosen by score: the fastest free node, not the first by name", () => {
    const nodes = cluster(6, held4, { n4: host("overloaded", { "cpu.other": 0.8 }), n5: host("free", { "cpu.other": 0.3 }), n6: host("free", { "cpu.other": 0 }) });
    const plan = makePlan(snap({ nodes, running: [running(7, ["n1", "n2", "n3", "n4"])] }));
    expect(plan.resizes[0]!.added).toEqual(["n6"]);
    expect(plan.resizes[0]!.reason).toContain("speed 0.20 / 1.00");
  });

  test("a move that would cost more than it gains is not made: a job near its end stays, with the numbers", () => {
    const nodes = cluster(5, held4, { n4: host("overloaded", { "cpu.other": 0.5 }) });
    const nearEnd = running(7, ["n1", "n2", "n3", "n4"], { timeLimit: 62, adaptCost: 3 });
    const plan = makePlan(snap({ nodes, running: [nearEnd] }));
    expect(plan.resizes).toEqual([]);
    expect(plan.declined).toEqual([{ jobId: 7, nodes: 4, stays: ["n4"], reason: "stays on n4 (overloaded: cpu.other > 0.5): the move would cost more than it gains: remaining 2.00 s × (1 − speed 0.50 / 1.00) = 1.00 s gained ≤ cost 1 × measured 3.00 s per adaptation = 3.00 s" }]);
  });

  test("with no free node an elastic job shrinks off the loaded node when that pays; not when its minimum forbids", () => {
    const nodes = cluster(4, held4, { n4: host("owner") });
    const plan = makePlan(snap({ nodes, running: [running(7, ["n1", "n2", "n3", "n4"])] }));
    expect(plan.resizes.map((r) => [r.rule, r.from, r.to, r.removed, r.then])).toEqual([["move", 4, 3, ["n4"], undefined]]);
    expect(plan.resizes[0]!.reason).toContain("no node to go to");
    // It runs on 3 of its 4 nodes until grown back: its limit follows as after a scheduler's shrink (at most 4/3).
    expect(plan.resizes[0]!.limit.ratio).toBeCloseTo(4 / 3);
    const held = makePlan(snap({ nodes, running: [running(7, ["n1", "n2", "n3", "n4"], { minNodes: 4 })] }));
    expect(held.resizes).toEqual([]);
    expect(held.declined![0]!.reason).toContain("below its minimum 4");
  });

  test("a rigid job is left where it is, and said so; a job whose first node is loaded too", () => {
    const nodes = cluster(5, { n1: 7, n2: 7, n3: 8 }, { n1: host("owner"), n3: host("owner") });
    const plan = makePlan(snap({ nodes, running: [running(7, ["n1", "n2"]), running(8, ["n3"], { elastic: false })] }));
    expect(plan.resizes).toEqual([]);
    expect(plan.declined!.map((d) => [d.jobId, d.stays, d.reason])).toEqual([
      [7, ["n1"], "stays on n1 (owner: ebb drain --owner): its first node (rank 0's) is one of them, and a resize gives back only the last nodes of an allocation"],
      [8, ["n3"], "stays on n3 (owner: ebb drain --owner): a rigid job cannot move (only elastic and checkpoint-restart jobs do)"],
    ]);
  });

  test("a busy node takes no new job; the re-check refuses one onto it", () => {
    const nodes = cluster(3, {}, { n1: host("busy"), n2: host("owner") });
    const plan = makePlan(snap({ nodes, pending: [pendingJob(1, 1), pendingJob(2, 1)] }));
    expect(plan.starts).toEqual([{ jobId: 1, nodes: ["n3"], reason: "fcfs" }]);
    const forced = { ...plan, starts: [{ jobId: 2, nodes: ["n1"], reason: "fcfs" }] };
    const state = { node: (x: string) => ({ up: true, takesWork: x === "n3" }), job: () => ({ state: "pending", nodes: [], minNodes: 1, maxNodes: 1, resizable: false }) };
    expect(checkPlan(forced, state).rejected[0]?.reason).toBe("start on 1 nodes: node n1 takes no new work (its host state is not free)");
  });

  test("a reservation does not count on a node that takes no new work: the job holding it gives it back to nobody", () => {
    // Job 7 (rigid) holds n1 (busy) and n2 until NOW + 540 s; n3, n4 are idle. Job 1 (3 nodes) can
    // start then on n2, n3, n4, not one more: job 2 (1 node, 1 h) would take one of them. Counting
    // n1 back at job 7's end would see a spare node then and start job 2, delaying job 1.
    const nodes = cluster(4, { n1: 7, n2: 7 }, { n1: host("busy") });
    const seven = running(7, ["n1", "n2"], { elastic: false, minNodes: 2, maxNodes: 2, timeLimit: 600 });
    const plan = makePlan(snap({ nodes, running: [seven], pending: [pendingJob(1, 3), { ...pendingJob(2, 1), timeLimit: 3600 }] }));
    expect(plan.starts).toEqual([]);
    expect(plan.reservations.map((r) => [r.jobId, r.start])).toEqual([[1, NOW + 540_000]]);
  });

  test("in resource mode too, a reservation does not count on a node that takes no new work", () => {
    // As above, on nodes that report cores and memory (the resource pass, resource-plan.ts).
    const nodes = cluster(4, { n1: 7, n2: 7 }, { n1: host("busy") }).map((n) => ({ ...n, resources: { cores: 2, memMiB: 4096, gpus: [], features: [] } }));
    const seven = running(7, ["n1", "n2"], { elastic: false, minNodes: 2, maxNodes: 2, timeLimit: 600 });
    const plan = makePlan(snap({ nodes, running: [seven], pending: [pendingJob(1, 3), { ...pendingJob(2, 1), timeLimit: 3600 }] }));
    expect(plan.starts).toEqual([]);
    expect(plan.reservations.map((r) => [r.jobId, r.start])).toEqual([[1, NOW + 540_000]]);
  });

  test("the job's own measured pace comes first when it has samples on both sides of the load", () => {
    const nodes = cluster(5, held4, { n4: host("overloaded", { "cpu.other": 0.1 }) });
    // 10 iterations per window before the load (since NOW - 10 s), 4 after: speed 0.4, not the inputs' 0.9.
    const samples = [NOW - 40_000, NOW - 30_000, NOW - 20_000, NOW - 8_000, NOW - 2_000].map((time, i) => ({ time, mtct: 0.1, iterations: i < 3 ? 10 : 4 }));
    const plan = makePlan(snap({ nodes, running: [running(7, ["n1", "n2", "n3", "n4"], { samples })] }));
    expect(plan.resizes[0]!.reason).toContain("(1 − measured speed 0.40 / 1.00)");
    expect(measuredSpeed(samples.slice(2), NOW - 10_000)).toBeUndefined();
  });

  test("a node's speed: owner 0, else what cpu.other leaves, overloaded without it 0.5", () => {
    expect([hostSpeed(undefined), hostSpeed(host("owner", { "cpu.other": 0 })), hostSpeed(host("overloaded", { "cpu.other": 0.7 })), hostSpeed(host("overloaded")), hostSpeed(host("busy"))].map((x) => Math.round(x * 100) / 100)).toEqual([1, 0, 0.3, 0.5, 1]);
  });

  test("under ebb too (the default policy): the move comes after the policy's plan and no grow takes the loaded node", () => {
    const nodes = cluster(5, held4, { n3: host("owner") });
    const plan = makePlan(snap({ nodes, running: [running(7, ["n1", "n2", "n3", "n4"])] }, "ebb"));
    expect(plan.resizes.map((r) => [r.rule, r.to, r.then?.added])).toEqual([["move", 2, ["n4", "n5"]]]);
  });
});
