/**
 * `ebb sim --priority fairshare`: the queue in multifactor priority order (sched/priority.ts), as
 * the live controller orders it. Each job's usage is charged to its user (the trace's user id) for
 * what it holds — its nodes whole (one core each without --cores-per-node), or its shares — from
 * its start to its end, at its size of the moment: a charge is made up to date before anything
 * the job holds changes and before every pass.
 */
import { jobRate, UsageBook } from "../sched/fairshare.ts";
import { applyPriorities, prioritize, type PriorityConfig, type PriorityJob } from "../sched/priority.ts";
import type { JobState, PendingJob } from "../sched/types.ts";
import type { JobRun } from "./job-run.ts";
import type { NodeResources } from "../domain/resources.ts";

export class SimPriority {
  readonly book: UsageBook;
  /** Until when (s) each running job has been charged. */
  private readonly charged = new Map<JobRun, number>();

  constructor(
    readonly cfg: PriorityConfig,
    /** What each node reports (shared nodes); absent: a node is one core. */
    private readonly node: NodeResources | undefined,
    /** Cores of the cluster, what a job's size is a part of. */
    private readonly capacity: number,
  ) {
    this.book = new UsageBook(cfg.halfLife);
  }

  /** The job holds what it holds from `t` (s) on: charged from then. */
  started(r: JobRun, t: number): void {
    this.charged.set(r, t);
  }

  /** Charges the job up to `t` (s) at what it holds now (before that changes, or at its end). */
  chargeTo(r: JobRun, t: number, ended = false): void {
    const from = this.charged.get(r);
    if (from === undefined) return;
    if (t > from) this.book.charge(userOf(r), jobRate({ shares: r.shares, nodes: r.names }, () => this.node, this.cfg.tresWeights), from * 1000, t * 1000);
    if (ended) this.charged.delete(r);
    else this.charged.set(r, Math.max(from, t));
  }

  /**
   * The waiting jobs' views in priority order at `now` (s), every running job charged up to it;
   * each running job's view gets the priority it would have if it waited now (what elastic
   * decisions weigh its time by), as the controller sets it.
   */
  order(pending: readonly JobRun[], now: number, running: readonly { run: JobRun; view: JobState }[] = []): PendingJob[] {
    for (const r of this.charged.keys()) this.chargeTo(r, now);
    const asJob = (r: JobRun): PriorityJob => ({ id: r.job.id, user: userOf(r), submitTime: r.pend.submitTime, size: (r.job.cores ?? r.job.nodes * coresOf(this.node)) / this.capacity });
    const { factors } = prioritize([...pending.map(asJob), ...running.map((x) => asJob(x.run))], this.book, this.cfg, now * 1000);
    const byId = new Map(factors.map((f) => [f.jobId, f]));
    for (const x of running) x.view.priority = this.cfg.type === "multifactor" ? byId.get(x.run.job.id)?.priority : undefined;
    return applyPriorities(
      pending.map((r) => r.pend),
      byId,
      this.cfg,
    );
  }
}

const userOf = (r: JobRun): string => r.job.user ?? "-1";
const coresOf = (n: NodeResources | undefined): number => n?.cores ?? 1;
