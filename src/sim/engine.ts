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
 */
import type { MtctSample } from "../model/spmd.ts";
import type { ErsConfig } from "../sched/config.ts";
import { shadowTime } from "../sched/batch.ts";
import { endings } from "../sched/policies/common.ts";
import { POLICY_TABLE } from "../sched/policies/index.ts";
import { limitRatio, rescaleLimit } from "../sched/limits.ts";
import { checkPlan, makePlan, type Plan, type PlanJobState, type PlanState, type SnapshotJob } from "../sched/plan.ts";
import type { ClusterNode, PassInput, PendingJob, ProfilePoint } from "../sched/types.ts";
import { EventQueue } from "./heap.ts";
import type { SimJob } from "./job.ts";
import { stream, type Rng } from "./random.ts";

export interface SimOptions {
  nodes: number;
  config: ErsConfig;
  /** Seeds the MTCT sample noise. */
  seed?: number;
  /** Relative noise on MTCT samples, e.g. 0.05 for +-5% (default 0.05). */
  noise?: number;
  /**
   * Hold the policy to EASY's promise: record the reservation each job gets when it becomes first
   * in line, and report every job that starts later than that (`SimRun.violations`).
   */
  check?: boolean;
  /** Called now and then with the fraction of jobs finished. */
  onProgress?: (done: number) => void;
}

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
  jobs: JobRecord[];
  /** Node-seconds held by jobs. */
  busyArea: number;
  passes: number;
  events: number;
  resizes: number;
  /** Jobs killed at their time limit. */
  killed: number;
  /** With `check`: every broken promise, and how many jobs were ever first in line. */
  violations: Violation[];
  heads: number;
}

const SAMPLE_CAP = 32;

interface Run {
  job: SimJob;
  pend: PendingJob;
  state: "future" | "pending" | "running" | "done";
  n: number;
  done: number;
  since: number;
  adapting: boolean;
  adaptTo: number;
  adaptEnd: number;
  version: number;
  start: number;
  end: number;
  startNodes: number;
  peak: number;
  samples: MtctSample[];
  lastAdaptEnd?: number;
  costSum: number;
  costCount: number;
  profile: ProfilePoint[];
  profileOpen: boolean;
  atPoint: boolean;
  resizes: number;
  estFactor: number;
  /** Time limit (s from its start), rescaled at each resize. */
  limit: number;
  limitVersion: number;
  killed: boolean;
  /** The resize under way: its limit ratio (from what the job showed when it was asked) and when it was asked. */
  limitRatio: number;
  adaptAt: number;
  adaptFrom: number;
  /** Its nodes in rank order, and those a shrink under way gives back when it commits. */
  names: string[];
  removing: string[];
}

export function simulate(jobs: readonly SimJob[], opts: SimOptions): SimRun {
  const policy = POLICY_TABLE[opts.config.policy];
  const N = opts.nodes;
  const noise = opts.noise ?? 0.05;
  const rng: Rng = stream(opts.seed ?? 1, "mtct-noise");
  const q = new EventQueue();
  const runs = new Map<number, Run>();
  // Same-time arrivals join the queue in (submit, id) order, which the policies rely on.
  const ordered = [...jobs].sort((a, b) => a.submit - b.submit || a.id - b.id);
  for (const job of ordered) {
    if (job.nodes > N || job.minNodes > N) throw new RangeError(`job ${job.id} needs ${job.minNodes} nodes, the cluster has ${N}`);
    if (runs.has(job.id)) throw new RangeError(`job ${job.id} appears twice`);
    const ref = job.work.time(job.nodes);
    runs.set(job.id, {
      job,
      pend: {
        id: job.id,
        minNodes: job.minNodes,
        maxNodes: job.maxNodes,
        preferredNodes: job.nodes,
        timeLimit: job.estimate,
        submitTime: job.submit * 1000,
        elastic: job.malleable,
        model: job.model,
        ...(job.sizes ? { sizes: job.sizes } : {}),
      },
      state: "future",
      n: 0,
      done: 0,
      since: 0,
      adapting: false,
      adaptTo: 0,
      adaptEnd: 0,
      version: 0,
      start: Number.NaN,
      end: Number.NaN,
      startNodes: 0,
      peak: 0,
      samples: [],
      costSum: 0,
      costCount: 0,
      profile: [],
      profileOpen: true,
      atPoint: false,
      resizes: 0,
      estFactor: ref > 0 ? job.estimate / ref : 1,
      limit: job.estimate,
      limitVersion: 0,
      killed: false,
      limitRatio: 1,
      adaptAt: 0,
      adaptFrom: 0,
      names: [],
      removing: [],
    });
    q.push({ time: job.submit, kind: "arrive", job: job.id, version: 0 });
  }

  let free = N;
  // The virtual cluster's nodes, in name order; `free` counts those no job holds.
  const nodes: ClusterNode[] = Array.from({ length: N }, (_, i) => ({ name: `n${i + 1}`, up: true }));
  const nodeAt = (name: string): ClusterNode | undefined => nodes[Number(name.slice(1)) - 1];
  const hold = (names: readonly string[], id: number | undefined) => {
    for (const n of names) nodeAt(n)!.jobId = id;
  };
  const planState: PlanState = {
    node: (name) => (name.startsWith("n") ? nodeAt(name) : undefined),
    job: (id): PlanJobState | undefined => {
      const r = runs.get(id);
      if (!r) return undefined;
      const state = r.state === "running" && r.adapting ? "adapting" : r.state;
      const atResizePoint = r.job.work.iterations ? r.atPoint : true;
      return { state, nodes: r.names, minNodes: r.job.minNodes, maxNodes: r.job.maxNodes, sizes: r.job.sizes, resizable: r.job.malleable, atResizePoint };
    },
  };
  let now = q.peek()?.time ?? 0;
  let busyArea = 0;
  let passes = 0;
  let events = 0;
  let resizes = 0;
  let killed = 0;
  let finished = 0;
  let tickAt = Number.NaN;
  let pending: Run[] = [];
  const running = new Set<Run>();
  const atPoint: Run[] = [];
  // --check: the reservation (s) each job got when it became first in line.
  const promised = new Map<number, number>();
  const violations: SimRun["violations"] = [];

  const T = (r: Run, p: number) => r.job.work.time(p);
  const advance = (r: Run, t: number) => {
    if (r.state === "running" && !r.adapting) r.done = Math.min(1, r.done + (t - r.since) / T(r, r.n));
    r.since = t;
  };
  const schedule = (r: Run, t: number) => {
    r.version++;
    const k = r.job.work.iterations;
    const left = (1 - r.done) * T(r, r.n);
    if (k) {
      const next = Math.floor(r.done * k + 1e-7) + 1;
      if (next < k) {
        q.push({ time: t + (next / k - r.done) * T(r, r.n), kind: "point", job: r.job.id, version: r.version });
        return;
      }
    }
    q.push({ time: t + left, kind: "end", job: r.job.id, version: r.version });
  };
  const measure = (r: Run, t: number) => {
    const k = r.job.work.iterations ?? 1;
    const m = r.job.work.mtct(r.n);
    const mtct = noise > 0 && Number.isFinite(m) ? m * (1 + noise * (2 * rng.next() - 1)) : m;
    const iterTime = T(r, r.n) / k;
    r.samples.push({ time: t * 1000, mtct });
    if (r.samples.length > SAMPLE_CAP) r.samples.shift();
    const last = r.profile[r.profile.length - 1];
    if (r.profileOpen || !last) {
      r.profile.push({ nodes: r.n, iterTime });
      r.profileOpen = false;
    } else last.iterTime = iterTime;
  };
  /** (Re)arms the kill at start + limit. */
  const armLimit = (r: Run) => {
    r.limitVersion++;
    q.push({ time: r.start + r.limit, kind: "limit", job: r.job.id, version: r.limitVersion });
  };
  /** The limit of a job started on `size` nodes: below the size it asked for, scaled as live. */
  const startLimit = (j: SimJob, size: number): number =>
    j.malleable && size < j.nodes ? rescaleLimit({ startTime: 0, limit: j.estimate, original: j.estimate, at: 0, ratio: limitRatio({ nodes: j.nodes, model: j.model }, size).ratio, grow: false }) : j.estimate;
  const commit = (r: Run, t: number) => {
    advance(r, t);
    // The limit follows the new size, as the live controller rescales it when the adaptation commits.
    r.limit = rescaleLimit({ startTime: r.start * 1000, limit: r.limit, original: r.job.estimate, at: t * 1000, ratio: r.limitRatio, grow: r.adaptTo > r.adaptFrom, adaptation: t - r.adaptAt });
    armLimit(r);
    if (r.adaptTo < r.n) {
      free += r.n - r.adaptTo;
      hold(r.removing, undefined);
      r.names = r.names.slice(0, r.adaptTo);
      r.removing = [];
    }
    r.n = r.adaptTo;
    r.adapting = false;
    r.lastAdaptEnd = t;
    r.samples = [];
    r.profileOpen = true;
    schedule(r, t);
  };
  const fail = (msg: string): never => {
    throw new Error(`policy ${policy.name} at t=${now.toFixed(3)} s: ${msg}`);
  };

  const view = (r: Run, nowMs: number): SnapshotJob => {
    const size = r.adapting ? r.adaptTo : r.n;
    const adaptLeft = r.adapting ? Math.max(0, r.adaptEnd - now) : 0;
    // Progress as of now (the stored `done` is only brought up to date at events of this job).
    const done = r.adapting ? r.done : Math.min(1, r.done + (now - r.since) / T(r, r.n));
    let remaining: number;
    let expectedEnd: number;
    if (r.resizes === 0) {
      // Never resized: what a rigid scheduler knows, start + its limit (the requested time, scaled
      // when it started below the size it asked for), whatever the true run time.
      expectedEnd = (r.start + r.limit) * 1000;
      remaining = Math.max(0, expectedEnd - nowMs) / 1000;
    } else {
      // Resized: its progress at the trace's estimate ratio (at least 1, an estimate is an upper
      // bound), and never past its limit, where it is killed.
      const f = Math.max(1, r.estFactor);
      // (An adaptation under way rescales the limit when it commits.)
      const limit = r.adapting ? rescaleLimit({ startTime: r.start * 1000, limit: r.limit, original: r.job.estimate, at: r.adaptEnd * 1000, ratio: r.limitRatio, grow: r.adaptTo > r.adaptFrom, adaptation: r.adaptEnd - r.adaptAt }) : r.limit;
      const limitEnd = (r.start + limit) * 1000;
      remaining = Math.min((1 - done) * T(r, r.n) * f, Math.max(0, limitEnd - nowMs) / 1000);
      expectedEnd = Math.min(limitEnd, nowMs + (adaptLeft + (1 - done) * T(r, size) * f) * 1000);
    }
    return {
      id: r.job.id,
      nodes: r.n,
      nodeNames: r.names,
      minNodes: r.job.minNodes,
      maxNodes: r.job.maxNodes,
      elastic: r.job.malleable,
      submitTime: r.pend.submitTime,
      startTime: r.start * 1000,
      timeLimit: r.limit,
      expectedEnd,
      remaining,
      samples: r.samples,
      adapting: r.adapting,
      resizingTo: r.adapting ? r.adaptTo : undefined,
      lastAdaptEnd: r.lastAdaptEnd === undefined ? undefined : r.lastAdaptEnd * 1000,
      adaptCost: r.costCount > 0 ? r.costSum / r.costCount : undefined,
      adaptCostModel: r.job.costModel,
      adaptEnd: r.adapting ? r.adaptEnd * 1000 : undefined,
      profile: r.profile,
      sizes: r.job.sizes,
      model: r.job.model,
      atResizePoint: r.job.work.iterations ? r.atPoint : true,
    };
  };

  /** Carries out a plan `checkPlan` accepted: the same items the controller would carry out. */
  const apply = (plan: Plan): boolean => {
    let changed = false;
    let started = false;
    for (const s of plan.starts) {
      const r = runs.get(s.jobId)!;
      const size = s.nodes.length;
      free -= size;
      hold(s.nodes, r.job.id);
      r.names = [...s.nodes];
      r.state = "running";
      r.n = size;
      r.start = now;
      const p = promised.get(r.job.id);
      if (p !== undefined && now > p + 1e-6) violations.push({ job: r.job.id, reservation: p, start: now });
      r.since = now;
      r.startNodes = size;
      r.peak = size;
      r.limit = startLimit(r.job, size);
      running.add(r);
      schedule(r, now);
      armLimit(r);
      started = changed = true;
    }
    if (started) pending = pending.filter((r) => r.state === "pending");
    for (const z of plan.resizes) {
      const r = runs.get(z.jobId)!;
      if (z.to > r.n) {
        free -= z.to - r.n;
        hold(z.added, r.job.id);
        r.names = [...r.names, ...z.added];
      } else r.removing = z.removed;
      r.limitRatio = z.limit.ratio;
      r.adaptAt = now;
      r.adaptFrom = r.n;
      advance(r, now);
      const cost = Math.max(0, r.job.resizeCost(r.n, z.to));
      r.resizes++;
      resizes++;
      r.costSum += cost;
      r.costCount++;
      r.peak = Math.max(r.peak, z.to);
      r.adaptTo = z.to;
      changed = true;
      if (cost === 0) {
        commit(r, now);
        continue;
      }
      // Grows hold the new nodes from now; shrinks keep theirs until the commit.
      if (z.to > r.n) r.n = z.to;
      r.adapting = true;
      r.adaptEnd = now + cost;
      r.version++;
      q.push({ time: now + cost, kind: "commit", job: r.job.id, version: r.version });
    }
    return changed;
  };

  const pass = () => {
    const nowMs = now * 1000;
    const idleBefore = free;
    const running_ = [...running].map((r) => view(r, nowMs));
    let plan: Plan;
    try {
      plan = makePlan({ now: nowMs, nodes, namesSorted: true, running: running_, pending: pending.map((r) => r.pend), sorted: true, config: opts.config });
    } catch (e) {
      return fail((e as Error).message);
    }
    passes++;
    const { accepted, rejected } = checkPlan(plan, planState);
    if (rejected.length > 0) fail(`job ${rejected[0]!.jobId}: ${rejected[0]!.reason}`);
    if (opts.check) promise(accepted, { now: nowMs, upNodes: N, idleNodes: idleBefore, running: running_, pending: [], config: opts.config });
    return apply(accepted);
  };

  /** The first job left waiting by this plan: if it just became first, remember its reservation. */
  const promise = (plan: Plan, input: PassInput) => {
    const starting = new Set(plan.starts.map((s) => s.jobId));
    const head = pending.find((r) => !starting.has(r.job.id));
    if (!head || promised.has(head.job.id)) return;
    let at = Number.POSITIVE_INFINITY;
    for (const res of plan.reservations) if (res.jobId === head.job.id) at = Math.min(at, res.start / 1000);
    if (!Number.isFinite(at)) {
      // The policy gave it none: hold it to the shadow time for the size it asked for, by the
      // running jobs' estimates and those of the jobs this plan starts (start + requested time).
      const left = plan.starts.reduce((n, s) => n - s.nodes.length, input.idleNodes);
      const ends = endings(input);
      for (const s of plan.starts) {
        const j = runs.get(s.jobId)?.job;
        if (j) ends.push({ nodes: s.nodes.length, expectedEnd: input.now + startLimit(j, s.nodes.length) * 1000 });
      }
      at = shadowTime(ends, left, head.job.nodes, input.now).time / 1000;
    }
    promised.set(head.job.id, at);
  };

  const total = runs.size;
  let nextReport = 0;
  while (q.size > 0) {
    const t = q.peek()!.time;
    busyArea += (N - free) * (t - now);
    now = t;
    let tick = false;
    while (q.size > 0 && q.peek()!.time === t) {
      const ev = q.pop()!;
      events++;
      const r = runs.get(ev.job);
      if (ev.kind === "tick") {
        tick = true;
        tickAt = Number.NaN;
        continue;
      }
      if (!r) continue;
      if (ev.kind === "arrive") {
        r.state = "pending";
        pending.push(r);
        continue;
      }
      if (ev.kind === "limit") {
        if (ev.version !== r.limitVersion || r.state !== "running") continue;
        advance(r, t);
        // A job whose work is done at this very instant ends; any other is killed, as live.
        if (!r.adapting && r.done >= 1 - 1e-9) r.done = 1;
        else {
          r.killed = true;
          killed++;
        }
        r.state = "done";
        r.end = t;
        r.version++;
        r.adapting = false;
        free += r.n;
        hold(r.names, undefined);
        running.delete(r);
        finished++;
        continue;
      }
      if (ev.version !== r.version) continue;
      if (ev.kind === "end") {
        advance(r, t);
        r.done = 1;
        r.state = "done";
        r.end = t;
        free += r.n;
        hold(r.names, undefined);
        running.delete(r);
        finished++;
      } else if (ev.kind === "commit") {
        commit(r, t);
      } else if (ev.kind === "point") {
        advance(r, t);
        const k = r.job.work.iterations!;
        r.done = Math.round(r.done * k) / k;
        measure(r, t);
        r.atPoint = true;
        atPoint.push(r);
        schedule(r, t);
      }
    }
    if (tick) {
      for (const r of running) if (r.job.malleable && !r.adapting && !r.job.work.iterations) measure(r, t);
    }
    for (let k = 0; k < 8 && pass(); k++);
    for (const r of atPoint) r.atPoint = false;
    atPoint.length = 0;
    if (policy.periodic && Number.isNaN(tickAt) && (running.size > 0 || pending.length > 0)) {
      tickAt = now + opts.config.interval;
      q.push({ time: tickAt, kind: "tick", job: -1, version: 0 });
    }
    if (opts.onProgress && finished >= nextReport) {
      opts.onProgress(finished / total);
      nextReport = finished + Math.max(1, Math.floor(total / 20));
    }
  }
  const stuck = [...runs.values()].filter((r) => r.state !== "done");
  if (stuck.length > 0) throw new Error(`policy ${policy.name}: ${stuck.length} job(s) never finished (first: job ${stuck[0]!.job.id}, ${stuck[0]!.state})`);

  const records: JobRecord[] = [...runs.values()].map((r) => ({
    id: r.job.id,
    submit: r.job.submit,
    start: r.start,
    end: r.end,
    reference: T(r, r.job.nodes),
    nodes: r.job.nodes,
    minNodes: r.job.minNodes,
    maxNodes: r.job.maxNodes,
    malleable: r.job.malleable,
    startNodes: r.startNodes,
    peakNodes: r.peak,
    resizes: r.resizes,
    killed: r.killed,
    limit: r.limit,
  }));
  return { policy: policy.name, nodes: N, jobs: records, busyArea, passes, events, resizes, killed, violations, heads: promised.size };
}
