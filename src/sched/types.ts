/** Plain-data inputs and outputs of a scheduling pass. Times are epoch ms, limits are seconds. */
import type { NodeResources, NodeShare, ResourceRequest } from "../domain/resources.ts";
import type { HostState } from "../domain/host-state.ts";
import type { RuntimeModel } from "../model/amdahl.ts";
import type { MtctSample } from "../model/spmd.ts";
import type { BatchCountsPlan } from "./batch.ts";
import type { AdminLimits, ErsConfig, JobOverrides } from "./config.ts";

export type { MtctSample } from "../model/spmd.ts";
export type { RuntimeModel } from "../model/amdahl.ts";

export interface ClusterNode {
  name: string;
  up: boolean;
  /** The job holding the node, if any. */
  jobId?: number;
  /** Cpus, for spawn grants (default 1). */
  cpus?: number;
  /**
   * Its cores, memory and GPUs. When the up nodes report them the pass places resource requests
   * on them (sched/pool.ts) and a node is held by the shares of the running jobs on it, not by
   * `jobId`; absent on every node: whole-node mode, as before.
   */
  resources?: NodeResources;
  /** Its host state (domain/host-state.ts; absent: free). Not free: no new work; overloaded or owner: its jobs move (moves.ts). */
  host?: HostState;
}

export interface RunningJob {
  id: number;
  nodes: string[];
  /** When the job will have ended at the latest: start + time limit. */
  expectedEnd: number;
}

export interface PendingJob {
  id: number;
  /**
   * Its whole range (an elastic job's too, as when it runs): a moldable job may start anywhere in
   * [minNodes, maxNodes]. Built by `pending.ts` `pendingView`, live and simulated alike.
   */
  minNodes: number;
  maxNodes: number;
  timeLimit: number;
  submitTime: number;
  /** The size the user asked for: a start by the batch pass never exceeds it (default maxNodes). */
  preferredNodes?: number;
  /** Whether the job can be resized once it runs (malleable). */
  elastic?: boolean;
  /**
   * The user asked for a range of nodes and takes any size in it (`--nodes MIN-MAX`): no policy
   * holds it to one size; it starts on as many nodes of its range as are free (up to maxNodes).
   */
  moldable?: boolean;
  /** apm-maxs: the job's declared runtime model (from test runs), if any. */
  model?: RuntimeModel;
  /** Node names the job may not run on (sbatch --exclude). */
  exclude?: readonly string[];
  /** Node names the job must run on, all of them (sbatch --nodelist). */
  nodelist?: readonly string[];
  /** Valid sizes (e.g. square process grids); any size in range when absent (see sizes.ts). */
  sizes?: readonly number[];
  /**
   * What it asks of each node (tasks, cores, memory, GPUs; Slurm's cons_tres request), when the
   * nodes report resources. Absent: whole nodes, `minNodes`..`maxNodes` of them, as before.
   */
  resources?: ResourceRequest;
  /**
   * Its priority (priority.ts): a higher one goes first. Absent on every job: submit order, as
   * before priorities.
   */
  priority?: number;
  /** Its partition's priority tier: a higher tier goes first whatever the priority (absent: 0). */
  tier?: number;
}

export interface BatchInput {
  now: number;
  nodes: ClusterNode[];
  running: RunningJob[];
  pending: PendingJob[];
  /** Explain why every job left pending waits (default true); false lets a pass stop once no node is free. */
  reasons?: boolean;
  /** EASY backfilling (default); false: plain FCFS. */
  backfill?: boolean;
}

export interface Start {
  jobId: number;
  nodes: string[];
  reason: "fcfs" | "backfill";
}

export interface Reservation {
  jobId: number;
  /** When enough nodes will be free for the job at the latest. */
  start: number;
  nodes: number;
  /** Why and from where (rule 1: the jobs that shrink for it). */
  reason?: string;
  /** Jobs that shrink to make room for it (elastic rule 1, shrink-to-admit). */
  fromJobs?: number[];
  /** Where it would start at `start` (resource mode): its share of each node. */
  shares?: NodeShare[];
}

export interface BatchPlan {
  starts: Start[];
  reservation?: Reservation;
  /** Why each job that stays pending waits. */
  waiting: Map<number, string>;
}

/** (size, iteration time) for each configuration a job ran in, oldest first (ReSHAPE's profile). */
export interface ProfilePoint {
  nodes: number;
  iterTime: number;
}

/** A running job as every policy pass sees it: counts, not node names. */
export interface JobState {
  id: number;
  /** Nodes held now. */
  nodes: number;
  /** Of them, nodes whose host state takes no new work: its end does not give them back (none: 0). */
  kept?: number;
  minNodes: number;
  maxNodes: number;
  /** The size it asked for, if known (ebb reads its efficiency there as a prior for waiting jobs). */
  preferredNodes?: number;
  elastic: boolean;
  submitTime: number;
  startTime: number;
  /** The user's bound in seconds at the start size. */
  timeLimit: number;
  /** When the job is expected to end (default startTime + timeLimit). */
  expectedEnd?: number;
  /** Seconds still needed at the current size, if the job reports progress. */
  remaining?: number;
  /** MTCT samples since the job's last adaptation (the model resets on each one). */
  samples: readonly MtctSample[];
  /**
   * The mean MTCT of `samples` and how many there are, as `spmdPhase` reads them, when the caller
   * keeps them up to date as samples come (the simulator): read instead of summing every sample.
   */
  mtct?: { average: number; count: number };
  /** Resizing now: not to be touched until it commits. */
  adapting: boolean;
  /** The size an ongoing adaptation goes to (a shrink frees `nodes - resizingTo` when it commits). */
  resizingTo?: number;
  /** When its last adaptation committed. */
  lastAdaptEnd?: number;
  /** Mean measured seconds per adaptation of this job, if it adapted before. */
  adaptCost?: number;
  /** Seconds an adaptation by d nodes is known to cost: fixed + perNode * d (overrides adaptCost). */
  adaptCostModel?: { fixed: number; perNode: number };
  /** When the adaptation under way is expected to commit (epoch ms), if known. */
  adaptEnd?: number;
  /** Per-job settings, clamped to the admin limits. */
  overrides?: JobOverrides;
  /** reshape: every configuration it ran in, with its iteration time. */
  profile?: readonly ProfilePoint[];
  /** Valid sizes (e.g. near-square process grids); any size in range when absent. */
  sizes?: readonly number[];
  /** apm-maxs: the runtime model fitted from its measurements. */
  model?: RuntimeModel;
  /** False while the job is between resize points (a resize would be deferred); default true. */
  atResizePoint?: boolean;
  /**
   * The priority it would have if it waited now (priority.ts), when priorities are on: ebb weighs
   * a running job's time against a waiting one's by their priorities. Absent: equal weights.
   */
  priority?: number;
}

export type ResizeRule =
  | "shrink" // RRV: an MTCT above the upper threshold, mandatory halving
  | "balance" // elastic backfilling rule 1: time balancing to admit waiting jobs
  | "fill" // elastic backfilling rule 2: resource filling of idle nodes
  | "expand" // reshape: grow while iteration time improves
  | "revert" // reshape: the last expansion did not help
  | "admit" // reshape, drms-rs: shrink to start the head of the queue
  | "reserve" // ebb: nodes lent beyond a job's first size come back to keep the arrival reserve idle
  | "grow" // drms-rs: nothing waits, idle nodes go to running jobs
  | "equi" // apm-equi: equipartition
  | "maxs" // apm-maxs: greedy on differential speedup
  | "move" // moves.ts: off a node whose jobs should leave (overloaded, owner), when the gain pays
  | "requested"; // a user's resize (POST /v1/jobs/:id/resize), planned as a pass plans its own

export interface Resize {
  jobId: number;
  from: number;
  to: number;
  rule: ResizeRule;
  /** For people: the numbers the decision was made on (MTCT, range, rule). */
  reason: string;
}

/** Why a candidate was left alone (settling, unsteady MTCT, payoff too small, ...). */
export interface Note {
  jobId: number;
  text: string;
}

export interface PassInput {
  now: number;
  /** Nodes that are up. */
  upNodes: number;
  /** Up nodes held by no job. */
  idleNodes: number;
  running: readonly JobState[];
  pending: readonly PendingJob[];
  /** Pending is already in queue order (submit time, id): skips a sort. */
  sorted?: boolean;
  config: ErsConfig;
  /** Bounds on per-job overrides (`JobState.overrides`); none: overrides are refused. */
  limits?: AdminLimits;
  /**
   * Resource mode: the batch pass on the nodes' cores, memory and GPUs, which the policies' batch
   * (`policies/common.ts` `batch`) runs instead of the count pass. Its counts are what the policies
   * see: `idleNodes` and the plan's `free` are nodes no job holds anything on.
   */
  vectors?: VectorBatch;
}

/** How a policy runs the batch pass (FCFS + EASY). */
export interface BatchOptions {
  /** EASY backfilling (default); false: FCFS. */
  backfill?: boolean;
  /** Every job at the size it asked for (`policies/common.ts` `rigid`). */
  rigid?: boolean;
  startSize?: (job: PendingJob, free: number) => number;
  scaleLimits?: boolean;
  /** Behind the reservation, the shortest jobs (by time limit) first. */
  shortestFirst?: boolean;
}

export interface VectorBatch {
  batch(input: PassInput, pending: readonly PendingJob[], opts: BatchOptions): BatchCountsPlan;
  /** Nodes a running elastic job could grow onto now, one more node of its shape each (whole idle nodes for a job of whole nodes). */
  growable(jobId: number): number;
}

export interface CountStart {
  jobId: number;
  nodes: number;
  reason: string;
}

export interface PassPlan {
  starts: CountStart[];
  resizes: Resize[];
  reservations: Reservation[];
  notes: Note[];
  /**
   * The pass left work it can see undone (a policy whose passes are `complete` says so): plan again
   * once this plan is carried out, at the same instant.
   */
  again?: boolean;
}
