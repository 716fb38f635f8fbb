/**
 * The Elastic Runtime Scheduler pass (dissertation §10.3.1-10.3.3), run every interval after the
 * batch pass:
 *   1. candidates: running elastic jobs, not adapting, settled, with enough MTCT samples;
 *   2. SPMD-phase model per candidate (average + trend, reset by each adaptation);
 *   3. resource range vector (halve / hold / up to double / not a candidate);
 *   4. elastic backfilling:
 *      rule 1: if jobs wait for nodes, pick running candidates whose spare nodes plus idle nodes
 *              cover the first waiting jobs, time-balance them over what is left, reserve the freed
 *              nodes for the waiting jobs; if the first cannot be served, later jobs that EASY
 *              would backfill may start on nodes of jobs that still end before its reservation;
 *      rule 2: ordinary backfilling is the batch pass's; then resource filling of the idle nodes
 *              that are still free (longest remaining time first, up to each range's top), each
 *              grow subject to the payoff rule;
 *   5. the result (the resource scaling vector) as one resize per changed job, with its reason.
 * Pure: `now` comes in, a plan goes out.
 */
import { payoff } from "../model/payoff.ts";
import { timeRatio } from "../model/scaling.ts";
import { spmdPhase, type SpmdPhase } from "../model/spmd.ts";
import { timeBalance } from "./balance.ts";
import { scaledLimit } from "./batch.ts";
import { jobConfig, type AdminLimits, type ErsConfig } from "./config.ts";
import { resourceFill } from "./fill.ts";
import { fmt, resourceRange, type RangeEntry } from "./rrv.ts";
import type { JobState, Note, PendingJob, Reservation, Resize } from "./types.ts";

export interface ElasticInput {
  now: number;
  upNodes: number;
  /** Up nodes held by no job, after this pass's starts. */
  idleNodes: number;
  running: readonly JobState[];
  /** Jobs still pending after the batch pass, in queue order. */
  waiting: readonly PendingJob[];
  config: ErsConfig;
  limits?: AdminLimits;
  /** The batch pass's reservation for the first waiting job, and the nodes it leaves over. */
  batchReservation?: Reservation;
  batchExtra?: number;
}

export interface RangeView extends RangeEntry {
  jobId: number;
  nodes: number;
}

export interface ElasticPlan {
  resizes: Resize[];
  /** Waiting jobs the resizes make room for (rule 1). */
  reservations: Reservation[];
  /** The resource range vector this pass worked from. */
  ranges: RangeView[];
  notes: Note[];
}

interface Candidate {
  job: JobState;
  config: ErsConfig;
  phase: SpmdPhase;
  range: RangeEntry;
  remaining: number;
  target: number;
  rule?: Resize["rule"];
  reason?: string;
}

/** When a running job is expected to end (epoch ms): its own estimate, else start + time limit. */
export function expectedEnd(job: JobState): number {
  return job.expectedEnd ?? job.startTime + job.timeLimit * 1000;
}

/** Seconds a job still needs at its current size. */
export function remainingTime(job: JobState, now: number): number {
  if (job.remaining !== undefined) return Math.max(0, job.remaining);
  return Math.max(0, (expectedEnd(job) - now) / 1000);
}

function adaptCost(job: JobState, config: ErsConfig): number {
  return job.adaptCost ?? config.defaultAdaptCost;
}

export function planElastic(input: ElasticInput): ElasticPlan {
  const { now, config } = input;
  const notes: Note[] = [];
  const candidates: Candidate[] = [];
  const clampNotes = new Set<Note>();
  let incoming = 0;

  // Steps 1-3: candidates, their model and range.
  for (const job of input.running) {
    if (job.adapting) {
      if (job.resizingTo !== undefined && job.resizingTo < job.nodes) incoming += job.nodes - job.resizingTo;
      continue;
    }
    if (!job.elastic || job.minNodes >= job.maxNodes || job.atResizePoint === false) continue;
    const { config: cfg, clamped } = jobConfig(config, job.overrides, input.limits);
    for (const text of clamped) {
      const n = { jobId: job.id, text };
      clampNotes.add(n);
      notes.push(n);
    }
    if (job.lastAdaptEnd !== undefined && now < job.lastAdaptEnd + cfg.settle * 1000) {
      notes.push({ jobId: job.id, text: `settling: adapted ${fmtSec((now - job.lastAdaptEnd) / 1000)} ago, settle time ${cfg.settle} s` });
      continue;
    }
    const phase = spmdPhase(job.samples, now, cfg.window);
    if (!phase || phase.count < cfg.minSamples) {
      notes.push({ jobId: job.id, text: `no model yet: ${phase?.count ?? 0} of ${cfg.minSamples} MTCT samples since the last adaptation` });
      continue;
    }
    const range = resourceRange(job, phase, cfg.upper, cfg.lower);
    if (range.kind === "unsteady") {
      notes.push({ jobId: job.id, text: range.why });
      continue;
    }
    const c: Candidate = { job, config: cfg, phase, range, remaining: remainingTime(job, now), target: job.nodes };
    if (range.kind === "shrink" && range.hi < job.nodes) {
      c.target = range.hi;
      c.rule = "shrink";
      c.reason = `${range.why}: ${job.nodes} -> ${range.hi} (range ${range.lo}-${range.hi}, min ${job.minNodes})`;
    }
    candidates.push(c);
  }

  const reservations: Reservation[] = [];
  let idle = input.idleNodes;
  let waitingUnserved = false;

  // Rule 1: make room for the first waiting jobs by shrinking and time-balancing running ones.
  const give = (c: Candidate) => c.job.nodes - c.range.lo;
  let spare = 0;
  for (const c of candidates) spare += give(c);
  const admitted: PendingJob[] = [];
  let needAll = 0;
  for (const w of input.waiting) {
    if (w.minNodes > input.upNodes) continue;
    if (admitted.length >= config.admitDepth) break;
    if (admitted.length === 0 && input.batchReservation?.jobId === w.id && input.batchReservation.start <= now + config.defaultAdaptCost * 1000) break;
    if (needAll + w.minNodes > idle + incoming + spare) break;
    needAll += w.minNodes;
    admitted.push(w);
  }
  if (input.waiting.length > 0 && admitted.length === 0) waitingUnserved = true;
  if (admitted.length > 0) {
    const need = needAll - idle - incoming;
    const set: Candidate[] = [];
    if (need > 0) {
      // Mandatory shrinks first (they shrink anyway), then the jobs nearest their end: a shrink
      // delays them least and their nodes come back soonest.
      const order = [...candidates].sort((a, b) => Number(b.rule === "shrink") - Number(a.rule === "shrink") || a.remaining - b.remaining || a.job.id - b.job.id);
      let got = 0;
      for (const c of order) {
        if (got >= need) break;
        if (give(c) <= 0) continue;
        set.push(c);
        got += give(c);
      }
      let held = 0;
      for (const c of set) held += c.job.nodes;
      const total = held - need;
      // No member grows here: a grow needs idle nodes now, and those are going to the waiting jobs.
      const top = (c: Candidate) => Math.min(c.range.hi, c.job.nodes);
      const bal = timeBalance(
        set.map((c) => ({ nodes: c.job.nodes, remaining: c.remaining, lo: c.range.lo, hi: top(c) })),
        total,
      );
      // Floors leave a few nodes over: they stay with the set (longest remaining first, up to hi).
      const fill = resourceFill(
        set.map((c, i) => ({ id: c.job.id, nodes: bal.sizes[i]!, hi: top(c), remaining: c.remaining })),
        bal.remainder,
      );
      const ids = admitted.map((w) => w.id).join(", ");
      set.forEach((c, i) => {
        const to = fill.grants.get(c.job.id) ?? bal.sizes[i]!;
        c.target = to;
        c.rule = "balance";
        c.reason =
          `rule 1 (time balancing): job${admitted.length > 1 ? "s" : ""} ${ids} wait${admitted.length > 1 ? "" : "s"} for ${need} more nodes; ` +
          `${set.length} job(s) balanced to finish in ~${fmtSec(bal.finish)}; ${c.job.nodes} -> ${to} ` +
          `(range ${c.range.lo}-${c.range.hi}, MTCT avg ${fmt(c.phase.average)} trend ${fmt(c.phase.trend)})`;
      });
    }
    let ready = now;
    for (const c of set) if (c.target !== c.job.nodes) ready = Math.max(ready, now + adaptCost(c.job, c.config) * 1000);
    const from = set.filter((c) => c.target < c.job.nodes).map((c) => c.job.id);
    for (const w of admitted) {
      reservations.push({
        jobId: w.id,
        start: ready,
        nodes: w.minNodes,
        fromJobs: from,
        reason: from.length > 0 ? `rule 1: ${idle} idle node(s) plus nodes freed by job(s) ${from.join(", ")}` : `rule 1: nodes freed by adaptations under way`,
      });
    }
    idle = Math.max(0, idle - Math.max(0, needAll - incoming));
  }

  // EASY's promise holds for elastic decisions too: a mandatory shrink must not push a job that
  // frees its nodes for the first waiting job's reservation past that reservation's start.
  let extra = Math.max(0, input.batchExtra ?? 0);
  const res = waitingUnserved && input.batchReservation && Number.isFinite(input.batchReservation.start) ? input.batchReservation : undefined;
  const endAt = (c: Candidate, m: number) => now + (adaptCost(c.job, c.config) + c.remaining * timeRatio(c.job.nodes, m, Math.max(c.phase.average, c.phase.trend))) * 1000;
  if (res) {
    for (const c of candidates) {
      if (c.rule !== "shrink") continue;
      if (expectedEnd(c.job) > res.start) continue;
      if (endAt(c, c.target) <= res.start) continue;
      if (c.target <= extra) {
        extra -= c.target;
        continue;
      }
      const m = smallestEndingBy((k) => endAt(c, k), c.target + 1, c.job.nodes - 1, res.start);
      if (m !== undefined) {
        c.reason = `${c.reason}; only to ${m} so that job ${res.jobId}'s reservation is not delayed`;
        c.target = m;
      } else {
        notes.push({ jobId: c.job.id, text: `${c.range.why}, but a shrink would delay job ${res.jobId}'s reservation: kept at ${c.job.nodes}` });
        c.target = c.job.nodes;
        c.rule = undefined;
      }
    }
  }

  // Rule 1, backfilling form: the first waiting job cannot be served, but a later one may start on
  // nodes running jobs give up, if it would be backfilled anyway (ends before the reservation or
  // fits in what the reservation leaves over) and no job counted for the reservation is pushed
  // past its start by the shrink.
  if (res && config.admitDepth > 0) {
    const give = new Map<number, number>();
    let pool = 0;
    for (const c of candidates) {
      if (c.target <= c.range.lo) continue;
      let m = c.range.lo;
      if (expectedEnd(c.job) <= res.start) {
        const inTime = smallestEndingBy((k) => endAt(c, k), c.range.lo, c.target, res.start);
        if (inTime === undefined) continue;
        m = inTime;
      }
      if (c.target - m > 0) {
        give.set(c.job.id, c.target - m);
        pool += c.target - m;
      }
    }
    const donors = candidates.filter((c) => give.has(c.job.id)).sort((a, b) => a.remaining - b.remaining || a.job.id - b.job.id);
    let idleLeft = idle;
    let admittedB = 0;
    for (const w of input.waiting) {
      if (w.id === res.jobId || w.minNodes > input.upNodes) continue;
      if (admittedB >= config.admitDepth || pool <= 0) break;
      let ready = now + config.defaultAdaptCost * 1000;
      const inTime = ready + scaledLimit(w, w.minNodes) * 1000 <= res.start;
      if (!inTime && w.minNodes > extra) continue;
      const need = w.minNodes - Math.min(idleLeft, w.minNodes);
      if (need <= 0 || need > pool) continue;
      let got = 0;
      const from: number[] = [];
      for (const c of donors) {
        if (got >= need) break;
        const g = Math.min(give.get(c.job.id)!, need - got);
        if (g <= 0) continue;
        give.set(c.job.id, give.get(c.job.id)! - g);
        got += g;
        pool -= g;
        c.target -= g;
        c.rule = "balance";
        c.reason = `rule 1 (backfilling): job ${w.id} would backfill but lacks ${need} node(s); ${c.job.nodes} -> ${c.target} still ends before job ${res.jobId}'s reservation (range ${c.range.lo}-${c.range.hi}, MTCT avg ${fmt(c.phase.average)} trend ${fmt(c.phase.trend)})`;
        ready = Math.max(ready, now + adaptCost(c.job, c.config) * 1000);
        from.push(c.job.id);
      }
      idleLeft -= w.minNodes - need;
      if (!inTime) extra -= w.minNodes;
      admittedB++;
      reservations.push({ jobId: w.id, start: ready, nodes: w.minNodes, fromJobs: from, reason: `rule 1 (backfilling): nodes freed by job(s) ${from.join(", ")}` });
    }
    idle = idleLeft;
  }

  // Rule 2b: resource filling of what is still idle. While a job waits that rule 1 could not
  // serve, only nodes its batch reservation leaves over may be lent, and only for as long as
  // the reservation is away.
  let fillable = idle;
  let horizonEnd = Number.POSITIVE_INFINITY;
  if (waitingUnserved) {
    fillable = Math.min(idle, Math.max(0, input.batchExtra ?? 0));
    if (input.batchReservation) horizonEnd = input.batchReservation.start;
  }
  if (fillable > 0) {
    const growers = candidates.filter((c) => c.range.kind === "grow" && c.rule === undefined && c.range.hi > c.job.nodes);
    const byId = new Map(growers.map((c) => [c.job.id, c]));
    const fill = resourceFill(
      growers.map((c) => ({ id: c.job.id, nodes: c.job.nodes, hi: c.range.hi, remaining: c.remaining })),
      fillable,
      (j, to) => {
        const c = byId.get(j.id)!;
        if (!c.config.payoff) return undefined;
        const horizon = Math.min(c.remaining, (horizonEnd - now) / 1000);
        const p = payoff({ from: j.nodes, to, remaining: horizon, mtct: Math.max(c.phase.average, c.phase.trend), cost: adaptCost(c.job, c.config) });
        if (p.pays) {
          c.reason = `gain ${fmtSec(p.gain)} > cost ${fmtSec(p.cost)}`;
          return undefined;
        }
        return `payoff: growing ${j.nodes} -> ${to} would save ${fmtSec(p.gain)} over ${fmtSec(horizon)}, less than the adaptation cost ${fmtSec(p.cost)}`;
      },
    );
    for (const [id, text] of fill.refused) notes.push({ jobId: id, text });
    for (const [id, to] of fill.grants) {
      const c = byId.get(id)!;
      const gain = c.reason ? `; ${c.reason}` : "";
      c.target = to;
      c.rule = "fill";
      c.reason = `rule 2 (resource filling): ${fillable} idle node(s); ${c.range.why}: ${c.job.nodes} -> ${to} (range ${c.range.lo}-${c.range.hi})${gain}`;
    }
  }

  const resizes: Resize[] = [];
  // Clamped settings are worth a note but do not say why a job keeps its size.
  const noted = new Set(notes.filter((n) => !clampNotes.has(n)).map((n) => n.jobId));
  for (const c of candidates) {
    if (c.target !== c.job.nodes && c.rule) resizes.push({ jobId: c.job.id, from: c.job.nodes, to: c.target, rule: c.rule, reason: c.reason ?? "" });
    else if (!noted.has(c.job.id)) notes.push({ jobId: c.job.id, text: keptBecause(c, fillable) });
  }
  const ranges = candidates.map((c) => ({ jobId: c.job.id, nodes: c.job.nodes, ...c.range }));
  return { resizes, reservations, ranges, notes };
}

/**
 * The smallest size in [lo, hi] at which a job ends by `deadline`, or undefined if none does.
 * Bisection: a job's end time falls as its size grows (timeRatio).
 */
function smallestEndingBy(endAt: (size: number) => number, lo: number, hi: number, deadline: number): number | undefined {
  if (lo > hi || endAt(hi) > deadline) return undefined;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (endAt(mid) <= deadline) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Why a candidate keeps its size, for the job's events. */
function keptBecause(c: Candidate, fillable: number): string {
  if (c.range.kind === "shrink") return `kept at ${c.job.nodes}: ${c.range.why}, but already at its minimum`;
  if (c.range.kind !== "grow") return `kept at ${c.job.nodes}: ${c.range.why}`;
  if (c.range.hi <= c.job.nodes) return `kept at ${c.job.nodes}: ${c.range.why}, but already at its maximum`;
  return `kept at ${c.job.nodes}: ${c.range.why}, but ${fillable === 0 ? "no idle node may be lent" : "the idle nodes went to jobs with more time left"}`;
}

export function fmtSec(s: number): string {
  if (!Number.isFinite(s)) return "never";
  if (s < 120) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  if (s < 7200) return `${(s / 60).toFixed(0)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
