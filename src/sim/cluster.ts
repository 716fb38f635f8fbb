/**
 * The virtual cluster: named nodes n1..nN and which job holds each, and the replay's jobs — all of
 * them, those waiting (in queue order) and those running. It is also the state `checkPlan`
 * re-checks a plan against (`PlanState`), as the controller's state is live.
 *
 * Shared nodes (`coresPerNode`): each node reports K cores (and K GiB of memory) and holds the
 * share of each job on it; `held` counts cores. With `verify`, every share taken is checked against
 * the node's cores, memory and the other shares on it, and each over-allocation is recorded.
 */
import type { NodeResources, NodeShare } from "../domain/resources.ts";
import type { ErsConfig } from "../sched/config.ts";
import type { PlanJobState, PlanState, Snapshot, SnapshotJob } from "../sched/plan.ts";
import type { ClusterNode, PendingJob } from "../sched/types.ts";
import type { SimJob } from "./job.ts";
import { newJobRun, type JobRun } from "./job-run.ts";
import type { SimPriority } from "./priority.ts";
import { planJobState, runningView } from "./view.ts";

/** A node of the virtual cluster; on shared nodes, the share of each job on it; with availability, its host state (hosts.ts). */
export interface SimNode extends ClusterNode {
  shares?: Map<number, NodeShare>;
  /** False while its host state is not free (`checkPlan` reads it). */
  takesWork?: boolean;
  /** A job's pace on it while not free (0..1); absent: 1. */
  speed?: number;
}

export class SimCluster implements PlanState {
  /** In name order. */
  readonly nodes: SimNode[];
  /** Nodes no job holds anything on. */
  free: number;
  /** Nodes held (whole nodes), or cores held (shared nodes). */
  held = 0;
  /** Shared nodes: what a node reports. */
  readonly resources?: NodeResources;
  /** Shares that over-allocated a node (with `verify`). */
  readonly overAllocated: string[] = [];
  readonly jobs = new Map<number, JobRun>();
  /** Waiting, in (submit, id) order, which the policies rely on; the snapshot gives them in priority order (`priority`). Change it through `arrive` and `started`. */
  readonly pending: JobRun[] = [];
  /** How the queue looks to a pass (`pending`'s views), kept until the queue changes. */
  private pendingViews?: PendingJob[];
  /**
   * Whole nodes: the idle ones that take work, in name order, with their indexes; brought up to date
   * from the nodes taken and released since (`touched`), rebuilt whole after a host state change.
   */
  private idleNodes?: SimNode[];
  private idleIndex: number[] = [];
  /** Per node: whether it is in `idleNodes`. */
  private readonly listed: Uint8Array;
  /** Indexes of the nodes taken or released since `idleNodes` was last brought up to date. */
  private readonly touched: number[] = [];
  /** Each node's index by its name: a plan names nodes, and the re-check and the application look every one up. */
  private readonly indexOf = new Map<string, number>();
  /** Some node's pace was set (availability): `pace` reads the nodes. */
  private paced = false;
  readonly running = new Set<JobRun>();
  /** The malleable ones of `running`, in the same order (a tick samples only them). */
  readonly malleable = new Set<JobRun>();
  /** Jobs at a resize point this instant (cleared after the instant's passes). */
  readonly atPoint: JobRun[] = [];
  /** `--priority fairshare`: the queue in priority order; absent: submit order. */
  priority?: SimPriority;
  /** Nodes whose host state is not free (they take no new work). */
  private notTaking = 0;
  /** Nodes taken for new work while not free (availability; must stay 0). */
  takenNotFree = 0;

  constructor(
    readonly size: number,
    coresPerNode?: number,
    private readonly verify = false,
  ) {
    if (coresPerNode !== undefined) this.resources = { cores: coresPerNode, memMiB: coresPerNode * 1024, gpus: [], features: [] };
    const resources = this.resources;
    this.nodes = Array.from({ length: size }, (_, i) => (resources ? { name: `n${i + 1}`, up: true, resources, shares: new Map() } : { name: `n${i + 1}`, up: true }));
    this.free = size;
    this.listed = new Uint8Array(size);
    for (let i = 0; i < size; i++) this.indexOf.set(this.nodes[i]!.name, i);
  }

  /** Nodes that take new work (the pass's up nodes). */
  get up(): number {
    return this.size - this.notTaking;
  }

  /** A node's host state changed (hosts.ts): whether it took new work before and does now. */
  hostChanged(before: boolean, after: boolean): void {
    if (before !== after) this.notTaking += after ? -1 : 1;
    this.idleNodes = undefined;
    this.paced = true;
  }

  /** A job's pace on `names`: its slowest node's. */
  pace(names: readonly string[]): number {
    let p = 1;
    if (!this.paced) return p;
    for (const name of names) p = Math.min(p, this.nodes[this.indexOf.get(name)!]?.speed ?? 1);
    return p;
  }

  /** What the cluster can hold: nodes, or cores on shared nodes. */
  get capacity(): number {
    return this.size * (this.resources?.cores ?? 1);
  }

  /** A job of the trace enters the replay (not yet arrived). */
  add(job: SimJob): JobRun {
    if (job.nodes > this.size || job.minNodes > this.size) throw new RangeError(`job ${job.id} needs ${job.minNodes} nodes, the cluster has ${this.size}`);
    if (this.jobs.has(job.id)) throw new RangeError(`job ${job.id} appears twice`);
    const r = newJobRun(job);
    this.jobs.set(job.id, r);
    return r;
  }

  node(name: string): SimNode | undefined {
    const i = this.indexOf.get(name);
    return i === undefined ? undefined : this.nodes[i];
  }

  job(id: number): PlanJobState | undefined {
    const r = this.jobs.get(id);
    return r && planJobState(r);
  }

  /** A pass's input at `now` (s): as the controller builds it live (`roles/controller/snapshot.ts`). */
  snapshot(now: number, config: ErsConfig): Snapshot {
    const running: SnapshotJob[] = [];
    for (const r of this.running) running.push(runningView(r, now));
    const pending = this.priority ? this.priority.order(this.pending, now, [...this.running].map((run, i) => ({ run, view: running[i]! }))) : (this.pendingViews ??= this.pending.map((r) => r.pend));
    // The idle nodes that take new work, and the nodes up as the pass counts them (a node not free is not: makePlan).
    const idle = this.resources ? undefined : { nodes: this.idleList(), up: this.up };
    return { now: now * 1000, nodes: this.nodes, namesSorted: true, ...(idle ? { idle } : {}), running, pending, sorted: true, config };
  }

  /**
   * The idle nodes that take work, in name order. Brought up to date in place from the nodes taken
   * and released since the last pass (one splice per run of neighbours in the list: a start takes
   * the first idle nodes, an end gives back a few runs), rebuilt whole after a host state change.
   * The next snapshot changes it: a pass must not keep it (none does).
   */
  private idleList(): SimNode[] {
    const touched = this.touched;
    const all = this.nodes;
    const listed = this.listed;
    const idle = (i: number) => all[i]!.jobId === undefined && all[i]!.takesWork !== false;
    if (!this.idleNodes) {
      const index: number[] = [];
      const nodes: SimNode[] = [];
      for (let i = 0; i < this.size; i++) {
        const on = idle(i);
        listed[i] = on ? 1 : 0;
        if (on) {
          index.push(i);
          nodes.push(all[i]!);
        }
      }
      this.idleIndex = index;
      this.idleNodes = nodes;
    } else if (touched.length > 0) {
      const gone: number[] = [];
      const back: number[] = [];
      for (const i of touched) {
        const on = idle(i);
        if (on && listed[i] === 0) back.push(i);
        else if (!on && listed[i] === 1) gone.push(i);
        listed[i] = on ? 1 : 0;
      }
      const index = this.idleIndex;
      const nodes = this.idleNodes;
      if (gone.length > 1) gone.sort((a, b) => a - b);
      // From the last run back, so that a splice moves no position still to be used.
      for (let r = gone.length - 1; r >= 0; ) {
        const end = lowerBound(index, gone[r]!);
        let start = end;
        let q = r;
        while (q > 0 && start > 0 && index[start - 1] === gone[q - 1]) {
          start--;
          q--;
        }
        index.splice(start, end - start + 1);
        nodes.splice(start, end - start + 1);
        r = q - 1;
      }
      if (back.length > 1) back.sort((a, b) => a - b);
      for (let r = back.length - 1; r >= 0; ) {
        const at = lowerBound(index, back[r]!);
        const below = at > 0 ? index[at - 1]! : -1;
        let q = r;
        while (q > 0 && back[q - 1]! > below) q--;
        const run = back.slice(q, r + 1);
        index.splice(at, 0, ...run);
        nodes.splice(at, 0, ...run.map((i) => all[i]!));
        r = q - 1;
      }
    }
    touched.length = 0;
    return this.idleNodes;
  }

  /** A job of the trace arrives: it joins the end of the queue (arrivals come in queue order). */
  arrive(r: JobRun): void {
    r.state = "pending";
    this.pending.push(r);
    this.pendingViews = undefined;
  }

  /** Jobs left the queue (started): the queue keeps the others in order. */
  started(): void {
    let k = 0;
    for (const r of this.pending) if (r.state === "pending") this.pending[k++] = r;
    this.pending.length = k;
    this.pendingViews = undefined;
  }

  /** `jobId` takes `names` whole, or its `shares` of them on shared nodes. */
  take(names: readonly string[], jobId: number, shares?: readonly NodeShare[]): void {
    for (let i = 0; i < names.length; i++) {
      const index = this.indexOf.get(names[i]!)!;
      const node = this.nodes[index]!;
      if (node.takesWork === false) this.takenNotFree++;
      if (!node.shares) {
        node.jobId = jobId;
        this.touched.push(index);
        this.free--;
        this.held++;
        continue;
      }
      const share = shares?.[i] ?? { node: node.name, cores: Array.from({ length: this.resources!.cores }, (_, c) => c), memMiB: this.resources!.memMiB, gpus: [] };
      if (this.verify) this.verifyShare(node, jobId, share);
      if (node.shares.size === 0) this.free--;
      node.shares.set(jobId, share);
      this.held += share.cores.length;
    }
  }

  /** `jobId` gives `names` back. Whether one of them takes no new work (availability): it does not come back to the pass. */
  release(names: readonly string[], jobId: number): boolean {
    let lost = false;
    for (const name of names) {
      const index = this.indexOf.get(name)!;
      const node = this.nodes[index]!;
      if (node.takesWork === false) lost = true;
      if (!node.shares) {
        node.jobId = undefined;
        this.touched.push(index);
        this.free++;
        this.held--;
        continue;
      }
      const share = node.shares.get(jobId);
      if (!share) continue;
      node.shares.delete(jobId);
      this.held -= share.cores.length;
      if (node.shares.size === 0) this.free++;
    }
    return lost;
  }

  /** A share beside the others on its node: cores and memory within the node's, no core twice. */
  private verifyShare(node: SimNode, jobId: number, share: NodeShare): void {
    const total = this.resources!;
    const used = new Set<number>();
    let mem = share.memMiB;
    for (const s of node.shares!.values()) {
      for (const c of s.cores) used.add(c);
      mem += s.memMiB;
    }
    const clash = share.cores.filter((c) => used.has(c) || c < 0 || c >= total.cores);
    if (clash.length > 0 || mem > total.memMiB) this.overAllocated.push(`job ${jobId} on ${node.name}: ${clash.length > 0 ? `cores ${clash.join(",")} already held or missing` : `${mem} MiB of ${total.memMiB}`}`);
  }

  /** The instant is over: jobs at a resize point move on. */
  leaveResizePoints(): void {
    if (this.atPoint.length === 0) return;
    for (const r of this.atPoint) r.atPoint = false;
    this.atPoint.length = 0;
  }
}

/** The first position in the ascending `a` whose value is at least `x`. */
function lowerBound(a: readonly number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
