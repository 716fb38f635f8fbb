/**
 * What a running job's nodes are worth: its speed at another size, predicted from what it
 * measured, with a declared model as the prior.
 * - MTCT samples since its last adaptation (at least `minSamples`): Amdahl with the MPI time as the
 *   serial part (`timeRatio`);
 * - else its per-size iteration times (ReSHAPE's profile) at two sizes: T(p) = a + c/p through
 *   the last two sizes it ran at;
 * - else the runtime model it declared;
 * - else nothing: the job is treated as rigid.
 * Pure.
 */
import { runtime, type RuntimeModel } from "../model/amdahl.ts";
import { timeRatio } from "../model/scaling.ts";
import { spmdPhase } from "../model/spmd.ts";
import type { ErsConfig } from "./config.ts";
import { remainingTime } from "./elastic.ts";
import type { JobState, ProfilePoint } from "./types.ts";

export interface Speed {
  /** T(m) / T(current size): how much longer (> 1) or shorter its remaining work takes at m nodes. */
  ratio(m: number): number;
  /** Where the prediction comes from, for people. */
  source: string;
  /** Its time never drops as nodes do (T(m) >= T(m') for m < m'): Amdahl by MTCT, a profile's fit. */
  slowerWhenSmaller?: boolean;
}

export function speedOf(job: JobState, now: number, config: ErsConfig): Speed | undefined {
  const n = job.nodes;
  const phase = job.mtct ?? spmdPhase(job.samples, now, config.window);
  if (phase && phase.count >= config.minSamples && Number.isFinite(phase.average)) {
    return new MtctSpeed(n, phase.average, phase.count);
  }
  const fit = profileModel(job.profile ?? []);
  if (fit) {
    const at = runtime(fit, n);
    // a >= 0, c > 0, no b: T(p) = a + c/p falls as p grows.
    if (at > 0) return { ratio: (m) => runtime(fit, m) / at, source: `iteration times at ${fit.sizes}`, slowerWhenSmaller: true };
  }
  if (job.model) {
    const model = job.model;
    const at = runtime(model, n);
    if (at > 0 && Number.isFinite(at)) return { ratio: (m) => Math.max(1e-9, runtime(model, m)) / at, source: "declared runtime model" };
  }
  return undefined;
}

/**
 * Amdahl by the MTCT `k` measured at n nodes. A class, not an object with a getter: a pass prices
 * every running job, and an object literal with an accessor is slow to build. The source is text
 * for a reason, written only when a decision is: a pass prices many jobs and decides few.
 */
class MtctSpeed implements Speed {
  readonly slowerWhenSmaller = true;
  constructor(
    private readonly n: number,
    private readonly k: number,
    private readonly count: number,
  ) {}

  ratio(m: number): number {
    return timeRatio(this.n, m, this.k);
  }

  get source(): string {
    return `MTCT ${this.k.toFixed(3)} at ${this.n} nodes (${this.count} samples)`;
  }
}

type ProfileFit = (RuntimeModel & { sizes: string }) | undefined;

/** The last fit of a profile array, with what it read: its length and newest point (a replay updates the newest point's time in place). */
const fits = new WeakMap<readonly ProfilePoint[], { length: number; nodes: number; iterTime: number; fit: ProfileFit }>();

/**
 * T(p) = a + c/p through the newest point and the newest one at another size; undefined if it does
 * not scale. Kept per profile array while its length and newest point stay (a pass reads every
 * running job's; only the newest point of a profile changes in place, as more is measured at its size).
 */
export function profileModel(profile: readonly ProfilePoint[]): ProfileFit {
  const last = profile[profile.length - 1];
  if (!last) return undefined;
  const known = fits.get(profile);
  if (known && known.length === profile.length && known.nodes === last.nodes && known.iterTime === last.iterTime) return known.fit;
  const fit = fitProfile(profile, last);
  fits.set(profile, { length: profile.length, nodes: last.nodes, iterTime: last.iterTime, fit });
  return fit;
}

function fitProfile(profile: readonly ProfilePoint[], last: ProfilePoint): ProfileFit {
  let other: ProfilePoint | undefined;
  for (let i = profile.length - 2; i >= 0; i--) {
    if (profile[i]!.nodes !== last.nodes) {
      other = profile[i];
      break;
    }
  }
  if (!other || !(last.iterTime > 0) || !(other.iterTime > 0)) return undefined;
  const c = (last.iterTime - other.iterTime) / (1 / last.nodes - 1 / other.nodes);
  if (!(c > 0) || !Number.isFinite(c)) return undefined;
  const a = Math.max(0, last.iterTime - c / last.nodes);
  return { a, b: 0, c, sizes: `${other.nodes} and ${last.nodes} nodes` };
}

/** Seconds the job's remaining work takes at m nodes, by its speed. */
export function remainingAt(job: JobState, now: number, speed: Speed, m: number): number {
  return remainingTime(job, now) * (m === job.nodes ? 1 : speed.ratio(m));
}

/** Seconds an adaptation of this job by `moved` nodes is expected to cost: its cost model, else what it measured, else the default. */
export function adaptationCost(job: JobState, config: ErsConfig, moved: number): number {
  if (job.adaptCostModel) return job.adaptCostModel.fixed + job.adaptCostModel.perNode * Math.abs(moved);
  return job.adaptCost ?? config.defaultAdaptCost;
}
