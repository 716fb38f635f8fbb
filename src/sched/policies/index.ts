/** The policies by name; `planPass` runs the one the config names. */
import type { PolicyName } from "../config.ts";
import { guardLimits } from "../limits.ts";
import { honouringSizes } from "../sizes.ts";
import type { PassInput, PassPlan } from "../types.ts";
import { planApm } from "./apm.ts";
import { planDrms } from "./drms.ts";
import { ebbQuiet, planEbb } from "./ebb.ts";
import { planErs } from "./ers.ts";
import { planReshape } from "./reshape.ts";
import { planEasy, planFcfs } from "./static.ts";

export interface Policy {
  name: PolicyName;
  description: string;
  /** Wants a pass every interval, not only when jobs arrive, end or commit a resize. */
  periodic: boolean;
  /**
   * Which instants of a replay it plans at: `every` one (each event, stale or not, and each tick);
   * `measured`: those at which something changed — a job arrived, ended, committed a shrink or
   * reached a resize point, or what its measurements tell changed class (its first sample at a
   * new size, its `minSamples`-th, its settle time ran out): between them it only sees the clock
   * and new samples of speeds it knows already; a grow's commit frees nothing and waits for the
   * next such instant (sim/README.md, "Engine details").
   */
  ticks: "every" | "measured";
  /**
   * A pass plans all it can see at once, unless it says `again` (PassPlan.again): a replay does not
   * plan again at the same instant after a pass that changed something. Otherwise it does, until a
   * pass changes nothing.
   */
  complete: boolean;
  /** Resizes running jobs (the static baselines never do). */
  resizes: boolean;
  /** Starts jobs its own way, not with FCFS + EASY and moldable starts as ebb does. */
  ownStarts: boolean;
  /** Reads the jobs' MTCT samples. */
  mtct: boolean;
  /**
   * Keeps EASY's promise: no start, backfill or resize makes the first waiting job start later
   * than the reservation it got when it became first (what `ebb sim --check` holds it to).
   */
  easyPromise: boolean;
  plan(input: PassInput): PassPlan;
  /**
   * Whether a pass on this state provably plans nothing (a replay skips it; the decisions are
   * those of the pass). Only for whole nodes, submit order, every node taking work.
   */
  quiet?(q: QuietState): boolean;
}

/** What a replay knows at an instant without building the pass's snapshot. */
export interface QuietState {
  /** Jobs waiting. */
  waiting: number;
  /** Idle nodes. */
  idle: number;
  /** Whether some running job holds nodes beyond the size it first ran at (reserve.ts `loanOf`). */
  lent(): boolean;
  /** Whether some running job might be lent a node: malleable, not adapting, below its maximum, settled, its speed perhaps known (`speedOf`: enough samples, a profile of two sizes, or a model). */
  growable(): boolean;
}

/** The policies as written, before valid sizes are applied (tests compare against them). */
export const UNSIZED_POLICIES: Readonly<Record<PolicyName, Policy>> = {
  fcfs: { name: "fcfs", complete: true, description: "first come first served, rigid jobs, no backfilling (static baseline)", periodic: false, ticks: "every", resizes: false, ownStarts: false, mtct: false, easyPromise: true, plan: planFcfs },
  easy: { name: "easy", complete: true, description: "FCFS with EASY backfilling, rigid jobs (static baseline)", periodic: false, ticks: "every", resizes: false, ownStarts: false, mtct: false, easyPromise: true, plan: planEasy },
  ebb: { name: "ebb", complete: true, description: "EASY starts; a node-second priced by the jobs waiting: malleable jobs start below their size and inefficient ones shrink when the queue gains more than they lose; shrink to start the first waiting jobs when their gain exceeds the stretch; lend idle nodes when the gain pays for the adaptations, keeping idle what arrivals ask for within an adaptation", periodic: true, ticks: "measured", resizes: true, ownStarts: false, mtct: true, easyPromise: true, plan: planEbb, quiet: ebbQuiet },
  ers: { name: "ers", complete: false, description: "the dissertation's ERS: moldable starts + EASY, then MTCT ranges (halve/double), time balancing (rule 1), resource filling (rule 2), payoff rule", periodic: true, ticks: "every", resizes: true, ownStarts: false, mtct: true, easyPromise: false, plan: planErs },
  reshape: { name: "reshape", complete: false, description: "ReSHAPE: expand while iteration time improves, revert on regression, shrink to admit the queue head", periodic: true, ticks: "every", resizes: true, ownStarts: true, mtct: false, easyPromise: false, plan: planReshape },
  "apm-equi": { name: "apm-equi", complete: false, description: "APM equipartition of the nodes among elastic jobs", periodic: false, ticks: "every", resizes: true, ownStarts: true, mtct: false, easyPromise: false, plan: (i) => planApm(i, "equi") },
  "apm-maxs": { name: "apm-maxs", complete: false, description: "APM greedy on differential speedup (Amdahl-plus-overhead model)", periodic: false, ticks: "every", resizes: true, ownStarts: true, mtct: false, easyPromise: false, plan: (i) => planApm(i, "maxs") },
  "drms-rs": { name: "drms-rs", complete: false, description: "DRMS RS: shrink running jobs to start waiting ones, grow when nothing waits", periodic: true, ticks: "every", resizes: true, ownStarts: true, mtct: false, easyPromise: false, plan: planDrms },
};

/** Every policy honours the jobs' valid sizes through one wrapper (sizes.ts), not checks of its own. */
export const POLICY_TABLE: Readonly<Record<PolicyName, Policy>> = Object.fromEntries(
  Object.entries(UNSIZED_POLICIES).map(([name, p]) => [name, { ...p, plan: honouringSizes(p.plan) }]),
) as Record<PolicyName, Policy>;

/** The configured policy's plan, without the shrinks a job's time limit would then kill (`limits.ts`). */
export function planPass(input: PassInput): PassPlan {
  return guardLimits(input, POLICY_TABLE[input.config.policy].plan(input));
}
