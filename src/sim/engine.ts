/**
 * Discrete-event replay: jobs arrive, a policy pass runs after every instant at which something
 * happened (and every interval for periodic policies), the plan is applied to a virtual cluster of
 * node counts. Virtual clock in seconds; no real timers. The pass gets exactly the plain data the
 * live controller would build (`PassInput`), so the same policy functions run in both.
 *
 * A resize costs `job.resizeCost(from, to)` seconds in which the job makes no progress; a grow
 * takes its new nodes at once, a shrink releases its nodes when it commits. Jobs with outer
 * iterations resize only between iterations.
 *
 * Time limits are enforced as the live controller enforces them: a job is killed at start + its
 * limit (the trace's requested time), and the limit follows its size (`sched/limits.ts`): a start
 * below the size asked for and every committed resize rescale what is left of it, plus the
 * adaptation's duration. The plan is the live one too: `planPass` (the policy's plan without the
 * shrinks a limit would then kill).
 *
 * One plan, carried out as live (sched/README.md, "One plan"): the virtual cluster has named nodes
 * (n1..nN), every pass is `makePlan` on a snapshot built as the controller builds its own, and the
 * plan is re-checked item by item with `checkPlan` before it is applied. The snapshot is exact, so
 * a rejected item is a bug of the pass: an error naming the policy.
 *
 * The parts: `cluster.ts` (the virtual cluster: nodes, jobs waiting and running, the plan's
 * re-check state), `job-run.ts` (one job's progress, resize and limit arithmetic), `timeline.ts`
 * (the event queue of each job's next events), `events.ts` (arrivals, completions, commits,
 * resize points), `view.ts` (the snapshot's view of a running job), `apply.ts` (a plan carried
 * out), `check.ts` (`--check`), `tally.ts` (the counts and records returned). This file is the
 * loop: take an instant's events, run the passes, arm the tick.
 */
import type { ErsConfig } from "../sched/config.ts";
import type { PriorityConfig } from "../sched/priority.ts";
import { POLICY_TABLE, type Policy } from "../sched/policies/index.ts";
import { loanOf } from "../sched/policies/reserve.ts";
import { checkPlan, makePlan, type Plan } from "../sched/plan.ts";
import { applyPlan } from "./apply.ts";
import { PromiseCheck } from "./check.ts";
import type { HostChange } from "./availability.ts";
import { SimCluster } from "./cluster.ts";
import { SimHosts } from "./hosts.ts";
import { growCommit, handleEvent, sampleOnTick } from "./events.ts";
import type { SimJob } from "./job.ts";
import { atResizePoint, mtctNoise } from "./job-run.ts";
import { SimPriority } from "./priority.ts";
import type { Replay } from "./replay.ts";
import { jobRecord, Tally, type SimRun } from "./tally.ts";
import { Timeline } from "./timeline.ts";

export type { JobRecord, SimRun, Violation } from "./tally.ts";

export interface SimOptions {
  nodes: number;
  /** Shared nodes of this many cores each (resource mode); absent: whole nodes. */
  coresPerNode?: number;
  config: ErsConfig;
  /** Seeds the MTCT sample noise. */
  seed?: number;
  /** Relative noise on MTCT samples, e.g. 0.05 for +-5% (default 0.05). */
  noise?: number;
  /**
   * Hold the policy to EASY's promise: record the reservation each job gets when it becomes first
   * in line, and report every job that starts later than that (`SimRun.violations`); on shared
   * nodes, also every share that over-allocates a node (`SimRun.overAllocated`).
   */
  check?: boolean;
  /** Multifactor priority (fair share by the jobs' users); absent: submit order. */
  priority?: PriorityConfig;
  /** Node availability: host state changes by time (availability.ts), replayed as events (hosts.ts). */
  availability?: readonly HostChange[];
  /** Called now and then with the fraction of jobs finished and the events handled so far. */
  onProgress?: (done: number, events: number) => void;
}

/** Passes at one instant while each asks for the next (`pass`). */
const PASSES_PER_INSTANT = 8;

export function simulate(jobs: readonly SimJob[], opts: SimOptions): SimRun {
  const policy = POLICY_TABLE[opts.config.policy];
  const cluster = new SimCluster(opts.nodes, opts.coresPerNode, opts.check === true);
  if (opts.priority?.type === "multifactor") cluster.priority = new SimPriority(opts.priority, cluster.resources, cluster.capacity);
  const timeline = new Timeline();
  // Same-time arrivals join the queue in (submit, id) order, which the policies rely on.
  for (const job of [...jobs].sort((a, b) => a.submit - b.submit || a.id - b.id)) timeline.arrival(cluster.add(job).job);
  const hosts = opts.availability && opts.availability.length > 0 ? new SimHosts(opts.availability) : undefined;
  if (hosts && opts.coresPerNode !== undefined) throw new RangeError("availability is replayed on whole nodes only (not with shared nodes)");
  hosts?.schedule(timeline);
  const x: Replay = { cluster, timeline, tally: new Tally(), check: opts.check ? new PromiseCheck() : undefined, hosts, noisy: mtctNoise(opts.seed ?? 1, opts.noise ?? 0.05), now: timeline.next() ?? 0 };

  const total = cluster.jobs.size;
  const { config } = opts;
  let nextReport = 0;
  let planned = Number.NEGATIVE_INFINITY;
  const measured = policy.ticks === "measured";
  // A pass the policy proves plans nothing is skipped (`Policy.quiet`); what it reads is known here on whole nodes, in submit order, every node taking work.
  const quiet = !hosts && !cluster.priority && !cluster.resources ? policy.quiet : undefined;
  for (let t = timeline.next(); t !== undefined; t = timeline.next()) {
    x.tally.busyArea += cluster.held * (t - x.now);
    x.now = t;
    // Same-time events first, then the tick's samples, then the passes.
    let moved = false;
    for (let ev = timeline.popAt(t); ev; ev = timeline.popAt(t)) {
      x.tally.events++;
      // A grow's commit frees nothing: a policy that plans at measured instants plans at the next one.
      const grown = measured && growCommit(ev, x);
      moved = (handleEvent(ev, t, x) && !grown) || moved;
    }
    const tick = timeline.ticksAt(t);
    if (tick) x.tally.events++;
    if (tick && sampleOnTick(t, x, planned, config.minSamples, config.settle)) moved = true;
    // An instant at which only the clock and the samples moved plans only for policies that act on them.
    if (moved || policy.ticks === "every") {
      planned = t;
      const skip = quiet?.({ waiting: cluster.pending.length, idle: cluster.free, lent: () => lent(cluster), growable: () => growable(cluster, t, config) }) === true;
      if (skip) x.tally.quiet++;
      else for (let k = 0; k < PASSES_PER_INSTANT && pass(x, policy, config); k++);
    }
    cluster.leaveResizePoints();
    if (policy.periodic && (cluster.running.size > 0 || cluster.pending.length > 0)) timeline.armTick(x.now + config.interval);
    if (opts.onProgress && x.tally.finished >= nextReport) {
      opts.onProgress(x.tally.finished / total, x.tally.events);
      nextReport = x.tally.finished + Math.max(1, Math.floor(total / 100));
    }
    // What is left are availability changes after the last job's end.
    if (x.tally.finished === total) break;
  }
  const stuck = [...cluster.jobs.values()].filter((r) => r.state !== "done");
  if (stuck.length > 0) {
    const notFree = cluster.size - cluster.up;
    throw new Error(`policy ${policy.name}: ${stuck.length} job(s) never finished (first: job ${stuck[0]!.job.id}, ${stuck[0]!.state}${notFree > 0 ? `; ${notFree} node(s) were left not free by the availability, ${cluster.up} take work` : ""})`);
  }

  const { busyArea, passes, events, resizes, killed } = x.tally;
  const records = [...cluster.jobs.values()].map(jobRecord);
  return { policy: policy.name, nodes: opts.nodes, capacity: cluster.capacity, jobs: records, busyArea, passes, quietPasses: x.tally.quiet, events, resizes, killed, violations: x.check?.violations ?? [], heads: x.check?.heads ?? 0, overAllocated: cluster.overAllocated, ...(hosts ? { hosts: hosts.finish(x.now, x) } : {}) };
}

/** Some running job holds nodes beyond the size it first ran at (a loan: reserve.ts). */
function lent(cluster: SimCluster): boolean {
  for (const r of cluster.malleable) if (loanOf({ profile: r.profile, nodes: r.n, resizingTo: r.adapting ? r.adaptTo : undefined, preferredNodes: r.job.nodes }) > 0) return true;
  return false;
}

/** Some running job might be lent a node (`QuietState.growable`; ebb.ts `candidate` and `movable`, conservatively). */
function growable(cluster: SimCluster, now: number, config: ErsConfig): boolean {
  for (const r of cluster.malleable) {
    if (r.adapting || r.n >= r.job.maxNodes || r.job.minNodes >= r.job.maxNodes || !atResizePoint(r)) continue;
    // (A margin: the policy compares in ms.)
    if (r.lastAdaptEnd !== undefined && now < r.lastAdaptEnd + config.settle - 1e-6) continue;
    if (r.samples.length >= config.minSamples || r.profile.length >= 2 || r.job.model) return true;
  }
  return false;
}

/**
 * One pass: the snapshot, the policy's plan, its re-check, and the accepted items applied. Whether
 * to plan again at this instant: it changed something, and the policy is not `complete`, or said
 * `again`, or a resize committed at once (zero cost) or a move began (what they free the pass did not count on).
 */
function pass(x: Replay, policy: Policy, config: ErsConfig): boolean {
  const { cluster, now } = x;
  const snap = cluster.snapshot(now, config);
  const idleBefore = snap.idle?.nodes.length ?? cluster.free;
  const fail = (msg: string): never => {
    throw new Error(`policy ${policy.name} at t=${now.toFixed(3)} s: ${msg}`);
  };
  let plan: Plan;
  try {
    plan = makePlan(snap);
  } catch (e) {
    return fail((e as Error).message);
  }
  x.tally.passes++;
  if (x.hosts) for (const d of plan.declined ?? []) x.hosts.declined.add(d.jobId);
  const { accepted, rejected } = checkPlan(plan, cluster);
  if (rejected.length > 0) fail(`job ${rejected[0]!.jobId}: ${rejected[0]!.reason}`);
  x.check?.record(accepted, snap, idleBefore, cluster);
  if (!applyPlan(accepted, x)) return false;
  return !policy.complete || plan.again === true || accepted.resizes.some((z) => z.rule === "move" || !cluster.jobs.get(z.jobId)!.adapting);
}
