/**
 * ebb's arrival reserve: growth into idle nodes must not make arrivals wait.
 *
 * With nobody waiting, ebb lends idle nodes to running jobs (ebb.ts, planLend). A job that arrives
 * then finds them held and waits for one give-back (an adaptation, 5-11 s): on a light machine,
 * where EASY starts nearly every job at once, that alone puts ebb's bounded slowdown above EASY's
 * (issue 35: 2,168 jobs waiting a median 5.8 s where EASY made 6 wait). Pricing that wait into the
 * loan does not help — a few seconds of one arrival are worth far less than the loan saves the
 * grown job (measured: no change) — so the nodes the arrivals will ask for are kept idle instead:
 * - the reserve: the most nodes the jobs the pass sees (running, waiting, starting now) asked to
 *   start on within any span of submit times as long as a loan takes to come back (one adaptation,
 *   `defaultAdaptCost`) — the arrival rate at its peak, since arrivals come in bursts — a
 *   malleable job its minimum (it can start there and grow once measured), a rigid one its size,
 *   and so a malleable one whose time limit ends before its speed is known (`minSamples` ticks of
 *   `interval`): started smaller, it would never grow back and run slower for its whole run
 *   (issue 35, the light machine at 100 % malleable: bounded slowdown 1.0136 -> 1.0127 of EASY's,
 *   lower on every seed; every job at its size instead: 1.0001, but hpc2n's turnaround worse:
 *   measured again, 5 seeds, ebb's turnaround / apm-equi's at 100 % 1.0130 -> 1.0204 at scale 1,
 *   1.0074 -> 1.0112 at 0.7, and the light machine's / drms-rs's 0.9980 -> 1.0002);
 *   counting only requests that would start at once with every loan back, and at most that many nodes;
 * - none while a running job waited longer than that to start (longer than a give-back takes),
 *   or gave nodes below the size it asked for and started at (only a waiting job takes those: a
 *   loan comes back no lower): the queue was real then, within the life of a job still running,
 *   arrivals wait for the machine anyway, and the loans are worth more than the seconds they add
 *   (issue 35: hpc2n at 100 % malleable, turnaround 1.030 -> 1.013 and 1.007 of apm-equi's at
 *   scales 1 and 0.7; the light machine of small jobs, where no queue forms, unchanged; the
 *   reserve kept under a real queue as well: hpc2n scale 1 at 100 %, seed 1, 9,240 -> 9,655 s);
 * - a loan is what a job holds beyond the size it first ran at (its profile's first point); it
 *   stays where it was lent: moving it, with no node idle, to a running job it would save more (the
 *   holder shrinks when the other's predicted saving exceeds its own loss, its adaptation and two
 *   of the other's) made hpc2n's turnaround worse (scale 1 at 100 %, seeds 1-3, +0.6 to +0.9 %);
 * - lending leaves the reserve idle, and when the idle nodes (with the give-backs under way) fall
 *   below it, loans come back, the cheapest first (`reclaim`), before the next arrival needs them.
 * Measured and not kept (issue 35, ebb's ratios over seeds 1-5 unless said):
 * - loans back at once for the first waiting job the reserve fell short for (the queue not real,
 *   the loans cover it, their give-back commits twice over before its reservation; ahead of the
 *   head's moldable start, which on the light machine put 8-node jobs on 2 nodes for 3.7x their
 *   time): the light machine at 100 % bounded slowdown 1.0127 -> 1.0113 of EASY's (every seed
 *   lower), but hpc2n at 0.5, 100 % 1.421 -> 1.490 of drms-rs's (seeds 1-10: ebb's +9.9 %) and
 *   its turnaround / best 1.0028 -> 1.0059, at 0.7, 50 % 1.0010 -> 1.0034; only when the head is
 *   the one job waiting: hpc2n 0.5, 100 % 1.575; only when the head's wait exceeds the loans'
 *   stretch (priced as an admit): the light machine 1.0122, hpc2n within -1.1 % .. +1.9 % of
 *   ebb's bounded slowdown and up to +0.6 % turnaround over seeds 1-10; loans back for every
 *   waiting job, each giver kept in time for the reservation: lublin x3, 50 % 31.31 -> 31.66
 *   mean bounded slowdown, turnaround +2.2 %;
 * - lending with nobody waiting only to jobs predicted to end within an hour: lublin x3, 50 %
 *   bounded slowdown 31.31 -> 27.45 (drms-rs 26.11), but turnaround +6.5 %, and on seeds 1-2
 *   hpc2n x1, 100 % turnaround 9,302 -> 16,589 s, the light machine's at 100 % 2,554 -> 2,803 s
 *   (no such loans at all: lublin x3, 50 % 27.57 and +7.6 %): long loans carry hpc2n's turnaround;
 * - malleable jobs starting on the idle nodes at once (ebb.ts, `growStarts`) while the queue was
 *   real too (the reserve is 0 then): hpc2n 0.5, 100 % turnaround / best 1.0028 -> 1.0059, at
 *   0.7, 50 % 1.0010 -> 1.0031, the light machine's bounded slowdown 1.0127 -> 1.0139 of EASY's.
 * Pure.
 */
import { preferredSize } from "../batch.ts";
import { remainingTime } from "../elastic.ts";
import type { JobState, PassInput, PendingJob, Resize, ResizeRule } from "../types.ts";
import { adaptationCost, type Speed } from "../worth.ts";
import { incomingNodes, sortPairs } from "./common.ts";

/** Nodes a running job holds (or will hold, after the adaptation under way) beyond the size it first ran at, or the size it asked for if that is less (it may start above it). */
export function loanOf(job: Pick<JobState, "profile" | "nodes" | "resizingTo" | "preferredNodes">): number {
  const first = job.profile?.[0]?.nodes;
  if (first === undefined) return 0;
  return Math.max(0, (job.resizingTo ?? job.nodes) - Math.min(first, job.preferredNodes ?? first));
}

/** The nodes a running job asked to start on: its size, else (elastic, its size unknown) the size it first ran at. */
function askedNodes(job: JobState): number {
  if (!job.elastic) return job.nodes;
  return job.preferredNodes ?? job.profile?.[0]?.nodes ?? job.minNodes;
}

/** A running job gave nodes below the size it started at and asked for (now or in its profile): of ebb's rules, only those for a waiting job take them. */
function servedQueue(job: JobState): boolean {
  const first = job.profile?.[0]?.nodes;
  if (first === undefined) return false;
  const base = Math.min(first, job.preferredNodes ?? first);
  return (job.resizingTo ?? job.nodes) < base || job.profile!.some((p) => p.nodes < base);
}

/** A running job waited longer to start than a loan takes to come back, or gave nodes to a waiting job: the queue was real, arrivals wait for the machine anyway. */
export function queueWasReal(input: PassInput): boolean {
  const span = input.config.defaultAdaptCost * 1000;
  return input.running.some((j) => j.startTime - j.submitTime > span || servedQueue(j));
}

/** The idle nodes to keep for arrivals (see the file's comment), given `idle` idle nodes after this pass's starts. */
export function arrivalReserve(input: PassInput, starting: readonly PendingJob[], idle: number): number {
  // The time a loan takes to come back: an adaptation, as the scheduler assumes one lasts.
  const span = input.config.defaultAdaptCost * 1000;
  let free = idle + incomingNodes(input);
  for (const j of input.running) free += loanOf(j);
  if (free <= 0) return 0;
  if (queueWasReal(input)) return 0;
  // The time a started job's speed takes to measure: before it, it cannot grow.
  const measured = input.config.minSamples * input.config.interval;
  // A request counts at its minimum where it can grow once measured, else at `size`.
  const asks = (j: { elastic?: boolean; timeLimit: number; minNodes: number }, size: number): number => (j.elastic && j.timeLimit > measured ? j.minNodes : size);
  // The asks' submit times and sizes, sorted together by time (two typed arrays: no object a job).
  // The peak does not depend on how equal times are ordered: the window's sum at the last of them counts them all.
  const count = input.running.length + starting.length;
  const at = new Float64Array(count);
  const ask = new Float64Array(count);
  let k = 0;
  for (const j of input.running) {
    at[k] = j.submitTime;
    ask[k++] = asks(j, askedNodes(j));
  }
  for (const j of starting) {
    at[k] = j.submitTime;
    ask[k++] = asks(j, preferredSize(j));
  }
  sortPairs(at, ask, 0, count);
  let peak = 0;
  let sum = 0;
  for (let lo = 0, hi = 0; hi < count; hi++) {
    if (ask[hi]! > free) continue;
    sum += ask[hi]!;
    for (; at[hi]! - at[lo]! > span; lo++) if (ask[lo]! <= free) sum -= ask[lo]!;
    peak = Math.max(peak, sum);
  }
  return Math.min(peak, free);
}

/**
 * Loans back, `need` nodes, from the jobs whose give-back costs them least per node (their
 * remaining work at the smaller size by `speed` if known, else at most linearly slower, plus the
 * adaptation); none below the size it first ran at, none adapting, between resize points or
 * bound to valid sizes, none in `skip`.
 */
export function reclaim(input: PassInput, need: number, speed: (job: JobState) => Speed | undefined, skip: ReadonlySet<number>, rule: ResizeRule, why: (give: number, lent: number) => string): Resize[] {
  const lent = input.running.filter((j) => !skip.has(j.id) && j.elastic && !j.adapting && j.atResizePoint !== false && !(j.sizes && j.sizes.length > 0) && loanOf(j) > 0);
  const perNode = (j: JobState): number => {
    const g = Math.min(need, loanOf(j));
    const ratio = speed(j)?.ratio(j.nodes - g) ?? j.nodes / (j.nodes - g);
    return (remainingTime(j, input.now) * (ratio - 1) + adaptationCost(j, input.config, g)) / g;
  };
  const key = new Map(lent.map((j) => [j.id, perNode(j)]));
  lent.sort((a, b) => key.get(a.id)! - key.get(b.id)! || a.id - b.id);
  const out: Resize[] = [];
  let left = need;
  for (const j of lent) {
    if (left <= 0) break;
    const give = Math.min(left, loanOf(j));
    left -= give;
    out.push({ jobId: j.id, from: j.nodes, to: j.nodes - give, rule, reason: why(give, loanOf(j)) });
  }
  return out;
}
