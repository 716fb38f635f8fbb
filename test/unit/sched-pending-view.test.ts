/**
 * A waiting job looks the same to the scheduler live and simulated: the controller's view of a
 * pending job (roles/controller/snapshot.ts, from the row the ledger holds) and the simulator's snapshot
 * (sim/cluster.ts, from its trace job) both come from `sched/pending.ts` `pendingView`. Before,
 * the controller capped an elastic job's range at the size it asked for and the simulator did
 * not, so `apm-*` started it smaller live than simulated.
 */
import { describe, expect, test } from "bun:test";
import { reduce } from "../../src/roles/controller/ledger.ts";
import { Snapshots } from "../../src/roles/controller/snapshot.ts";
import { SpawnQueue } from "../../src/roles/controller/spawns.ts";
import { ClusterState } from "../../src/roles/controller/state.ts";
import { DEFAULT_LIMITS } from "../../src/sched/config.ts";
import { POLICIES, resolveConfig, type PolicyName } from "../../src/sched/config.ts";
import { pendingView, type JobRequest } from "../../src/sched/pending.ts";
import { makePlan, type Snapshot } from "../../src/sched/plan.ts";
import { SimCluster } from "../../src/sim/cluster.ts";
import { handleEvent } from "../../src/sim/events.ts";
import { amdahlWork, type SimJob } from "../../src/sim/job.ts";
import { Tally } from "../../src/sim/tally.ts";
import { Timeline } from "../../src/sim/timeline.ts";
import type { JobRow } from "../../src/store/jobs.ts";

const NODES = 16;

/** What a job asked for: the fields a controller row and a simulator job both have (pending.ts). */
type Asked = Omit<JobRequest, "exclude" | "nodelist" | "sizes"> & { sizes?: number[] };

const ASKED: Asked[] = [
  // elastic, its range above the size it asked for
  { id: 1, nodes: 4, minNodes: 2, maxNodes: 8, elastic: true, timeLimit: 600, submitTime: 1_000 },
  // rigid
  { id: 2, nodes: 3, minNodes: 3, maxNodes: 3, elastic: false, timeLimit: 300, submitTime: 2_000 },
  // --nodes 2-6, not elastic: any size in the range
  { id: 3, nodes: 6, minNodes: 2, maxNodes: 6, elastic: false, timeLimit: 900, submitTime: 3_000 },
  // elastic with valid sizes
  { id: 4, nodes: 4, minNodes: 1, maxNodes: 16, elastic: true, timeLimit: 1200, submitTime: 4_000, sizes: [1, 4, 9, 16] },
  // elastic, asked for the top of its range
  { id: 5, nodes: 8, minNodes: 2, maxNodes: 8, elastic: true, timeLimit: 60, submitTime: 5_000 },
];

/** The controller's row of a pending job that asked for `a`. */
function row(a: Asked): JobRow {
  return {
    id: a.id, name: `job${a.id}`, kind: "command", state: "PENDING", argv: ["true"], script: null, args: null,
    nodes: a.nodes, minNodes: a.minNodes, maxNodes: a.maxNodes, elastic: a.elastic,
    tasks: null, tasksPerNode: null, overcommit: false, timeLimit: a.timeLimit, env: {}, cwd: "/tmp", output: null,
    submitTime: a.submitTime, startTime: null, endTime: null, exitCode: null, reason: null, nextStep: 0,
    sampleInterval: null, elasticSettings: null, arrayJobId: null, arrayTaskId: null, arrayLimit: null, held: false,
    dependency: null, beginTime: null, exclude: null, nodelist: null, sizes: a.sizes ?? null, program: null,
    signal: null, requeue: false, restarts: 0, appendOutput: false,
    error: null, user: null, submittedBy: null, resources: null, usage: null, partition: null,
  };
}

/** The live view: the controller's scheduler view of each job, as `Snapshots.take` collects them. */
function liveSnapshot(policy: PolicyName): Snapshot {
  const state = new ClusterState();
  reduce(state, { t: "submitted", rows: ASKED.map(row) });
  const config = resolveConfig({ policy });
  const { pending } = new Snapshots(state, () => undefined as never, new SpawnQueue(state, () => {}), config, DEFAULT_LIMITS, 60).take(10_000, false);
  const nodes = Array.from({ length: NODES }, (_, i) => ({ name: `n${i + 1}`, up: true }));
  return { now: 10_000, nodes, pending, running: [], config };
}

/** The simulated view: the same jobs arrive in a virtual cluster, its snapshot as a pass takes it. */
function simSnapshot(policy: PolicyName): Snapshot {
  const cluster = new SimCluster(NODES);
  const replay = { cluster, timeline: new Timeline(), tally: new Tally(), noisy: (m: number) => m, now: 10 };
  for (const a of ASKED) {
    const job: SimJob = {
      id: a.id, submit: a.submitTime / 1000, nodes: a.nodes, minNodes: a.minNodes, maxNodes: a.maxNodes, malleable: a.elastic,
      estimate: a.timeLimit, work: amdahlWork(a.timeLimit, 0.1), resizeCost: () => 5, ...(a.sizes ? { sizes: a.sizes } : {}),
    };
    cluster.add(job);
    handleEvent({ time: job.submit, seq: a.id, kind: "arrive", job: a.id, version: 0 }, job.submit, replay);
  }
  return cluster.snapshot(10, resolveConfig({ policy }));
}

describe("a pending job's scheduler view", () => {
  test("the controller and the simulator build the same pending jobs", () => {
    expect(simSnapshot("ebb").pending).toStrictEqual(liveSnapshot("ebb").pending);
  });

  test("every policy plans the same from the live and the simulated snapshot", () => {
    for (const policy of POLICIES) {
      const live = makePlan(liveSnapshot(policy));
      const sim = makePlan(simSnapshot(policy));
      expect({ policy, starts: sim.starts, reservations: sim.reservations }).toStrictEqual({ policy, starts: live.starts, reservations: live.reservations });
    }
  });

  test("an elastic job waits with its whole range and the size it asked for", () => {
    // (toEqual: every view has every key, undefined when absent.)
    expect(pendingView(ASKED[0]!)).toEqual({ id: 1, minNodes: 2, maxNodes: 8, preferredNodes: 4, timeLimit: 600, submitTime: 1_000, elastic: true });
    expect(pendingView(ASKED[2]!)).toEqual({ id: 3, minNodes: 2, maxNodes: 6, timeLimit: 900, submitTime: 3_000, elastic: false, moldable: true });
    expect(pendingView(ASKED[1]!)).toEqual({ id: 2, minNodes: 3, maxNodes: 3, timeLimit: 300, submitTime: 2_000, elastic: false });
  });

  test("APM shares an elastic job's whole range at its start; the batch policies start it at the size it asked for", () => {
    const only = (policy: PolicyName) => {
      const s = liveSnapshot(policy);
      return makePlan({ ...s, pending: s.pending.filter((j) => j.id === 1) }).starts.map((st) => st.nodes.length);
    };
    // APM (Hungershöfer et al.): the job is given what it "can handle reasonably", up to its maximum.
    expect(only("apm-equi")).toEqual([8]);
    expect(only("easy")).toEqual([4]);
    expect(only("ebb")).toEqual([4]);
  });
});
