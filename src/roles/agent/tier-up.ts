/**
 * When the agent's thread stops being reluctant to optimize (util/jit.ts). It starts RELUCTANT: a
 * fresh agent runs per job a little glue code that would not repay its compiling. But an agent
 * lives for many jobs, and the same glue (message parsing, credentials, cgroup bookkeeping) runs
 * for each. Measured (1,000 one-rank `true` jobs, 4 agents; 4,000 on 2; alternating runs, load
 * 8-19): the normal policy from the start cost +13% agent CPU over an agent's first 250 jobs, about
 * the same over 1,000, and saved 14% over 2,000 (2.96 vs 3.45 ms a job, 3 rounds, lower in each).
 * So the thread turns NORMAL once its agents have started NORMAL_AFTER processes.
 *
 * Measured again where the bench's 1,000 jobs leave each of its 4 agents (~250 processes, short of
 * the turn): normal from the start +12% agent CPU (4 ABBA rounds, load 2-9); a middle policy (4)
 * from the start +7% (4 rounds, each higher, load 32-55). Per thread over one agent's 250 jobs:
 * normal from the start saves 0.36 ms a job on the agent's thread (1.72 -> 1.36 ms of user time)
 * and spends 0.40 ms a job more on JIT threads (~0.1 s of compiling in all), so it repays itself
 * near 300 processes. A turn by the thread's own CPU time rather than a count would be the same
 * turn for null jobs (~2 ms of the thread's CPU a process): no better at 250 or at 1,000.
 *
 * What the thread runs a null job is mostly not JavaScript: of its samples inside JavaScript
 * (bench/_agent-thread-profile.ts, 1,000 jobs), ~80% are in Bun's native functions (the spawn,
 * the cgroup files' system calls) and ~20% run code (LLInt 14-16%, Baseline 4-5%), spread over
 * some hundred functions, none above 0.6%. Other JIT settings for the agents, measured against
 * this one (bench/_ab-agent-own.ts, medians of ABBA rounds' ratios, root's jobs / a user's), all
 * cost more or nothing: Baseline sooner (BUN_JSC_thresholdForJITAfterWarmUp=31,
 * thresholdForJITSoon=6) 1.36x / 1.18x (400 jobs, 4 rounds, load 8-20); normal from the first
 * process without FTL 1.3-1.9x in each of 6 pairs (400 jobs, 3 rounds, load 22-35); FTL off
 * alone 1.00x / 1.02x (2,000 jobs, 500 an agent, 4 rounds, load 28-48).
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
