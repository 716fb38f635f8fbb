/**
 * Multifactor priority (Slurm's priority/multifactor): a waiting job's priority is the weighted sum
 * of its factors, each between 0 and 1 —
 * - fair share: its user's factor (fairshare.ts), by default the factor that weighs most;
 * - age: time since it was submitted over `maxAge` (capped at 1);
 * - job size: its part of the cluster's cores (or nodes), or 1 minus that with `favorSmall`;
 * and a partition's priority tier above all of them: a job of a higher tier goes first whatever its
 * priority (Slurm's PriorityTier). `submit` priority gives no job a priority: the queue is in submit
 * order, as before priorities. Pure.
 */
import { z } from "zod";
import { DEFAULT_TRES_WEIGHTS, fairShare, type ShareRow, type TresWeights, type UsageBook } from "./fairshare.ts";
import { queueOrder } from "./batch.ts";
import type { PendingJob } from "./types.ts";

export interface PriorityConfig {
  /** `multifactor` (default live) or `submit` (submit order). */
  type: "multifactor" | "submit";
  weights: { fairshare: number; age: number; jobSize: number };
  /** Seconds of waiting at which the age factor reaches 1 (Slurm's PriorityMaxAge, default 7 days). */
  maxAge: number;
  /** Seconds in which usage loses half its weight (Slurm's PriorityDecayHalfLife, default 7 days); 0: never. */
  halfLife: number;
  /** The size factor favours small jobs (Slurm's PriorityFavorSmall). */
  favorSmall: boolean;
  tresWeights: TresWeights;
  /** Shares per user (default 1 each). */
  shares: Record<string, number>;
}

const DAY = 86_400;

export const DEFAULT_PRIORITY: Readonly<PriorityConfig> = Object.freeze({
  type: "multifactor",
  weights: Object.freeze({ fairshare: 10_000, age: 1_000, jobSize: 0 }),
  maxAge: 7 * DAY,
  halfLife: 7 * DAY,
  favorSmall: false,
  tresWeights: DEFAULT_TRES_WEIGHTS,
  shares: Object.freeze({}) as Record<string, number>,
}) as PriorityConfig;

const weight = z.number().min(0).max(1e9);
/** The controller config file's `priority` section: every field optional, over DEFAULT_PRIORITY. */
export const priorityConfigSchema = z.strictObject({
  type: z.enum(["multifactor", "submit"]).optional(),
  weights: z.strictObject({ fairshare: weight, age: weight, jobSize: weight }).partial().optional(),
  maxAge: z.number().positive().max(365 * DAY).optional(),
  halfLife: z.number().min(0).max(365 * DAY).optional(),
  favorSmall: z.boolean().optional(),
  tresWeights: z.strictObject({ cpu: weight, memGiB: weight, gpu: weight }).partial().optional(),
  shares: z.record(z.string().min(1).max(64), z.number().min(0).max(1e9)).optional(),
});

export function resolvePriority(p: z.infer<typeof priorityConfigSchema> = {}): PriorityConfig {
  return {
    type: p.type ?? DEFAULT_PRIORITY.type,
    weights: { ...DEFAULT_PRIORITY.weights, ...p.weights },
    maxAge: p.maxAge ?? DEFAULT_PRIORITY.maxAge,
    halfLife: p.halfLife ?? DEFAULT_PRIORITY.halfLife,
    favorSmall: p.favorSmall ?? DEFAULT_PRIORITY.favorSmall,
    tresWeights: { ...DEFAULT_PRIORITY.tresWeights, ...p.tresWeights },
    shares: { ...p.shares },
  };
}

/** A waiting job as priority sees it. */
export interface PriorityJob {
  id: number;
  user: string;
  /** Epoch ms. */
  submitTime: number;
  /** Its part of the cluster, 0..1 (cores asked of all cores, else nodes of all nodes). */
  size: number;
  /** Its partition's priority tier (default 0). */
  tier?: number;
}

/** Each factor weighted (what `ebb priority` shows), and their sum. */
export interface PriorityFactors {
  jobId: number;
  user: string;
  tier: number;
  priority: number;
  age: number;
  fairshare: number;
  jobSize: number;
}

/**
 * The priority of each job at `now`, with its factors; and every user's fair-share row (the users
 * of `jobs` and of the book, and those with shares in the config).
 */
export function prioritize(jobs: readonly PriorityJob[], book: UsageBook, cfg: PriorityConfig, now: number): { factors: PriorityFactors[]; users: Map<string, ShareRow> } {
  const users = fairShare(userSet(jobs, book, cfg), book, cfg.shares, now);
  const factors = jobs.map((j) => {
    const age = ageTerm(j, cfg, now);
    const fairshare = fairshareTerm(users.get(j.user), cfg);
    const jobSize = sizeTerm(j, cfg);
    return { jobId: j.id, user: j.user, tier: j.tier ?? 0, priority: age + fairshare + jobSize, age, fairshare, jobSize };
  });
  return { factors, users };
}

/**
 * Each job's priority at `now`, in the order of `jobs`: `prioritize`'s, to the last bit, without
 * an object of factors per job (a scheduling pass asks about every waiting job).
 */
export function priorityOfEach(jobs: readonly PriorityJob[], book: UsageBook, cfg: PriorityConfig, now: number): number[] {
  const users = fairShare(userSet(jobs, book, cfg), book, cfg.shares, now);
  const out: number[] = new Array(jobs.length);
  let user: string | undefined;
  let fairshare = 0;
  for (let i = 0; i < jobs.length; i++) {
    const j = jobs[i]!;
    if (j.user !== user) fairshare = fairshareTerm(users.get((user = j.user)), cfg);
    out[i] = priorityWith(j, fairshare, cfg, now);
  }
  return out;
}

/** A job's priority at `now` given its user's weighted fair-share term (`fairshareTerm`): `priorityOfEach`'s sum. */
export const priorityWith = (j: PriorityJob, fairshare: number, cfg: PriorityConfig, now: number): number => ageTerm(j, cfg, now) + fairshare + sizeTerm(j, cfg);

/** The weighted fair-share term of a user's row (1 for a user no row names). */
export const fairshareTerm = (row: ShareRow | undefined, cfg: PriorityConfig): number => cfg.weights.fairshare * (row?.factor ?? 1);

/**
 * Every user's fair-share row as `prioritize` and `priorityOfEach` count them: the config's, the
 * book's, then `jobUsers` (the users of the jobs asked about, in any order: one not in the config
 * or the book adds one share and no usage, so the order of those does not change a sum).
 */
export function shareRows(jobUsers: Iterable<string>, book: UsageBook, cfg: PriorityConfig, now: number): Map<string, ShareRow> {
  return fairShare([...Object.keys(cfg.shares), ...book.users(), ...jobUsers], book, cfg.shares, now);
}

const ageTerm = (j: PriorityJob, cfg: PriorityConfig, now: number): number => cfg.weights.age * Math.min(1, Math.max(0, now - j.submitTime) / 1000 / cfg.maxAge);
function sizeTerm(j: PriorityJob, cfg: PriorityConfig): number {
  const s = Math.min(1, Math.max(0, j.size));
  return cfg.weights.jobSize * (cfg.favorSmall ? 1 - s : s);
}

/** Users in the config's shares, in the book, and of the jobs, in that order (fairShare counts each once). */
function userSet(jobs: readonly PriorityJob[], book: UsageBook, cfg: PriorityConfig): string[] {
  const users = [...Object.keys(cfg.shares), ...book.users()];
  // A user's jobs mostly come one after another: each run of them adds its user once.
  let last: string | undefined;
  for (const j of jobs) if (j.user !== last) users.push((last = j.user));
  return users;
}

/**
 * Sets `priority` and `tier` on each pending job (by id) and returns them in queue order (tier,
 * then priority, highest first; then submit order). With `submit` priority, only tiers order them.
 */
export function applyPriorities<J extends PendingJob>(pending: readonly J[], factors: ReadonlyMap<number, Pick<PriorityFactors, "priority" | "tier">>, cfg: Pick<PriorityConfig, "type">): J[] {
  for (const j of pending) {
    const f = factors.get(j.id);
    j.priority = cfg.type === "multifactor" ? f?.priority : undefined;
    j.tier = f && f.tier !== 0 ? f.tier : undefined;
  }
  return [...pending].sort(queueOrder);
}

/**
 * A view kept from an earlier pass, with its job's priority now: the priority moves with the
 * clock and with usage from pass to pass, and a kept copy would carry an old one.
 */
export function withPriority(view: PendingJob, job: PendingJob): PendingJob {
  if (view !== job && view.priority !== job.priority) view.priority = job.priority;
  return view;
}
