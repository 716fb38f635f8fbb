/**
 * How the scheduler sees a waiting job: its request turned into the pass's `PendingJob`. The one
 * place that decides this shape; the controller (roles/controller/sched-view.ts) and the simulator
 * (sim/job-run.ts) both call it, so a policy sees the same job live and simulated.
 *
 * The range is the job's whole range, [minNodes, maxNodes], for every job, as its running view
 * and the plan's re-check have it too: APM's shares and every resize are bounded by it (the APM
 * paper: a job tells the server "the minimum and maximum number of processors it can handle").
 * The size it asked for is `preferredNodes` when it is below the top: a start through the batch
 * pass (FCFS, EASY, ebb, ERS) never exceeds it (`batch.ts` `preferredSize`).
 */
import type { ResourceRequest } from "../domain/resources.ts";
import type { RuntimeModel } from "../model/amdahl.ts";
import type { PendingJob } from "./types.ts";

/** What a job asked for, as the controller stores it (its row) or the simulator's trace gives it. */
export interface JobRequest {
  id: number;
  /** The size it asked for. */
  nodes: number;
  minNodes: number;
  maxNodes: number;
  /** Resizable once it runs (malleable). */
  elastic: boolean;
  /** Seconds, at the size it asked for. */
  timeLimit: number;
  /** Epoch ms. */
  submitTime: number;
  exclude?: readonly string[] | null;
  nodelist?: readonly string[] | null;
  sizes?: readonly number[] | null;
  /** A runtime model it declares (apm-maxs). */
  model?: RuntimeModel;
  /** What it asks of each node (cores, memory, GPUs); none: whole nodes. */
  resources?: ResourceRequest | null;
}

export function pendingView(job: JobRequest): PendingJob {
  // Every view has the same keys (undefined when absent): the policies read thousands of them per
  // pass, and objects of one shape keep those reads fast.
  return {
    id: job.id,
    minNodes: job.minNodes,
    maxNodes: job.maxNodes,
    preferredNodes: job.nodes < job.maxNodes ? job.nodes : undefined,
    timeLimit: job.timeLimit,
    submitTime: job.submitTime,
    elastic: job.elastic,
    // --nodes MIN-MAX without --elastic: any size in the range, fixed once it starts.
    moldable: !job.elastic && job.minNodes < job.maxNodes ? true : undefined,
    exclude: job.exclude ?? undefined,
    nodelist: job.nodelist ?? undefined,
    sizes: job.sizes ?? undefined,
    model: job.model,
    resources: job.resources ?? undefined,
  };
}
