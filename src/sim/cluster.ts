/**
 * The virtual cluster: named nodes n1..nN and which job holds each, and the replay's jobs — all of
 * them, those waiting (in queue order) and those running. It is also the state `checkPlan`
 * re-checks a plan against (`PlanState`), as the controller's state is live.
 */
import type { ErsConfig } from "../sched/config.ts";
import type { PlanJobState, PlanState, Snapshot } from "../sched/plan.ts";
import type { ClusterNode } from "../sched/types.ts";
import type { SimJob } from "./job.ts";
import { newJobRun, type JobRun } from "./job-run.ts";
import { planJobState, runningView } from "./view.ts";

export class SimCluster implements PlanState {
  /** In name order. */
  readonly nodes: ClusterNode[];
  /** Nodes no job holds. */
  free: number;
  readonly jobs = new Map<number, JobRun>();
  /** Waiting, in (submit, id) order, which the policies rely on. */
  pending: JobRun[] = [];
  readonly running = new Set<JobRun>();
  /** Jobs at a resize point this instant (cleared after the instant's passes). */
  readonly atPoint: JobRun[] = [];

  constructor(readonly size: number) {
    this.nodes = Array.from({ length: size }, (_, i) => ({ name: `n${i + 1}`, up: true }));
    this.free = size;
  }

  /** A job of the trace enters the replay (not yet arrived). */
  add(job: SimJob): JobRun {
    if (job.nodes > this.size || job.minNodes > this.size) throw new RangeError(`job ${job.id} needs ${job.minNodes} nodes, the cluster has ${this.size}`);
    if (this.jobs.has(job.id)) throw new RangeError(`job ${job.id} appears twice`);
    const r = newJobRun(job);
    this.jobs.set(job.id, r);
    return r;
  }

  /** Nodes some job holds. */
  get held(): number {
    return this.size - this.free;
  }

  node(name: string): ClusterNode | undefined {
    return name.startsWith("n") ? this.nodes[Number(name.slice(1)) - 1] : undefined;
  }

  job(id: number): PlanJobState | undefined {
    const r = this.jobs.get(id);
    return r && planJobState(r);
  }

  /** A pass's input at `now` (s): as the controller builds it live (`roles/controller/snapshot.ts`). */
  snapshot(now: number, config: ErsConfig): Snapshot {
    const running = [...this.running].map((r) => runningView(r, now));
    return { now: now * 1000, nodes: this.nodes, namesSorted: true, running, pending: this.pending.map((r) => r.pend), sorted: true, config };
  }

  take(names: readonly string[], jobId: number): void {
    this.free -= names.length;
    for (const n of names) this.nodes[Number(n.slice(1)) - 1]!.jobId = jobId;
  }

  release(names: readonly string[]): void {
    this.free += names.length;
    for (const n of names) this.nodes[Number(n.slice(1)) - 1]!.jobId = undefined;
  }

  /** The instant is over: jobs at a resize point move on. */
  leaveResizePoints(): void {
    for (const r of this.atPoint) r.atPoint = false;
    this.atPoint.length = 0;
  }
}
