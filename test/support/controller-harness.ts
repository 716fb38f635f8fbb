/**
 * The controller without processes or sockets, in the style of Nomad's scheduler harness: the
 * ledger, Jobs, Elastic, the snapshot, the pure planner and the plan applier over an in-memory
 * database, with agent and launcher sessions that record what they are sent. A test drives it by
 * submitting, passing, and answering as agents and launchers would.
 */
import type { ControllerToLauncher } from "../../src/proto/launcher.ts";
import type { ControllerToAgent } from "../../src/proto/agent.ts";
import { Elastic } from "../../src/roles/controller/elastic.ts";
import { Eligibility } from "../../src/roles/controller/eligibility.ts";
import { Jobs, type Submitter } from "../../src/roles/controller/jobs.ts";
import { Ledger } from "../../src/roles/controller/ledger.ts";
import { PlanApplier } from "../../src/roles/controller/plan-apply.ts";
import { SchedulerLoop } from "../../src/roles/controller/scheduler.ts";
import { Snapshots } from "../../src/roles/controller/snapshot.ts";
import { SpawnQueue } from "../../src/roles/controller/spawns.ts";
import { ClusterState, type LauncherSession } from "../../src/roles/controller/state.ts";
import { DEFAULT_LIMITS, resolveConfig, type ErsConfig } from "../../src/sched/config.ts";
import { openDb, type Db } from "../../src/store/db.ts";
import { ElasticStore } from "../../src/store/elastic.ts";
import { JobStore } from "../../src/store/jobs.ts";
import { upsertNode } from "../../src/store/nodes.ts";
import { PlanStore } from "../../src/store/plans.ts";

export class ControllerHarness {
  readonly db: Db;
  readonly store: JobStore;
  readonly state = new ClusterState();
  readonly ledger: Ledger;
  readonly jobs: Jobs;
  readonly elastic: Elastic;
  readonly scheduler: SchedulerLoop;
  readonly applier: PlanApplier;
  readonly snapshots: Snapshots;
  /** Every message to an agent, in order. */
  readonly toAgents: { node: string; msg: ControllerToAgent }[] = [];
  readonly by: Submitter = { user: "alice" };

  constructor(nodes = 4, scheduler: Partial<ErsConfig> = {}, db = openDb(":memory:")) {
    this.db = db;
    this.store = new JobStore(db);
    for (let i = 1; i <= nodes; i++) this.addNode(`n${i}`);
    this.ledger = new Ledger(this.store, this.state);
    const eligibility = new Eligibility(this.state, this.store);
    const spawns = new SpawnQueue(this.state, () => {});
    const config = resolveConfig(scheduler);
    this.jobs = new Jobs(
      this.store,
      this.state,
      { clusterKey: "k".repeat(64), defaultTimeLimit: 3600, killWaitMs: 5000, orphanGraceMs: 60_000, sampleInterval: 60, maxArrayTasks: 1001, maxJobCount: 50_000, clusterName: "ebb" },
      {
        toAgent: (node, msg) => {
          this.toAgents.push({ node, msg });
          return this.state.nodes.get(node)?.session !== undefined;
        },
        schedule: () => {},
        ended: (job) => this.elastic.jobEnded(job),
        watch: (list, at) => eligibility.watch(list, at),
        requestNodes: (jobId, tasks, waitMs, grant) => spawns.request(jobId, tasks, waitMs, grant),
      },
      this.ledger,
    );
    this.elastic = new Elastic(this.store, new ElasticStore(db), this.state, this.jobs, this.ledger, "k".repeat(64), 600_000, { schedule: () => {} });
    const snapshots = (this.snapshots = new Snapshots(this.state, () => this.elastic, spawns, config, DEFAULT_LIMITS, 60));
    this.applier = new PlanApplier(this.state, this.store, new PlanStore(db), this.jobs, () => this.elastic, spawns, snapshots);
    const applier = this.applier;
    this.scheduler = new SchedulerLoop(this.state, snapshots, applier, { beforePass: (t) => eligibility.refresh(t) });
  }

  /** A node whose agent is connected (its session records nothing: `toAgents` does). */
  addNode(name: string, cpus = 4, more: { memoryMb?: number; gpus?: (string | null)[]; features?: string[] } = {}): void {
    const row = { name, addr: `127.0.0.1:${7000 + this.state.nodes.size}`, cpus, memoryMb: 1024, gpus: [], features: [], status: "UP" as const, reason: null, drain: null, ownerSince: null, registeredAt: 0, updatedAt: 0, ...more };
    upsertNode(this.db, row);
    const node = ClusterState.node({ ...row }, Date.now());
    node.session = { send: () => {}, close: () => {}, remote: "harness" };
    this.state.nodes.set(name, node);
  }

  submit(body: Record<string, unknown>): number {
    return this.jobs.submit({ cwd: "/tmp", argv: ["true"], ...body } as never, this.by).id;
  }

  pass(now = Date.now()): void {
    this.scheduler.pass(now);
  }

  job(id: number) {
    return this.state.jobs.get(id);
  }

  /** Who holds each node, by name. */
  owners(): Record<string, number | null> {
    return Object.fromEntries([...this.state.nodes.values()].map((n) => [n.row.name, n.shares.keys().next().value ?? null]));
  }

  /** A launcher session for a job's elastic step, recording the controller's orders and, at each flush, how many it had sent. */
  launcher(): LauncherSession & { got: ControllerToLauncher[]; flushes: number[] } {
    const got: ControllerToLauncher[] = [];
    const flushes: number[] = [];
    return { got, flushes, send: (m) => void got.push(m), flush: () => void flushes.push(got.length), close: () => {}, remote: "harness" };
  }
}
