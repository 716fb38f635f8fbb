/**
 * The queue as a pass sees it, live: which waiting jobs limits hold back (sched/quota.ts), which
 * nodes each job may use (its partition's: sched/partitions.ts), and their order (multifactor
 * priority with fair share: sched/priority.ts). The snapshot (snapshot.ts) asks it before every
 * pass; the API's priority, share and partition listings read it.
 *
 * Fair share charges each running job's shares (cores, memory, GPUs) to its user: up to the
 * moment of each pass, and up to its end when it ends; a change of shares between two passes
 * (a resize) is charged at the new size from the pass before, at most a second early. At a start
 * the usage is rebuilt from the allocation history (job_nodes rows: since, until, share), as far
 * back as it still weighs (20 half-lives).
 */
import type { NodeResources } from "../../domain/resources.ts";
import { NOBODY, ownerOf } from "../../domain/job.ts";
import { jobRate, shareRate, UsageBook, type ShareRow } from "../../sched/fairshare.ts";
import { inPartition, type Partition, type Partitions, type UserLimits } from "../../sched/partitions.ts";
import { applyPriorities, fairshareTerm, priorityOfEach, priorityWith, prioritize, shareRows, type PriorityConfig, type PriorityFactors, type PriorityJob } from "../../sched/priority.ts";
import { queueOrder } from "../../sched/batch.ts";
import { mergeRuns, queueOrderByRuns, runKey } from "../../sched/queue-runs.ts";
import { holdBack, submitLimit, type Amounts, type QuotaJob } from "../../sched/quota.ts";
import type { JobState, PendingJob } from "../../sched/types.ts";
import { pendingView } from "../../sched/pending.ts";
import { shareOf, type JobRow, type JobStore } from "../../store/jobs.ts";
import type { ClusterState, JobRuntime } from "./state.ts";
import { KeptQueue } from "./queue-kept.ts";

export interface QueueConfig {
  priority: PriorityConfig;
  partitions: Partitions;
  /** Each user's limits on the whole cluster. */
  userLimits: UserLimits;
}

/** A pending job's factors and where it runs (GET /v1/priority). */
export interface JobPriority extends PriorityFactors {
  partition: string | null;
}


export class QueuePolicy {
  readonly usage: UsageBook;
  /** Until when (epoch ms) each running job has been charged. */
  private readonly charged = new Map<number, number>();
  /** Each restricted partition's nodes outside it (what its jobs exclude), for `nodeCount` nodes. */
  private outside = new Map<string, readonly string[]>();
  private nodeCount = -1;
  /** A pending job's view with its partition's excluded nodes, as long as the nodes do not change. */
  private readonly views = new WeakMap<JobRuntime, { outside: readonly string[]; base: PendingJob; view: PendingJob }>();
  /** Whether some partition has only some of the nodes (else no job's partition excludes a node). */
  private readonly someNodesOnly: boolean;
  /** Whether a limit may hold a waiting job back (the config's: it does not change). */
  private readonly limits: boolean;
  /** The queue kept from pass to pass, when its order is by runs and no limit applies (`keeps`). */
  private readonly kept?: KeptQueue;
  /** The node count the kept views were made for (a partition's excluded nodes follow the nodes). */
  private keptNodes = -1;

  constructor(
    readonly cfg: QueueConfig,
    private readonly state: ClusterState,
  ) {
    this.usage = new UsageBook(cfg.priority.halfLife);
    this.someNodesOnly = cfg.partitions.list.some((p) => p.nodes !== undefined);
    this.limits = this.hasLimits();
    if (!this.limits && !(cfg.priority.type === "multifactor" && cfg.priority.weights.jobSize > 0)) this.kept = new KeptQueue(state, (job) => this.keptView(job));
  }

  /** Whether `arrangeKept` may be asked (else `arrange`: limits, or a size factor that orders every job apart). */
  keeps(): boolean {
    return this.kept !== undefined;
  }

  /**
   * `arrange` of every eligible waiting job (in id order), from the queue kept between passes
   * (queue-kept.ts): the same views in the same order with the same priorities and tiers; the
   * running jobs' priorities set the same way.
   */
  arrangeKept(now: number, running: readonly JobState[] = []): PendingJob[] {
    const kept = this.kept!;
    this.charge(now);
    if (this.someNodesOnly && this.state.nodes.size !== this.keptNodes) {
      this.keptNodes = this.state.nodes.size;
      kept.resync();
    }
    const runs = [...kept.runs()];
    const multifactor = this.cfg.priority.type === "multifactor";
    const ran = running.map((r) => this.priorityJobOf(r, 0));
    if (multifactor) {
      const users = shareRows([...runs.map((r) => r.user), ...ran.map((j) => j.user)], this.usage, this.cfg.priority, now);
      for (const run of runs) {
        const fs = fairshareTerm(users.get(run.user), this.cfg.priority);
        for (const e of run.entries) e.view.priority = priorityWith(e.pj, fs, this.cfg.priority, now);
      }
      for (let i = 0; i < running.length; i++) running[i]!.priority = priorityWith(ran[i]!, fairshareTerm(users.get(ran[i]!.user), this.cfg.priority), this.cfg.priority, now);
    } else {
      // With submit priority no job has one (a waiting job's view never gets one).
      for (const r of running) r.priority = undefined;
    }
    // A new array each pass: the policies keep what they derive per queue array (a new queue is a new array).
    return runs.length === 1 ? runs[0]!.views.slice() : mergeRuns(runs.map((r) => r.views));
  }

  /** A waiting job's view (its tier set, as `order` sets it) and what its priority is made of. */
  private keptView(job: JobRuntime): { view: PendingJob; pj: PriorityJob } {
    const view = this.view(job);
    const pj = this.priorityJobOf(view, 0);
    view.tier = pj.tier !== 0 ? pj.tier : undefined;
    return { view, pj };
  }


  get partitions(): Partitions {
    return this.cfg.partitions;
  }

  /** Rebuilds every user's usage from the allocation history; running jobs are charged up to `now`. */
  restore(store: JobStore, now: number): void {
    const h = this.cfg.priority.halfLife;
    const since = h > 0 ? now - 20 * h * 1000 : 0;
    const w = this.cfg.priority.tresWeights;
    for (const r of store.usageSince(since)) {
      const share = shareOf({ ...r, id: 0, jobId: 0, position: 0, cpuSec: null, peakMemMib: null });
      const rate = share ? shareRate(share, w) : jobRate({ nodes: [r.node] }, (n) => this.nodeResources(n), w);
      this.usage.charge(r.user ?? NOBODY, rate, Math.max(r.since, since), r.until ?? now);
    }
    for (const job of this.state.jobs.values()) if (job.row.startTime !== null && job.row.state !== "PENDING") this.charged.set(job.row.id, now);
  }

  /** Every running job charged up to `now`. */
  charge(now: number): void {
    for (const job of this.state.started()) {
      if (job.row.state !== "RUNNING" && job.row.state !== "ADAPTING") continue;
      this.chargeJob(job, now);
    }
    for (const id of this.charged.keys()) if (!this.state.jobs.has(id)) this.charged.delete(id);
  }

  /** The job ended at `now`: charged up to then, at what it held. */
  ended(job: JobRuntime, now: number): void {
    if (job.row.startTime === null) return;
    this.chargeJob(job, job.row.endTime ?? now);
    this.charged.delete(job.row.id);
  }

  private chargeJob(job: JobRuntime, to: number): void {
    const from = this.charged.get(job.row.id) ?? job.row.startTime ?? to;
    if (to <= from) return;
    let rate = 0;
    for (const s of job.shares) rate += shareRate(s, this.cfg.priority.tresWeights);
    this.usage.charge(ownerOf(job.row), rate, from, to);
    this.charged.set(job.row.id, to);
  }

  private nodeResources(name: string): NodeResources | undefined {
    const n = this.state.nodes.get(name);
    return n && this.state.resources(n);
  }

  /** Node names outside partition `p` (undefined: it has every node). */
  private outsideOf(p: Partition | undefined): readonly string[] | undefined {
    if (!p?.nodes) return undefined;
    // Nodes join the registry and never leave it: its size says whether the names changed.
    if (this.state.nodes.size !== this.nodeCount) {
      this.nodeCount = this.state.nodes.size;
      this.outside = new Map();
    }
    let out = this.outside.get(p.name);
    if (!out) this.outside.set(p.name, (out = [...this.state.nodes.keys()].filter((n) => !inPartition(p, n))));
    return out;
  }

  private partitionOf(row: Pick<JobRow, "partition">): Partition | undefined {
    return row.partition === null ? undefined : this.cfg.partitions.byName.get(row.partition);
  }

  /** Nodes a job may not use: its own excluded ones and those outside its partition. */
  excludeOf(job: JobRuntime): readonly string[] | undefined {
    const out = this.outsideOf(this.partitionOf(job.row));
    if (!out || out.length === 0) return job.row.exclude ?? undefined;
    return job.row.exclude ? [...new Set([...job.row.exclude, ...out])] : out;
  }

  /** How the pass sees a waiting job: its request, on its partition's nodes. */
  private view(job: JobRuntime): PendingJob {
    const base = (job.request ??= pendingView(job.row));
    // A pass asks about every waiting job: without partitions of some nodes, not about its row.
    if (!this.someNodesOnly) return base;
    const out = this.outsideOf(this.partitionOf(job.row));
    if (!out || out.length === 0) return base;
    const hit = this.views.get(job);
    if (hit && hit.outside === out && hit.base === base) return hit.view;
    const view: PendingJob = { ...base, exclude: job.row.exclude ? [...new Set([...job.row.exclude, ...out])] : out };
    this.views.set(job, { outside: out, base, view });
    return view;
  }

  /**
   * The eligible waiting jobs as the pass sees them, in queue order (tier, priority, submit time),
   * without those a limit holds back; each job's `limited` says why it is held back (or is cleared).
   * Each of `running` gets the priority it would have if it waited now (ebb weighs its time by it).
   */
  arrange(pending: readonly JobRuntime[], now: number, running: readonly JobState[] = []): PendingJob[] {
    this.charge(now);
    const ordered = this.order(pending.map((j) => this.view(j)), now, running);
    if (!this.limits) {
      for (const job of pending) if (job.limited !== undefined) job.limited = undefined;
      return ordered;
    }
    // Limits apply in queue order: the first in line take what the limits leave.
    this.largest.clear();
    const byId = new Map(pending.map((j) => [j.row.id, j]));
    const held = holdBack(
      ordered.map((v) => this.quotaJob(byId.get(v.id)!)),
      this.runningAmounts(),
      this.cfg.userLimits,
      this.cfg.partitions.byName,
    );
    // Shown as the job's reason (no event: an array's thousands of tasks would each get one).
    for (const job of pending) job.limited = held.get(job.row.id);
    return held.size > 0 ? ordered.filter((v) => !held.has(v.id)) : ordered;
  }

  private hasLimits(): boolean {
    const l = this.cfg.userLimits;
    if (l.maxJobs !== undefined || l.maxCpus !== undefined || l.maxGpus !== undefined || l.maxNodes !== undefined) return true;
    return this.cfg.partitions.list.some((p) => p.maxNodes !== undefined || p.maxTime !== undefined || p.limits.maxJobs !== undefined || p.limits.maxCpus !== undefined || p.limits.maxGpus !== undefined || p.limits.maxNodes !== undefined);
  }

  /** Views in queue order, with their priorities (and tiers) set; the running jobs' priorities too. */
  private order(views: PendingJob[], now: number, running: readonly JobState[]): PendingJob[] {
    const jobs = this.priorityJobs(running.length > 0 ? [...views, ...running] : views);
    // The priorities come in the order asked: the views', then the running jobs'.
    const multifactor = this.cfg.priority.type === "multifactor";
    const priority = multifactor ? priorityOfEach(jobs, this.usage, this.cfg.priority, now) : undefined;
    for (let i = 0; i < running.length; i++) running[i]!.priority = priority?.[views.length + i];
    for (let i = 0; i < views.length; i++) {
      const v = views[i]!;
      const tier = jobs[i]!.tier ?? 0;
      v.priority = priority?.[i];
      v.tier = tier !== 0 ? tier : undefined;
    }
    // Without the size factor, one user's jobs of one tier are in submit order: merged, not sorted.
    if (multifactor && this.cfg.priority.weights.jobSize > 0) return views.sort(queueOrder);
    return queueOrderByRuns(views, (i) => runKey(jobs[i]!.user, jobs[i]!.tier));
  }

  /**
   * What priorities are made of for a pending job's view: its user, submit time and partition tier
   * do not change while it waits, and a pass asks about every waiting job.
   */
  private readonly asPriorityJob = new WeakMap<object, PriorityJob>();

  private priorityJobs(views: readonly Pick<PendingJob, "id" | "submitTime">[]): PriorityJob[] {
    this.largest.clear();
    // The size factor weighs nothing by default: then no job's size is worked out.
    const cores = this.cfg.priority.weights.jobSize > 0 ? this.totalCores() : 0;
    return views.map((v): PriorityJob => {
      const known = cores === 0 ? this.asPriorityJob.get(v) : undefined;
      if (known) return known;
      const job = this.priorityJobOf(v, cores);
      if (cores === 0 && this.state.jobs.has(v.id)) this.asPriorityJob.set(v, job);
      return job;
    });
  }

  /** What the priority of job `v.id` is made of (its size against `cores`, the cluster's; 0: no size factor). */
  private priorityJobOf(v: Pick<PendingJob, "id" | "submitTime">, cores: number): PriorityJob {
    const row = this.state.jobs.get(v.id)?.row;
    const p = row && this.partitionOf(row);
    return { id: v.id, user: row ? ownerOf(row) : NOBODY, submitTime: v.submitTime, size: row && cores > 0 ? this.asked(row).cpus / cores : 0, tier: p?.tier ?? 0 };
  }

  private factorsOf(views: readonly Pick<PendingJob, "id" | "submitTime">[], now: number): { factors: PriorityFactors[]; users: Map<string, ShareRow> } {
    return prioritize(this.priorityJobs(views), this.usage, this.cfg.priority, now);
  }

  private totalCores(): number {
    let cores = 0;
    for (const n of this.state.nodes.values()) cores += n.row.cpus;
    return Math.max(1, cores);
  }

  /** The most cores and GPUs one node of the partition has (what a whole node of it counts as); by partition, for one call. */
  private readonly largest = new Map<string, { cores: number; gpus: number }>();
  private largestNode(p: Partition | undefined): { cores: number; gpus: number } {
    const key = p?.name ?? "";
    const known = this.largest.get(key);
    if (known) return known;
    const most = { cores: 1, gpus: 0 };
    this.largest.set(key, most);
    for (const n of this.state.nodes.values()) {
      if (p && !inPartition(p, n.row.name)) continue;
      most.cores = Math.max(most.cores, n.row.cpus);
      most.gpus = Math.max(most.gpus, n.row.gpus.length);
    }
    return most;
  }

  /** What a waiting job asks for: cores, GPUs, nodes (whole nodes count as the partition's largest). */
  private asked(row: Pick<JobRow, "resources" | "minNodes" | "partition">): Amounts {
    const r = row.resources;
    const nodes = row.minNodes;
    if (!r || r.exclusive) {
      const n = this.largestNode(this.partitionOf(row));
      const gpus = r?.gpus ?? (r?.gpusPerNode !== undefined ? r.gpusPerNode * nodes : r?.gpusPerTask !== undefined ? r.gpusPerTask * (r.tasks ?? nodes) : r ? 0 : n.gpus * nodes);
      return { cpus: n.cores * nodes, gpus, nodes };
    }
    const tasks = r.tasks ?? nodes * (r.tasksPerNode ?? 1);
    return { cpus: tasks * r.cpusPerTask, gpus: r.gpus ?? (r.gpusPerNode !== undefined ? r.gpusPerNode * nodes : (r.gpusPerTask ?? 0) * tasks), nodes };
  }

  private quotaJob(job: JobRuntime): QuotaJob {
    const row = job.row;
    return { id: row.id, user: ownerOf(row), partition: row.partition ?? undefined, timeLimit: row.timeLimit, minNodes: row.minNodes, ...this.asked(row) };
  }

  private runningAmounts(): Omit<QuotaJob, "timeLimit" | "minNodes" | "id">[] {
    const out: Omit<QuotaJob, "timeLimit" | "minNodes" | "id">[] = [];
    for (const job of this.state.jobs.values()) {
      if (job.row.state === "PENDING") continue;
      let cpus = 0;
      let gpus = 0;
      for (const s of job.shares) {
        cpus += s.cores.length;
        gpus += s.gpus.length;
      }
      out.push({ user: ownerOf(job.row), partition: job.row.partition ?? undefined, cpus, gpus, nodes: job.nodes.length });
    }
    return out;
  }

  /** Why a new job of `user` (`adding` jobs: an array's tasks) would pass MaxSubmitJobs, or undefined. */
  submitLimit(user: string | null, p: Partition | undefined, adding: number): string | undefined {
    const l = this.cfg.userLimits;
    if (l.maxSubmitJobs === undefined && p?.limits.maxSubmitJobs === undefined) return undefined;
    const who = user ?? NOBODY;
    let all = 0;
    let inPartition = 0;
    for (const j of this.state.jobs.values()) {
      if (ownerOf(j.row) !== who) continue;
      all++;
      if (p && j.row.partition === p.name) inPartition++;
    }
    return submitLimit({ all, inPartition }, adding, l, p, who);
  }

  /** The priority a job submitted now would have, and its tier (sbatch --test-only). */
  priorityOf(row: Pick<JobRow, "user" | "partition" | "resources" | "minNodes" | "submitTime">, now: number): { priority?: number; tier?: number } {
    this.largest.clear();
    const p = this.partitionOf(row);
    const size = this.asked(row).cpus / this.totalCores();
    const f = prioritize([{ id: -1, user: ownerOf(row), submitTime: row.submitTime, size, tier: p?.tier ?? 0 }], this.usage, this.cfg.priority, now).factors[0]!;
    return { priority: this.cfg.priority.type === "multifactor" ? f.priority : undefined, tier: f.tier || undefined };
  }

  /** Node names outside the partition (what a job in it excludes), for a job not yet submitted. */
  outsideNodes(partition: string | null): readonly string[] | undefined {
    return this.outsideOf(partition === null ? undefined : this.cfg.partitions.byName.get(partition));
  }

  /**
   * Every eligible waiting job's factors, in queue order (sprio); with `jobId`, that job's alone
   * (scontrol show job's Priority=, sprio -j), none if it is not one of them: every job still counts
   * for fair share, but the queue is not ordered.
   */
  priorities(now: number, jobId?: number): JobPriority[] {
    this.charge(now);
    const pending: PendingJob[] = [];
    const running: { id: number; submitTime: number }[] = [];
    for (const job of this.state.jobs.values()) {
      if (job.row.state === "PENDING") {
        if (!job.blocked) pending.push(this.view(job));
      } else if (job.row.startTime !== null) running.push({ id: job.row.id, submitTime: job.row.submitTime });
    }
    // The users counted as the pass counts them (its waiting and running jobs'): the same priorities.
    const { factors } = this.factorsOf([...pending, ...running], now);
    const byId = new Map(factors.map((f) => [f.jobId, f]));
    if (jobId !== undefined) {
      const job = this.state.jobs.get(jobId);
      const f = byId.get(jobId);
      return job && f && job.row.state === "PENDING" && !job.blocked ? [{ ...f, partition: job.row.partition ?? null }] : [];
    }
    const ordered = applyPriorities(pending, byId, this.cfg.priority);
    return ordered.map((v) => ({ ...byId.get(v.id)!, partition: this.state.jobs.get(v.id)?.row.partition ?? null }));
  }

  /** Every user's shares and usage (sshare): those with shares in the config, usage, or jobs. */
  shares(now: number): ShareRow[] {
    this.charge(now);
    const pending: PendingJob[] = [];
    for (const job of this.state.jobs.values()) if (job.row.state === "PENDING") pending.push(job.request ??= pendingView(job.row));
    return [...this.factorsOf(pending, now).users.values()].sort((a, b) => a.user.localeCompare(b.user));
  }
}
