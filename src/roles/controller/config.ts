/**
 * The controller's configuration file (`ebb controller --config FILE`, JSON): scheduler settings,
 * the limits within which jobs may set their own, and daemon timings. Flags override it.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { SAMPLE_INTERVAL } from "../../proto/elastic-settings.ts";
import { ersPartialSchema, type AdminLimits, type ErsConfig } from "../../sched/config.ts";
import { describeIssues } from "../../util/zod.ts";
import { MAX_ARRAY_TASKS } from "../../domain/array.ts";
import { MAX_JOB_COUNT } from "../../sched/quota.ts";
import { PRIVATE_DATA } from "../../domain/scope.ts";
import { Memory } from "../../proto/requests.ts";
import { partitionsSchema, userLimitsSchema } from "../../sched/partitions.ts";
import { priorityConfigSchema } from "../../sched/priority.ts";

const range = z.tuple([z.number().nonnegative(), z.number().nonnegative()]).refine((r) => r[0] <= r[1], "a range is [low, high]");

/** Seconds an adaptation may take: the bounds of the config file and the --adapt-timeout flag. */
export const ADAPT_TIMEOUT = { min: 1, max: 7 * 86_400 } as const;

/** Seconds the controller waits past an adaptation's deadline for its launcher's report: the bounds of the config file and the --adapt-report-grace flag. */
export const ADAPT_REPORT_GRACE = { min: 1, max: 3600 } as const;

/** Seconds between an agent's heartbeats: the bounds of the config file and the --heartbeat flag. */
export const HEARTBEAT = { min: 0.05, max: 3600 } as const;

export const ControllerConfig = z.strictObject({
  scheduler: ersPartialSchema.optional(),
  /** Bounds for what jobs may set for themselves (submit field `elasticSettings`), per key over sched/config DEFAULT_LIMITS; [x, x] pins a setting. */
  limits: z
    .strictObject({ upper: range, lower: range, window: range, minSamples: range, settle: range, payoffOptional: z.boolean() })
    .partial()
    .optional(),
  heartbeat: z.number().min(HEARTBEAT.min).max(HEARTBEAT.max).optional(),
  defaultTime: z.int().positive().optional(),
  killWait: z.number().nonnegative().optional(),
  sampleInterval: z.number().min(SAMPLE_INTERVAL.min).max(SAMPLE_INTERVAL.max).optional(),
  /** Seconds an adaptation may take before it fails (default 600). */
  adaptTimeout: z.number().min(ADAPT_TIMEOUT.min).max(ADAPT_TIMEOUT.max).optional(),
  /** Seconds past an adaptation's deadline the controller waits for its launcher's report before it fails it itself (default 10). */
  adaptReportGrace: z.number().min(ADAPT_REPORT_GRACE.min).max(ADAPT_REPORT_GRACE.max).optional(),
  /** The most tasks one job array may have (default 1001). */
  maxArrayTasks: z.int().min(1).max(MAX_ARRAY_TASKS).optional(),
  /** The most jobs pending or running, an array's tasks each (default 50,000); one user at most half. */
  maxJobCount: z.int().min(2).max(MAX_JOB_COUNT).optional(),
  /** Seconds finished jobs are kept for `ebb history` (default 30 days). */
  keepHistory: z.number().positive().optional(),
  /** The cluster's name, as jobs read it in SLURM_CLUSTER_NAME (default "ebb"). */
  clusterName: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/, "a cluster name is 1 to 40 letters, digits, '_' and '-'").optional(),
  /** What other users may not see, as Slurm's PrivateData (default: none; a job's command, files, environment and output are always its user's). */
  privateData: z.array(z.enum(PRIVATE_DATA)).max(PRIVATE_DATA.length).optional(),
  /** A user's own shrink rescales the job's time limit as the scheduler's do (default false: it never raises it). */
  userResizeScalesLimit: z.boolean().optional(),
  /** Memory per core of jobs that ask for none: MiB, or a size such as "2G" (default: each node's memory / cores). */
  defMemPerCpu: Memory.optional(),
  /** Queue order: multifactor priority (fair share, age, job size; weights, half-life, shares per user), or submit order. */
  priority: priorityConfigSchema.optional(),
  /** Named sets of nodes, each with its time limits, node limit, allowed users/groups, tier and per-user limits. */
  partitions: partitionsSchema.optional(),
  /** Each user's limits on the whole cluster: maxJobs, maxSubmitJobs, maxCpus, maxGpus, maxNodes. */
  userLimits: userLimitsSchema.optional(),
});
export type ControllerConfig = z.infer<typeof ControllerConfig> & { scheduler?: Partial<ErsConfig>; limits?: AdminLimits };

/** Reads and validates a config file; the error names the file and every bad field. */
export function readControllerConfig(path: string): ControllerConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`${path}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : `not valid JSON (${(e as Error).message})`}`);
  }
  const r = ControllerConfig.safeParse(raw);
  if (!r.success) throw new Error(`${path}: ${describeIssues(r.error)}`);
  return r.data as ControllerConfig;
}
