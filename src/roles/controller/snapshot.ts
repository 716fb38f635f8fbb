/**
 * What a scheduling pass sees (sched/plan.ts `Snapshot`), built from the controller's state: every
 * node (schedulable or not, its cores, memory, GPUs and features), the eligible pending jobs with
 * their resource requests, every running job with its node names and its share of each, its ranks
 * per node, its MTCT samples since its last adaptation and what it measured at each size, and the
 * spawn requests waiting. The simulator builds the same snapshot from its virtual cluster.
 */
import { compareNames } from "../../sched/batch.ts";
import { restartCost } from "../../sched/restart-cost.ts";
import { POLICY_TABLE } from "../../sched/policies/index.ts";
import { measuredModel } from "../../sched/profile.ts";
import type { AdminLimits, ErsConfig } from "../../sched/config.ts";
import type { Snapshot, SnapshotJob } from "../../sched/plan.ts";
import type { PendingJob } from "../../sched/types.ts";
import type { MeasuredPoint } from "../../sched/profile.ts";
import type { Elastic } from "./elastic.ts";
import type { SpawnQueue } from "./spawns.ts";
import { hostOf, type ClusterState, type JobRuntime } from "./state.ts";
import type { QueuePolicy } from "./queue.ts";
import { pendingView } from "../../sched/pending.ts";
import { expectedEnd } from "./program.ts";

/** A job's timing samples and per-size measurements, as last read from SQLite. */
interface Measured {
  at: number;
  key: string;
  samples: { time: number; mtct: number }[];
  points: MeasuredPoint[];
}

export class Snapshots {
  /** Passes run at every event and every second; samples arrive once per sampling interval: read them at most twice per interval. */
  private readonly measuredCache = new Map<number, Measured>();
  /**
   * The nodes' names in the order a pass takes them (compareNames), sorted again only when a node
   * joins (the registry never drops one): each pass sorted them with the collator.
   */
  private nodeOrder: string[] = [];

  constructor(
    private readonly state: ClusterState,
    private readonly elastic: () => Elastic,
    private readonly spawns: SpawnQueue,
    readonly config: ErsConfig,
    private readonly limits: AdminLimits,
    private readonly sampleInterval: number,
    /** MiB per core of a request that names no memory (`--def-mem-per-cpu`); else each node's memory / cores. */
    private readonly defMemPerCpu?: number,
    /** Partitions, limits and priority order (absent: submit order on every node). */
    private readonly queue?: QueuePolicy,
  ) {}

  /**
   * The cluster as it is at `now`; `reasons`: the plan says why every job it leaves pending waits;
   * `resizes`: false leaves them out (`--test-only`).
   */
  take(now: number, reasons: boolean, resizes = true): Snapshot {
    const nodes = [];
    if (this.nodeOrder.length !== this.state.nodes.size) this.nodeOrder = [...this.state.nodes.keys()].sort(compareNames);
    // Nodes report resources: the pass plans in resource mode, a node held by the running jobs' shares.
    for (const name of this.nodeOrder) {
      const n = this.state.nodes.get(name)!;
      const host = hostOf(n);
      nodes.push({ name: n.row.name, up: this.state.isSchedulable(n, now), cpus: n.row.cpus, resources: this.state.resources(n), ...(host ? { host } : {}) });
    }
    const running: SnapshotJob[] = [];
    for (const job of this.state.started()) if (job.row.startTime !== null) running.push(this.running(job, now));
    // In queue order (partition tier, priority), on their partitions' nodes, without the jobs a limit
    // holds back; the running jobs get their priorities too. The queue keeps its order between
    // passes where it can (queue-kept.ts), else every waiting job is arranged again.
    const pending: PendingJob[] = this.queue?.keeps() ? this.queue.arrangeKept(now, running) : this.queue ? this.queue.arrange(this.waiting(), now, running) : this.waiting().map((job) => (job.request ??= pendingView(job.row)));
    for (const id of this.measuredCache.keys()) if (!this.state.jobs.has(id)) this.measuredCache.delete(id);
    return { now, nodes, namesSorted: true, pending, sorted: this.queue !== undefined, running, spawns: this.spawns.waiting > 0 ? this.spawns.requests() : [], defMemPerCpu: this.defMemPerCpu, config: this.config, limits: this.limits, reasons, resizes };
  }

  /** The waiting jobs a pass sees: a blocked one (held, a dependency, a begin time, an array limit) is not seen. */
  private waiting(): JobRuntime[] {
    const out: JobRuntime[] = [];
    for (const job of this.state.waiting()) if (!job.blocked) out.push(job);
    return out;
  }

  private running(job: JobRuntime, now: number): SnapshotJob {
    const r = job.row;
    const e = job.elastic;
    const { samples, points: measured } = this.measured(job, now);
    // Its partition's nodes only: a grow never leaves them.
    const exclude = this.queue ? this.queue.excludeOf(job) : r.exclude;
    return {
      id: r.id,
      nodes: job.nodes.length,
      nodeNames: job.nodes,
      shares: job.shares,
      resources: r.resources ?? undefined,
      ...(e?.tasks && e.tasks.length === job.nodes.length ? { tasks: e.tasks } : {}),
      ...(exclude ? { exclude } : {}),
      minNodes: r.minNodes,
      maxNodes: r.maxNodes,
      // Only a job whose elastic step is running with its launcher attached can be resized.
      elastic: r.elastic && e?.launcher !== undefined && e.tasks !== undefined,
      submitTime: r.submitTime,
      startTime: r.startTime!,
      timeLimit: r.timeLimit,
      // The batch pass's estimate: start + limit, or sooner when an EPOP program's progress says so.
      expectedEnd: expectedEnd(job, now),
      samples,
      adapting: r.state === "ADAPTING",
      resizingTo: e?.adapting?.to,
      lastAdaptEnd: e?.lastAdaptEnd,
      // Measured, else (a checkpoint-restart job) estimated from its start and its state.
      adaptCost: e?.adaptCostMs !== undefined ? e.adaptCostMs / 1000 : e?.checkpoint ? restartCost({ coldStart: e.checkpoint.coldStartMs / 1000, nodeBytes: Math.max(0, ...e.checkpoint.nodeBytes.values()) }) : undefined,
      overrides: r.elasticSettings ?? undefined,
      profile: measured.length > 0 ? measured.map((p) => ({ nodes: p.nodes, iterTime: p.iterTime })) : undefined,
      // APM's policies model a job only by what it measured (the others read MTCT and the profile).
      model: this.config.policy.startsWith("apm-") ? measuredModel(measured) : undefined,
      ...(r.sizes ? { sizes: r.sizes } : {}),
    };
  }

  private measured(job: JobRuntime, now: number): { samples: Measured["samples"]; points: MeasuredPoint[] } {
    const r = job.row;
    const e = job.elastic;
    const policy = POLICY_TABLE[this.config.policy];
    if (!r.elastic || !policy.resizes) return { samples: [], points: [] };
    const interval = r.sampleInterval ?? this.sampleInterval;
    const key = `${e?.samplesSince}/${e?.adapting?.id}/${e?.lastAdaptEnd}`;
    const hit = this.measuredCache.get(r.id);
    if (hit && hit.key === key && now - hit.at < (interval * 1000) / 2) return hit;
    // The first window after a start or an adaptation holds warm-up and connection set-up: skipped.
    const since = (e?.samplesSince ?? r.startTime ?? 0) + interval * 1000;
    // Policies that do not model MTCT get no samples, and no query per job.
    const samples = policy.mtct ? this.elastic().mtct(r.id, interval, since, now).samples.map((x) => ({ time: x.time, mtct: x.mtct, iterations: x.iterations })) : [];
    // What it measured at each size it ran at: ReSHAPE's profile, APM's runtime model, and the
    // ratio a resize rescales its time limit by.
    const points = this.elastic().measured(r.id, interval * 1000);
    const m = { at: now, key, samples, points };
    this.measuredCache.set(r.id, m);
    return m;
  }
}
