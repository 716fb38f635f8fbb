/**
 * What a replay returns: one record per job, and the counts kept as it goes (node-seconds held,
 * passes, events, resizes, kills). `metrics.ts` turns them into the figures a run is judged by.
 */
import type { HostsRun } from "./hosts.ts";
import { workTime, type JobRun } from "./job-run.ts";

export interface JobRecord {
  id: number;
  submit: number;
  start: number;
  end: number;
  /** Run time at the size it asked for (the trace's run time). */
  reference: number;
  nodes: number;
  minNodes: number;
  maxNodes: number;
  malleable: boolean;
  startNodes: number;
  peakNodes: number;
  resizes: number;
  /** Killed at its time limit (end = start + limit). */
  killed: boolean;
  /** Its limit when it ended (s from its start). */
  limit: number;
  /** Shared nodes: the cores it asked for. */
  cores?: number;
  /** Whose job it was (the trace's user id). */
  user?: string;
}

/** A first-in-line job that started later than the reservation it got when it became first. */
export interface Violation {
  job: number;
  /** Seconds from the trace's start. */
  reservation: number;
  start: number;
}

export interface SimRun {
  policy: string;
  nodes: number;
  /** Nodes, or cores on shared nodes: what `busyArea` is a part of. */
  capacity: number;
  jobs: JobRecord[];
  /** Node-seconds held by jobs (core-seconds on shared nodes). */
  busyArea: number;
  passes: number;
  /** Passes skipped because the policy proved they plan nothing (`Policy.quiet`). */
  quietPasses: number;
  events: number;
  resizes: number;
  /** Jobs killed at their time limit. */
  killed: number;
  /** With `check`: every broken promise, and how many jobs were ever first in line. */
  violations: Violation[];
  heads: number;
  /** With `check` on shared nodes: every share that over-allocated a node. */
  overAllocated: string[];
  /** With availability: moves, node-hours lost (hosts.ts). */
  hosts?: HostsRun;
}

export class Tally {
  busyArea = 0;
  passes = 0;
  quiet = 0;
  events = 0;
  resizes = 0;
  killed = 0;
  finished = 0;
}

export function jobRecord(r: JobRun): JobRecord {
  return {
    id: r.job.id,
    submit: r.job.submit,
    start: r.start,
    end: r.end,
    reference: workTime(r, r.job.nodes),
    nodes: r.job.nodes,
    minNodes: r.job.minNodes,
    maxNodes: r.job.maxNodes,
    malleable: r.job.malleable,
    startNodes: r.startNodes,
    peakNodes: r.peak,
    resizes: r.resizes,
    killed: r.killed,
    limit: r.limit,
    ...(r.job.cores !== undefined ? { cores: r.job.cores } : {}),
    ...(r.job.user !== undefined ? { user: r.job.user } : {}),
  };
}
