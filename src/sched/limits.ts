/**
 * Time limits that follow a job's size. The user's limit bounds the job at the size it started
 * at; when the job is resized, what is left of its limit is scaled by the predicted change of its
 * speed, and the adaptation's own duration is added (the job makes no progress meanwhile):
 *
 *   limit' = elapsed + (limit - elapsed) * ratio + adaptation seconds
 *
 * The ratio T(m)/T(n) comes from what the job measured at those sizes (its per-size iteration
 * times, ReSHAPE's profile: both sizes measured, else a + c/p through two of them), else from the
 * runtime model it declared, else from the bound that
 * holds for every job whose efficiency does not drop as it shrinks: a shrink from n to m slows it
 * by at most n/m. It is clamped to that bound both ways: a shrink never buys more node-seconds than
 * the user asked for, a grow never cuts the limit by more than perfect speedup would. A grow
 * without a measured or declared model keeps the limit; no grow lengthens it (so a reservation
 * that counts on the job's end stays good) or cuts it below the limit the user asked for.
 *
 * A resize the job's user asks for (not an admin, not the scheduler) may lower the limit, never
 * raise it: its shrink keeps the limit as it is (`keptLimit`), or a user could buy hours by
 * shrinking their own job, unless the controller's config says `userResizeScalesLimit`.
 *
 * `shrinkKills` is the scheduler's side: a shrink whose predicted slowdown (the measured or declared
 * model, else the policies' reading of the job, `speedOf`) is more than its limit is scaled by (a
 * job that runs superlinearly, e.g. from cache effects, would need more node-seconds than it asked
 * for) would turn a job that ends in time into a TIMEOUT; `guardLimits` drops such shrinks from any
 * policy's plan, with a note.
 * Pure.
 */
import { runtime } from "../model/amdahl.ts";
import type { ErsConfig } from "./config.ts";
import { remainingTime } from "./elastic.ts";
import { profileModel, speedOf } from "./worth.ts";
import { jobsById } from "./jobs-by-id.ts";
import type { JobState, PassInput, PassPlan } from "./types.ts";

export interface LimitRatio {
  /** T(to) / T(from), what the rest of the limit is multiplied by. */
  ratio: number;
  /** Where it comes from, for people. */
  source: string;
  /** The measured or declared model's own T(to) / T(from), before the clamp (absent without one). */
  predicted?: number;
}

/** The ratio a resize of `job` from its size to `to` nodes applies to what is left of its limit. */
export function limitRatio(job: Pick<JobState, "nodes" | "profile" | "model">, to: number): LimitRatio {
  const n = job.nodes;
  const linear = n / to;
  let predicted: number | undefined;
  let source = "";
  const at = (p: number) => job.profile?.findLast((q) => q.nodes === p && q.iterTime > 0)?.iterTime;
  const here = at(n);
  const there = at(to);
  const fit = profileModel(job.profile ?? []);
  if (here !== undefined && there !== undefined) {
    predicted = there / here;
    source = `measured iteration times at ${n} and ${to} nodes`;
  } else if (fit && runtime(fit, n) > 0) {
    predicted = runtime(fit, to) / runtime(fit, n);
    source = `measured iteration times at ${fit.sizes}`;
  } else if (job.model && runtime(job.model, n) > 0) {
    predicted = runtime(job.model, to) / runtime(job.model, n);
    source = "declared runtime model";
  }
  if (predicted === undefined || !Number.isFinite(predicted)) {
    return to < n ? { ratio: linear, source: `no measured model: at most ${n}/${to} slower` } : { ratio: 1, source: "no measured model: unchanged" };
  }
  if (to < n) {
    const ratio = Math.min(linear, Math.max(1, predicted));
    return { ratio, source: predicted > linear ? `${source}, capped at ${n}/${to}` : source, predicted };
  }
  return { ratio: Math.max(linear, Math.min(1, predicted)), source, predicted };
}

/**
 * The source of a kept limit's ratio: stored with the adaptation, it tells the commit (after a
 * restart too) that the limit may not rise, not even by the adaptation's duration.
 */
export const KEPT_LIMIT = "its user's own shrink: the limit stays (userResizeScalesLimit is off)";

/** The ratio of a resize the job's user asked for: a shrink keeps the limit, a grow is as the scheduler's (it never raises it). */
export function keptLimit(job: Pick<JobState, "nodes" | "profile" | "model">, to: number): LimitRatio {
  return to < job.nodes ? { ratio: 1, source: KEPT_LIMIT } : limitRatio(job, to);
}

export interface Rescale {
  /** When the job started (epoch ms). */
  startTime: number;
  /** Its limit now (s from its start). */
  limit: number;
  /** The limit the user asked for (s): no grow goes below it. */
  original: number;
  /** When the new size takes effect (epoch ms). */
  at: number;
  ratio: number;
  /** A grow (more nodes): the limit may only come down. */
  grow: boolean;
  /** Seconds the adaptation itself took (no progress meanwhile). */
  adaptation?: number;
  /** False: the limit may not rise (a kept limit, `keptLimit`). */
  rise?: boolean;
}

/**
 * The new limit in whole seconds (rounded up). A shrink only lengthens it; a grow only shortens it
 * (its adaptation is paid from what it gains: a reservation that counts on the job's end by its
 * limit stays good), and never below the limit the user asked for.
 */
export function rescaleLimit(r: Rescale): number {
  const elapsed = Math.max(0, (r.at - r.startTime) / 1000);
  const left = Math.max(0, r.limit - elapsed);
  const next = Math.ceil(elapsed + left * r.ratio + Math.max(0, r.adaptation ?? 0) - 1e-9);
  if (r.grow) return Math.min(r.limit, Math.max(next, r.original));
  return r.rise === false ? r.limit : Math.max(next, r.limit);
}

/**
 * How far a measured slowdown may exceed the limit's ratio and still count as the same: iteration
 * times taken a few windows apart on a shared machine differ by a few percent, and a job whose end
 * is known only by its limit (every live job) sits exactly at it, so an efficient job measured
 * 1 % worse than linear would otherwise never be shrunk (ebb.test's give-back, refused at
 * "predicted 889 s left ... would leave 889 s").
 */
const MEASUREMENT_NOISE = 0.05;

/**
 * Why shrinking `job` to `to` nodes would make its limit kill it, or undefined if it would not: it
 * is predicted to end within its limit at its size, and not at `to` with the rescaled limit.
 */
export function shrinkKills(job: JobState, to: number, now: number, config: ErsConfig): string | undefined {
  if (to >= job.nodes) return undefined;
  const remaining = remainingTime(job, now);
  const left = (job.startTime + job.timeLimit * 1000 - now) / 1000;
  if (remaining > left + 1e-6) return undefined;
  const lim = limitRatio(job, to);
  const speed = lim.predicted === undefined ? speedOf(job, now, config) : undefined;
  const slower = lim.predicted ?? speed?.ratio(to) ?? job.nodes / to;
  if (remaining * slower <= left * lim.ratio * (1 + MEASUREMENT_NOISE) + 1e-6) return undefined;
  const from = lim.predicted === undefined ? (speed?.source ?? "linear") : lim.source;
  return `shrink ${job.nodes} -> ${to} refused: predicted ${(remaining * slower).toFixed(0)} s left at ${to} nodes (${from}) but its limit would leave ${(left * lim.ratio).toFixed(0)} s`;
}

/** The plan without the shrinks that would make a job's limit kill it; each dropped one is a note. */
export function guardLimits(input: PassInput, plan: PassPlan): PassPlan {
  if (plan.resizes.every((r) => r.to >= r.from)) return plan;
  const byId = jobsById(input.running, plan.resizes.filter((r) => r.to < r.from).map((r) => r.jobId));
  const resizes = [];
  const notes = [...plan.notes];
  for (const r of plan.resizes) {
    const job = byId.get(r.jobId);
    const why = job && r.to < r.from ? shrinkKills(job, r.to, input.now, input.config) : undefined;
    if (why) notes.push({ jobId: r.jobId, text: why });
    else resizes.push(r);
  }
  return resizes.length === plan.resizes.length ? plan : { ...plan, resizes, notes };
}
