/** Plain-data inputs and outputs of a scheduling pass. Times are epoch ms, limits are seconds. */

export interface ClusterNode {
  name: string;
  up: boolean;
  /** The job holding the node, if any. */
  jobId?: number;
}

export interface RunningJob {
  id: number;
  nodes: string[];
  /** When the job will have ended at the latest: start + time limit. */
  expectedEnd: number;
}

export interface PendingJob {
  id: number;
  /** Nodes wanted; a moldable job may start anywhere in [minNodes, maxNodes]. */
  minNodes: number;
  maxNodes: number;
  timeLimit: number;
  submitTime: number;
}

export interface BatchInput {
  now: number;
  nodes: ClusterNode[];
  running: RunningJob[];
  pending: PendingJob[];
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
}

export interface BatchPlan {
  starts: Start[];
  reservation?: Reservation;
  /** Why each job that stays pending waits. */
  waiting: Map<number, string>;
}
