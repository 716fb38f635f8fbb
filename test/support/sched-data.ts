/** Plain data for the scheduling policies' unit tests: a pass's clock and a running malleable job. */
import type { JobState } from "../../src/sched/types.ts";

/** The pass's clock (ms since the epoch) in the policies' unit tests. */
export const NOW = 100_000_000;

/** A running malleable job with three MTCT samples (none if `mtct` is undefined); `remaining` seconds of work left at its size. */
export function runningJob(id: number, nodes: number, mtct: number | undefined, remaining: number, extra: Partial<JobState> = {}): JobState {
  return {
    id,
    nodes,
    minNodes: 1,
    maxNodes: 16,
    elastic: true,
    submitTime: id,
    startTime: NOW - 600_000,
    timeLimit: 100_000,
    expectedEnd: NOW + remaining * 1000,
    remaining,
    samples: mtct === undefined ? [] : [0, 1, 2].map((k) => ({ time: NOW - k * 60_000, mtct })),
    adapting: false,
    adaptCost: 10,
    ...extra,
  };
}
