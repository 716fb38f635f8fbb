/**
 * Scheduler settings: the controller's defaults, per-job overrides and the admin limits that bound
 * them. Defaults are the dissertation's (§10.3.2: thresholds 0.1 / 0.01) and the (60 s).
 */
import { z } from "zod";
import type { JobOverrides } from "../domain/job-options.ts";

export const POLICIES = ["fcfs", "easy", "ebb", "ers", "reshape", "apm-equi", "apm-maxs", "drms-rs"] as const;
export type PolicyName = (typeof POLICIES)[number];

export function isPolicy(name: string): name is PolicyName {
  return (POLICIES as readonly string[]).includes(name);
}

export interface ErsConfig {
  policy: PolicyName;
  /** Seconds between the passes whose plan may resize jobs (live), and between the simulator's periodic passes. */
  interval: number;
  /** MTCT above this: halve the job (mandatory). */
  upper: number;
  /** Both MTCT values below this: the job may double (optional). */
  lower: number;
  /** Seconds of samples the recent trend is taken over. */
  window: number;
  /** Samples needed since the last adaptation before a job is a candidate. */
  minSamples: number;
  /** Seconds after an adaptation commits before the job may adapt again. */
  settle: number;
  /** Grow only if the predicted gain over the remaining time exceeds the adaptation cost (DRMS). */
  payoff: boolean;
  /** Seconds assumed for an adaptation of a job that never adapted before. */
  defaultAdaptCost: number;
  /** At most this many waiting jobs are admitted by shrinking (rule 1) in one pass. */
  admitDepth: number;
}

export const DEFAULT_CONFIG: Readonly<ErsConfig> = Object.freeze({
  policy: "ebb",
  interval: 60,
  upper: 0.1,
  lower: 0.01,
  window: 300,
  minSamples: 3,
  settle: 120,
  payoff: true,
  defaultAdaptCost: 10,
  admitDepth: 16,
});

/** Every scheduler setting, each checked on its own. */
export const ersSettings = z.strictObject({
  policy: z.enum(POLICIES),
  interval: z.number().positive(),
  upper: z.number().positive(),
  lower: z.number().nonnegative(),
  window: z.number().positive(),
  minSamples: z.number().int().min(1),
  settle: z.number().nonnegative(),
  payoff: z.boolean(),
  defaultAdaptCost: z.number().nonnegative(),
  admitDepth: z.number().int().min(0),
});

const thresholdsInOrder = (c: { lower?: number; upper?: number }) => c.lower === undefined || c.upper === undefined || c.lower < c.upper;
const thresholdsMessage = { message: "lower threshold must be below the upper one", path: ["lower"] };

export const ersConfigSchema = ersSettings.refine(thresholdsInOrder, thresholdsMessage);
/** Some of the settings (a config file's), the thresholds in order if both are given. */
export const ersPartialSchema = ersSettings.partial().refine(thresholdsInOrder, thresholdsMessage);

/** Defaults overlaid with `partial`, validated; throws a ZodError naming the bad field. */
export function resolveConfig(partial: Partial<ErsConfig> = {}): ErsConfig {
  return ersConfigSchema.parse({ ...DEFAULT_CONFIG, ...partial });
}

/** What a job may set for itself: defined in domain/, where the store reads it too. */
export type { JobOverrides };

type Range = readonly [number, number];

/** Inclusive bounds an admin allows jobs to pick within; a missing bound means "the default only". */
export interface AdminLimits {
  upper?: Range;
  lower?: Range;
  window?: Range;
  minSamples?: Range;
  settle?: Range;
  /** May a job turn the payoff rule off? */
  payoffOptional?: boolean;
}

export interface JobConfig {
  config: ErsConfig;
  /** One line per override that was clamped or refused, for the job's events. */
  clamped: string[];
}

/**
 * What jobs may pick unless the controller's config says otherwise (per key): a job's settings
 * only decide when it is itself resized, within bounds that keep it from thrashing or hoarding.
 */
export const DEFAULT_LIMITS: Readonly<AdminLimits> = Object.freeze<AdminLimits>({
  upper: [0.02, 1],
  lower: [0, 0.05],
  window: [10, 3600],
  minSamples: [1, 100],
  settle: [10, 86_400],
  payoffOptional: true,
});

/** The config a job runs under: its overrides, clamped to the admin limits. */
export function jobConfig(base: ErsConfig, overrides: JobOverrides | undefined, limits: AdminLimits = {}): JobConfig {
  if (!overrides) return { config: base, clamped: [] };
  const config = { ...base };
  const clamped: string[] = [];
  const numeric = ["upper", "lower", "window", "minSamples", "settle"] as const;
  for (const key of numeric) {
    const want = overrides[key];
    if (want === undefined) continue;
    const range = limits[key];
    if (!range) {
      clamped.push(`${key} ${want} refused: not overridable (using ${base[key]})`);
      continue;
    }
    const v = Math.min(range[1], Math.max(range[0], want));
    if (v !== want) clamped.push(`${key} ${want} clamped to ${v} (allowed ${range[0]}-${range[1]})`);
    config[key] = v;
  }
  if (overrides.payoff !== undefined && overrides.payoff !== base.payoff) {
    if (limits.payoffOptional) config.payoff = overrides.payoff;
    else clamped.push(`payoff ${overrides.payoff} refused: not overridable`);
  }
  if (config.lower >= config.upper) {
    clamped.push(`thresholds ${config.lower}/${config.upper} inverted: using ${base.lower}/${base.upper}`);
    config.lower = base.lower;
    config.upper = base.upper;
  }
  return { config, clamped };
}
