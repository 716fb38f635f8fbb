/**
 * The queue kept from pass to pass (roles/controller/queue-kept.ts) against the queue arranged
 * afresh (`QueuePolicy.arrange` over every eligible waiting job): a seeded random run of
 * submissions by three users into partitions of two tiers (some at the same instant), starts,
 * ends, requeues, holds and releases, partition moves (scontrol update), with usage charged as time passes; after every change both
 * give the same jobs in the same order, with the same priorities (to the last bit) and tiers, and
 * the running jobs the same priorities.
 */
import { expect, test } from "bun:test";
import { Ledger } from "../../src/roles/controller/ledger.ts";
import { QueuePolicy } from "../../src/roles/controller/queue.ts";
import { ClusterState, type JobRuntime } from "../../src/roles/controller/state.ts";
import { Partitions } from "../../src/sched/partitions.ts";
import { resolvePriority, type PriorityConfig } from "../../src/sched/priority.ts";
import type { JobState, PendingJob } from "../../src/sched/types.ts";
import { mulberry32 } from "../../src/sim/random.ts";
import { openDb } from "../../src/store/db.ts";
import { JobStore } from "../../src/store/jobs.ts";
import type { NodeRow } from "../../src/store/nodes.ts";

const NODES = 6;
const USERS = ["alice", "bob", "carol"];

function cluster(): ClusterState {
  const state = new ClusterState();
  for (let i = 1; i <= NODES; i++) {
    const row: NodeRow = { name: `n${i}`, addr: `127.0.0.1:${7000 + i}`, cpus: 4, memoryMb: 1024, gpus: [], features: [], status: "UP", reason: null, drain: null, ownerSince: null, registeredAt: 0, updatedAt: 0 };
    state.nodes.set(row.name, ClusterState.node(row, 0));
  }
  return state;
}

const running = (state: ClusterState, now: number): JobState[] =>
  state.started().map((j) => ({ id: j.row.id, nodes: j.nodes.length, minNodes: 1, maxNodes: 1, elastic: false, submitTime: j.row.submitTime, startTime: j.row.startTime ?? now, timeLimit: 3600, samples: [], adapting: false }));

const seen = (q: readonly PendingJob[]) => q.map((v) => `${v.id}:${v.priority}:${v.tier}`).join(" ");

test("the kept queue equals the queue arranged afresh after every change of a random run (multifactor priority)", () => {
  randomRun(resolvePriority({ halfLife: 600, maxAge: 3600, shares: { alice: 2 } }));
});

test("the kept queue equals the queue arranged afresh after every change of a random run (submit order)", () => {
  randomRun(resolvePriority({ type: "submit" }));
});

function randomRun(priority: PriorityConfig): void {
  const store = new JobStore(openDb(":memory:"));
  const state = cluster();
  const ledger = new Ledger(store, state);
  const partitions = new Partitions([
    { name: "low", nodes: "ALL", default: true },
    { name: "high", nodes: "ALL", tier: 2 },
  ]);
  const queue = new QueuePolicy({ priority, partitions, userLimits: {} }, state);
  expect(queue.keeps()).toBe(true);
  const { next } = mulberry32(36);
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]) => xs[int(xs.length)]!;
  let now = 1_000_000_000;
  let changes = 0;
  let deepest = 0;
  const kinds = new Set<string>();
  for (let step = 0; step < 1500; step++) {
    // Some submissions at the same instant as the last change (equal submit times, equal ages).
    if (next() < 0.7) now += 1 + int(120_000);
    const r = next();
    const pending = [...state.waiting()];
    const started = state.started();
    if (r < 0.35) {
      const user = pick(USERS);
      ledger.commit((tx) => tx.submitted({ name: "j", kind: "command", argv: ["true"], script: null, env: {}, cwd: "/tmp", nodes: 1, minNodes: 1, maxNodes: 1, elastic: false, tasks: null, tasksPerNode: null, overcommit: false, timeLimit: 3600, submittedBy: null, user, submitTime: now, partition: next() < 0.3 ? "high" : "low", resources: { cpusPerTask: 1, tasks: 1, exclusive: false } } as never));
      kinds.add("submit");
    } else if (r < 0.55 && pending.length > 0) {
      const job = pick(pending);
      const node = [...state.nodes.values()].find((n) => state.freeCores(n) > 0);
      if (!node) continue;
      const held = new Set([...node.shares.values()].flatMap((s) => s.cores));
      const core = [0, 1, 2, 3].find((c) => !held.has(c))!;
      ledger.commit((tx) => tx.started(job, [{ node: node.row.name, cores: [core], memMiB: 64, gpus: [] }], now, { nextStep: 1, output: null, error: null, timeLimit: 3600 }));
      kinds.add("start");
    } else if (r < 0.7 && started.length > 0) {
      const job = pick(started);
      queue.ended(job, now);
      ledger.commit((tx) => tx.ended(job, "COMPLETED", now, 0, null));
      kinds.add("end");
    } else if (r < 0.75 && started.length > 0) {
      const job = pick(started);
      queue.ended(job, now);
      ledger.commit((tx) => tx.requeued(job, now));
      kinds.add("requeue");
    } else if (r < 0.85 && pending.length > 0) {
      // A hold, a dependency, a begin time: what Eligibility sets before a pass.
      const job: JobRuntime = pick(pending);
      state.block(job, job.blocked ? undefined : { reason: "JobHeldUser", detail: "held" });
      kinds.add(job.blocked ? "block" : "release");
    } else if (r < 0.9 && pending.length > 0) {
      const job = pick(pending);
      ledger.commit((tx) => tx.ended(job, "CANCELLED", now, null, "cancelled"));
      kinds.add("cancel");
    } else if (r < 0.93 && pending.length > 0) {
      // scontrol update Partition= of a waiting job: another tier, its view made again.
      const job = pick(pending);
      ledger.commit((tx) => tx.updated(job, { partition: job.row.partition === "high" ? "low" : "high" }));
      state.asksAgain(job);
      kinds.add("move");
    }
    const ranKept = running(state, now);
    const ranFresh = running(state, now);
    const kept = seen(queue.arrangeKept(now, ranKept));
    const fresh = seen(queue.arrange([...state.waiting()].filter((j) => !j.blocked), now, ranFresh));
    if (kept !== fresh) expect(kept).toBe(fresh);
    expect(ranKept.map((j) => j.priority)).toEqual(ranFresh.map((j) => j.priority));
    deepest = Math.max(deepest, [...state.waiting()].length);
    changes++;
  }
  expect(changes).toBeGreaterThan(1400);
  expect(deepest).toBeGreaterThan(30);
  expect([...kinds].sort()).toEqual(["block", "cancel", "end", "move", "release", "requeue", "start", "submit"]);
}
