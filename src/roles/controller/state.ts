/** The controller's in-memory view of nodes and active jobs, mirrored from SQLite. */
import type { StepCovers } from "../../proto/credential.ts";
import type { ControllerToAgent } from "../../proto/agent.ts";
import type { ControllerToLauncher } from "../../proto/launcher.ts";
import type { PendingJob } from "../../sched/types.ts";
import type { RankRemap } from "../../sched/plan.ts";
import type { Ineligible } from "../../sched/eligibility.ts";
import type { HeldBack } from "../../sched/quota.ts";
import type { JobRow } from "../../store/jobs.ts";
import { nodeResources, type NodeRow } from "../../store/nodes.ts";
import type { NodeResources, NodeShare } from "../../domain/resources.ts";
import type { ProgramRuntime } from "./program.ts";
import type { HostState } from "../../domain/host-state.ts";

export interface Session<Out> {
  send(msg: Out): void;
  /** Writes what was sent so far now, not once the code that sent it is done (server.ts batches a run's sends). */
  flush?(): void;
  close(code: number, reason: string): void;
  readonly remote: string;
  /** An agent of this process (`ebb up`'s) on the in-process link, not a socket. */
  readonly inProcess?: boolean;
}
export type AgentSession = Session<ControllerToAgent>;
export type LauncherSession = Session<ControllerToLauncher>;

export interface NodeRuntime {
  row: NodeRow;
  /** The agent's live connection; nodes without one are not scheduled. */
  session?: AgentSession;
  lastSeen: number;
  /** The active jobs holding part (or all) of the node, with their shares (the ledger's reducer keeps it). */
  shares: Map<number, NodeShare>;
  /** Jobs that ended on this node and whose processes are still being killed, until when at most. */
  completing: Map<number, number>;
  /** Whom the agent runs jobs as (its hello): "job-user", or the agent's own user. */
  runAs?: string;
  /** The node's host state as its agent's rules last judged it (none yet: free); not stored, the agent re-sends it after each hello. */
  host?: HostState;
}

/** The host state the scheduler acts on: `ebb drain --owner`'s (its row's `ownerSince`), else the agent's. */
export function hostOf(n: NodeRuntime): HostState | undefined {
  if (n.row.ownerSince === null) return n.host;
  return { state: "owner", rule: "ebb drain --owner", inputs: n.host?.inputs ?? {}, since: n.row.ownerSince };
}

export interface JobRuntime {
  row: JobRow;
  /** The current allocation, in rank order. */
  nodes: string[];
  /** What it holds of each of them, aligned with `nodes` (a whole node for a job without a resource request). */
  shares: NodeShare[];
  launchers: Set<LauncherSession>;
  /** Why a pending job waits (last scheduling pass). */
  waitReason?: string;
  /** Why a pending job may not be scheduled at all yet (held, dependency, begin time, array limit). */
  blocked?: Ineligible;
  /** Why a pending job is left out of the pass by a limit (its user's, its partition's), as of the last pass (snapshot.ts). */
  limited?: HeldBack;
  orphanTimer?: ReturnType<typeof setTimeout>;
  /** Elastic jobs: the resizable step, its layout, and the adaptation under way. */
  elastic?: ElasticRuntime;
  /** PMI name service of the job's steps: service -> port. */
  names?: Map<string, string>;
  /** Steps started on nodes added for them (PMI spawn), with those nodes: released when the step ends. */
  spawnedSteps: Map<number, string[]>;
  /** What an EPOP program reported: structure, current phase, iteration (program.ts). */
  program?: ProgramRuntime;
  /** How the scheduler sees the job while it waits: what it asked for (sched/pending.ts), made again only by `asksAgain`. */
  request?: PendingJob;
  /** Its --signal has been sent (once per start, by this controller). */
  signalled?: boolean;
}

export interface ElasticRuntime {
  /** The launcher that takes the job's resize orders. */
  launcher?: LauncherSession;
  stepId?: number;
  /** Ranks per node of the elastic world, aligned with the job's nodes. */
  tasks?: number[];
  adapting?: {
    id: number;
    from: number;
    to: number;
    added: string[];
    removed: string[];
    requestedAt: number;
    times: Record<string, number>;
    fault?: boolean;
    /** What the time limit left is multiplied by when it commits, and from what (sched/limits.ts). */
    limit?: { ratio: number; source: string };
    /** The plan's rank remap (a resize's; not a fault's): the ranks per node after it commits. */
    remap?: RankRemap;
    /** A grow's step for its joining ranks (a checkpoint-restart world restarts in it instead). */
    joinStep?: number;
    /** Checkpoint-restart: the step the world restarts in; the elastic step once it commits. */
    restartStep?: number;
    /** A resize's launcher said every rank committed (adapt.commit): a node lost now is the new world's. */
    committed?: boolean;
    /** Nodes seen lost after the commit, handled as faults once the resize ends (docs/adaptation.md §7.8). */
    lostAfterCommit?: { node: string; reason: string }[];
    /** What follows when it ends (a move's grow back after its shrink: sched/moves.ts). */
    after?: (ok: boolean) => void;
  };
  lastAdaptEnd?: number;
  /** Measured time of the last adaptation (realloc to commit), ms. */
  adaptCostMs?: number;
  /** A checkpoint-restart job (libebb): the state its ranks registered per node, and how long its start took (the cost estimate before a resize is measured). */
  checkpoint?: { nodeBytes: Map<string, number>; coldStartMs: number };
  /** What the elastic step's credential covered (argv, environments, cwd, output): joining steps' credentials cover the same. */
  covers?: StepCovers;
  /** Timing samples count from here (reset at each adaptation). */
  samplesSince?: number;
}

export class ClusterState {
  readonly nodes = new Map<string, NodeRuntime>();
  /** The active jobs, in id order (the ledger's reducer adds each at its submission, or at a restart in id order). */
  readonly jobs = new Map<number, JobRuntime>();
  /**
   * The PENDING ones of `jobs`, in id order, and the others in the order they started: what a pass
   * reads, without walking every active job (a ~1,000-deep queue, a pass per start). Kept by the
   * ledger's reducer with `jobs` (`waits`, `starts`, `leaves`).
   */
  private readonly waitingJobs = new Map<number, JobRuntime>();
  private readonly startedJobs = new Map<number, JobRuntime>();
  private startedInOrder: JobRuntime[] | undefined;
  /** Told of every job whose place in the queue may have changed (queue-kept.ts keeps the queue from pass to pass). */
  private readonly queueWatchers: ((job: JobRuntime) => void)[] = [];

  /** The waiting (PENDING) active jobs, in id order. */
  waiting(): IterableIterator<JobRuntime> {
    return this.waitingJobs.values();
  }

  /** The active jobs that are not waiting, in id order. */
  started(): readonly JobRuntime[] {
    if (!this.startedInOrder) {
      const list = [...this.startedJobs.values()];
      for (let i = 1; i < list.length; i++)
        if (list[i - 1]!.row.id > list[i]!.row.id) {
          list.sort((a, b) => a.row.id - b.row.id);
          break;
        }
      this.startedInOrder = list;
    }
    return this.startedInOrder;
  }

  /** `job` (in `jobs`) waits: PENDING, at its submission (after every active job: ids only grow) or, `again`, back in the queue. */
  waits(job: JobRuntime, again = false): void {
    if (this.startedJobs.delete(job.row.id)) this.startedInOrder = undefined;
    this.waitingJobs.set(job.row.id, job);
    this.queueChanged(job);
    if (!again) return;
    // Back in the queue (a requeue), behind later jobs: in id order again.
    const all = [...this.waitingJobs.values()].sort((a, b) => a.row.id - b.row.id);
    this.waitingJobs.clear();
    for (const j of all) this.waitingJobs.set(j.row.id, j);
  }

  /** `job` (in `jobs`) no longer waits: it started (or, at a restart, had). */
  starts(job: JobRuntime): void {
    this.waitingJobs.delete(job.row.id);
    this.queueChanged(job);
    this.startedJobs.set(job.row.id, job);
    this.startedInOrder = undefined;
  }

  /** `job` left `jobs`: it ended. */
  leaves(job: JobRuntime): void {
    this.waitingJobs.delete(job.row.id);
    this.queueChanged(job);
    if (this.startedJobs.delete(job.row.id)) this.startedInOrder = undefined;
  }

  /** Why a pending job may not be scheduled yet (undefined: it may): the one writer of `blocked`. */
  block(job: JobRuntime, why: Ineligible | undefined): void {
    if (job.blocked === why) return;
    job.blocked = why;
    this.queueChanged(job);
  }

  /** What a waiting `job` asks for changed (scontrol update NumNodes=, Partition=): its view is made again. */
  asksAgain(job: JobRuntime): void {
    job.request = undefined;
    this.queueChanged(job);
  }

  /** `fn` is told of every job that starts or stops waiting, or whose `blocked` changes. */
  watchQueue(fn: (job: JobRuntime) => void): void {
    this.queueWatchers.push(fn);
  }

  private queueChanged(job: JobRuntime): void {
    for (const fn of this.queueWatchers) fn(job);
  }

  /** A node as the registry first knows it (from its row, or its agent's hello). */
  static node(row: NodeRow, lastSeen: number): NodeRuntime {
    return { row, lastSeen, shares: new Map(), completing: new Map() };
  }

  /** Nodes a scheduling pass may hand out or count on. */
  isSchedulable(n: NodeRuntime, now: number): boolean {
    return n.row.status === "UP" && n.row.drain === null && n.session !== undefined && !this.isCompleting(n, now);
  }

  /** Whether a job that ended there is still being cleaned up on the node. */
  isCompleting(n: NodeRuntime, now: number): boolean {
    for (const until of n.completing.values()) if (until > now) return true;
    return false;
  }

  /** No job holds any part of the node. */
  isIdle(n: NodeRuntime): boolean {
    return n.shares.size === 0;
  }

  /** What the node has. */
  resources(n: NodeRuntime): NodeResources {
    return nodeResources(n.row);
  }

  /** All of node `name`: what a job without a resource request (or an exclusive one) holds of it. */
  wholeShare(name: string): NodeShare {
    const row = this.nodes.get(name)?.row;
    if (!row) return { node: name, cores: [], memMiB: 0, gpus: [] };
    return { node: name, cores: Array.from({ length: row.cpus }, (_, i) => i), memMiB: row.memoryMb, gpus: row.gpus.map((_, i) => i) };
  }

  /** Cores of the node no job holds. */
  freeCores(n: NodeRuntime): number {
    let held = 0;
    for (const s of n.shares.values()) held += s.cores.length;
    return n.row.cpus - held;
  }

  /** Whether some schedulable node has a core no job holds (a pass may start something). */
  hasRoom(now: number): boolean {
    for (const n of this.nodes.values()) if (this.isSchedulable(n, now) && this.freeCores(n) > 0) return true;
    return false;
  }

  /** Schedulable nodes, and those of them no job holds (what the pure passes count with). */
  nodeCounts(now: number): { upNodes: number; idleNodes: number } {
    let upNodes = 0;
    let idleNodes = 0;
    for (const n of this.nodes.values()) {
      if (!this.isSchedulable(n, now)) continue;
      upNodes++;
      if (this.isIdle(n)) idleNodes++;
    }
    return { upNodes, idleNodes };
  }
}
