/**
 * What a scheduling pass sees (sched/plan.ts `Snapshot`), built from the controller's state: every
 * node (schedulable or not, the job holding it, its cpus), the eligible pending jobs, every running
 * job with its node names, its ranks per node, its MTCT samples since its last adaptation and
 * what it measured at each size, and the spawn requests waiting. The simulator builds the same
 * snapshot from its virtual cluster.
 */
import { POLICY_TABLE } from "../../sched/policies/index.ts";
import { measuredModel } from "../../sched/profile.ts";
import type { AdminLimits, ErsConfig } from "../../sched/config.ts";
import type { Snapshot, SnapshotJob } from "../../sched/plan.ts";
import type { PendingJob } from "../../sched/types.ts";
import type { Elastic } from "./elastic.ts";
import type { SpawnQueue } from "./spawns.ts";
import type { ClusterState, JobRuntime } from "./state.ts";

export class Snapshots {
  constructor(
    private readonly state: ClusterState,
    private readonly elastic: () => Elastic,
    private readonly spawns: SpawnQueue,
    readonly config: ErsConfig,
    private readonly limits: AdminLimits,
    private readonly sampleInterval: number,
  ) {}

  /** The cluster as it is at `now`; `reasons`: the plan says why every job it leaves pending waits. */
  take(now: number, reasons: boolean): Snapshot {
    const nodes = [];
    for (const n of this.state.nodes.values()) nodes.push({ name: n.row.name, up: this.state.isSchedulable(n, now), jobId: n.jobId, cpus: n.row.cpus });
    const pending: PendingJob[] = [];
    const running: SnapshotJob[] = [];
    for (const job of this.state.jobs.values()) {
      if (job.sched.pending) pending.push(job.sched.pending);
      else if (job.row.startTime !== null) running.push(this.running(job, now));
    }
    return { now, nodes, pending, running, spawns: this.spawns.waiting > 0 ? this.spawns.requests() : [], config: this.config, limits: this.limits, reasons };
  }

  private running(job: JobRuntime, now: number): SnapshotJob {
    const r = job.row;
    const e = job.elastic;
    const policy = POLICY_TABLE[this.config.policy];
    // The first window after a start or an adaptation holds warm-up and connection set-up: skipped.
    const interval = r.sampleInterval ?? this.sampleInterval;
    const since = (e?.samplesSince ?? r.startTime ?? 0) + interval * 1000;
    // Policies that do not model MTCT get no samples, and no query per job; those that never
    // resize get no measurements either.
    const samples = r.elastic && policy.mtct ? this.elastic().mtct(r.id, interval, since, now).samples : [];
    // What it measured at each size it ran at: ReSHAPE's profile, APM's runtime model, and the
    // ratio a resize rescales its time limit by.
    const measured = r.elastic && policy.resizes ? this.elastic().measured(r.id, interval * 1000) : [];
    return {
      id: r.id,
      nodes: job.nodes.length,
      nodeNames: job.nodes,
      ...(e?.tasks && e.tasks.length === job.nodes.length ? { tasks: e.tasks } : {}),
      ...(r.exclude ? { exclude: r.exclude } : {}),
      minNodes: r.minNodes,
      maxNodes: r.maxNodes,
      // Only a job whose elastic step is running with its launcher attached can be resized.
      elastic: r.elastic && e?.launcher !== undefined && e.tasks !== undefined,
      submitTime: r.submitTime,
      startTime: r.startTime!,
      timeLimit: r.timeLimit,
      // The batch pass's estimate: start + limit, or sooner when an EPOP program's progress says so.
      expectedEnd: job.sched.running?.expectedEnd,
      samples: samples.map((s) => ({ time: s.time, mtct: s.mtct })),
      adapting: r.state === "ADAPTING",
      resizingTo: e?.adapting?.to,
      lastAdaptEnd: e?.lastAdaptEnd,
      adaptCost: e?.adaptCostMs === undefined ? undefined : e.adaptCostMs / 1000,
      overrides: r.elasticSettings ?? undefined,
      profile: measured.length > 0 ? measured.map((p) => ({ nodes: p.nodes, iterTime: p.iterTime })) : undefined,
      // APM's policies model a job only by what it measured (the others read MTCT and the profile).
      model: this.config.policy.startsWith("apm-") ? measuredModel(measured) : undefined,
      ...(r.sizes ? { sizes: r.sizes } : {}),
    };
  }
}
