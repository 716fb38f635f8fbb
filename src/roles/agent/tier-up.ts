/**
 * When the agent's thread stops being reluctant to optimize (util/jit.ts). It starts RELUCTANT: a
 * fresh agent runs per job a little glue code that would not repay its compiling. But an agent
 * lives for many jobs, and the same glue (message parsing, credentials, cgroup bookkeeping) runs
 * for each. Measured (1,000 one-rank `true` jobs, 4 agents; 4,000 on 2; alternating runs, load
 * 8-19): the normal policy from the start cost +13% agent CPU over an agent's first 250 jobs, about
 * the same over 1,000, and saved 14% over 2,000 (2.96 vs 3.45 ms a job, 3 rounds, lower in each).
 * So the thread turns NORMAL once its agents have started NORMAL_AFTER processes.
 */
import { jitPolicy, NORMAL } from "../../util/jit.ts";

export const NORMAL_AFTER = 500;

/** Counts the processes started on this thread; at the `after`-th, `turn` (the policy) is called, once. */
export class TierUp {
  private started = 0;

  constructor(
    private readonly after = NORMAL_AFTER,
    private readonly turn: () => void = () => jitPolicy(NORMAL),
  ) {}

  /** Another process started. */
  spawned(): void {
    if (++this.started === this.after) this.turn();
  }
}

/** This thread's: the policy is per thread (one JavaScript VM each), shared by the agents of `ebb up`'s thread. */
export const tierUp = new TierUp();
