/**
 * Per-user limits on running jobs (Slurm's MaxJobs and MaxTRESPerUser cpu/gres/gpu/node, on the
 * cluster and per partition) and a partition's bounds on one job (MaxNodes, MaxTime), applied to
 * the waiting jobs before a pass: in queue order, each job that would take its user over a limit,
 * counting what the user runs and the waiting jobs before it that stay in, is held back with
 * Slurm's reason; the others go to the pass. A job held back gets no reservation and delays no
 * one. Conservative: a job let through counts even if the pass then cannot start it, so no limit
 * is ever exceeded. Pure.
 */
import type { Partition, UserLimits } from "./partitions.ts";

export type LimitReason = "QOSMaxJobsPerUserLimit" | "QOSMaxCpuPerUserLimit" | "QOSMaxGRESPerUser" | "QOSMaxNodePerUserLimit" | "PartitionNodeLimit" | "PartitionTimeLimit";

export interface HeldBack {
  reason: LimitReason;
  /** For people: which limit, the usage and the job's need. */
  detail: string;
}

/** What a job holds (running) or asks for (waiting). */
export interface Amounts {
  cpus: number;
  gpus: number;
  nodes: number;
}

export interface QuotaJob extends Amounts {
  id: number;
  user: string;
  partition?: string;
  /** Seconds. */
  timeLimit: number;
  /** The fewest nodes it can run on (PartitionNodeLimit). */
  minNodes: number;
}

interface Used extends Amounts {
  jobs: number;
}

const zero = (): Used => ({ jobs: 0, cpus: 0, gpus: 0, nodes: 0 });

/**
 * The waiting jobs (in queue order) that limits hold back, with the reason. `running`: what each
 * user's running jobs hold (with their partitions).
 */
export function holdBack(pending: readonly QuotaJob[], running: readonly Omit<QuotaJob, "timeLimit" | "minNodes" | "id">[], limits: UserLimits, partitions: ReadonlyMap<string, Partition>): Map<number, HeldBack> {
  const out = new Map<number, HeldBack>();
  const anyPartitionLimits = [...partitions.values()].some((p) => hasRunLimits(p.limits) || p.maxNodes !== undefined || p.maxTime !== undefined);
  if (!hasRunLimits(limits) && !anyPartitionLimits) return out;
  const users = new Map<string, Used>();
  const inPart = new Map<string, Used>();
  const add = (m: Map<string, Used>, key: string, j: Amounts) => {
    let u = m.get(key);
    if (!u) m.set(key, (u = zero()));
    u.jobs++;
    u.cpus += j.cpus;
    u.gpus += j.gpus;
    u.nodes += j.nodes;
  };
  for (const r of running) {
    add(users, r.user, r);
    if (r.partition !== undefined) add(inPart, `${r.partition}\0${r.user}`, r);
  }
  // A user (in a partition) at MaxJobs holds back every later job of theirs for the same reason:
  // one object for all of them (a 10,000-task array is walked in every pass).
  const full = new Map<string, HeldBack>();
  for (const j of pending) {
    const p = j.partition === undefined ? undefined : partitions.get(j.partition);
    const inKey = p && `${p.name}\0${j.user}`;
    const atMax = full.get(j.user) ?? (inKey ? full.get(inKey) : undefined);
    if (atMax) {
      out.set(j.id, atMax);
      continue;
    }
    let why: HeldBack | undefined;
    if (p?.maxNodes !== undefined && j.minNodes > p.maxNodes) why = { reason: "PartitionNodeLimit", detail: `it needs ${j.minNodes} nodes, partition ${p.name} allows ${p.maxNodes} per job` };
    else if (p?.maxTime !== undefined && j.timeLimit > p.maxTime) why = { reason: "PartitionTimeLimit", detail: `its time limit ${j.timeLimit} s is above partition ${p.name}'s ${p.maxTime} s` };
    else {
      why = over(users.get(j.user), j, limits, `user ${j.user}`);
      if (why?.reason === "QOSMaxJobsPerUserLimit") full.set(j.user, why);
      if (!why && p && inKey) {
        why = over(inPart.get(inKey), j, p.limits, `user ${j.user} in partition ${p.name}`);
        if (why?.reason === "QOSMaxJobsPerUserLimit") full.set(inKey, why);
      }
    }
    if (why) {
      out.set(j.id, why);
      continue;
    }
    add(users, j.user, j);
    if (inKey) add(inPart, inKey, j);
  }
  return out;
}

function hasRunLimits(l: UserLimits): boolean {
  return l.maxJobs !== undefined || l.maxCpus !== undefined || l.maxGpus !== undefined || l.maxNodes !== undefined;
}

/** Which limit `j` would pass, given what the user holds (`u`), or undefined. */
function over(u: Used | undefined, j: Amounts, l: UserLimits, who: string): HeldBack | undefined {
  const have = u ?? zero();
  if (l.maxJobs !== undefined && have.jobs + 1 > l.maxJobs) return { reason: "QOSMaxJobsPerUserLimit", detail: `${who} runs ${have.jobs} job(s), the limit is ${l.maxJobs} (MaxJobs)` };
  if (l.maxCpus !== undefined && have.cpus + j.cpus > l.maxCpus) return { reason: "QOSMaxCpuPerUserLimit", detail: `${who} holds ${have.cpus} cores, the job needs ${j.cpus}, the limit is ${l.maxCpus} (MaxTRESPerUser cpu)` };
  if (l.maxGpus !== undefined && j.gpus > 0 && have.gpus + j.gpus > l.maxGpus) return { reason: "QOSMaxGRESPerUser", detail: `${who} holds ${have.gpus} GPUs, the job needs ${j.gpus}, the limit is ${l.maxGpus} (MaxTRESPerUser gres/gpu)` };
  if (l.maxNodes !== undefined && have.nodes + j.nodes > l.maxNodes) return { reason: "QOSMaxNodePerUserLimit", detail: `${who} holds ${have.nodes} node(s), the job needs ${j.nodes}, the limit is ${l.maxNodes} (MaxTRESPerUser node)` };
  return undefined;
}

/** The jobs a submission makes, as a refusal names them. */
const these = (adding: number) => (adding === 1 ? "this one" : `these ${adding}`);

/**
 * Why a new submission would take its user over MaxSubmitJobs (`active`: the user's jobs pending or
 * running, cluster-wide and in the partition; `adding`: the jobs it makes, an array's tasks each),
 * or undefined.
 */
export function submitLimit(active: { all: number; inPartition: number }, adding: number, limits: UserLimits, p: Partition | undefined, user: string): string | undefined {
  const check = (have: number, max: number | undefined, where: string) =>
    max !== undefined && have + adding > max ? `user ${user} has ${have} job(s) pending or running${where}, ${these(adding)} would pass the limit of ${max} (MaxSubmitJobs); wait for some to end, or submit fewer` : undefined;
  return check(active.all, limits.maxSubmitJobs, "") ?? (p ? check(active.inPartition, p.limits.maxSubmitJobs, ` in partition ${p.name}`) : undefined);
}

/** Slurm's MaxJobCount, counted in jobs (an array's tasks each): ~160 MiB of a controller's memory at this default. */
export const DEFAULT_MAX_JOB_COUNT = 50_000;
export const MAX_JOB_COUNT = 1_000_000;

/**
 * Why the controller cannot take `adding` more jobs (MaxJobCount), or undefined: it holds at most
 * `max` jobs pending or running (`held`), and one user at most half of them, so that no user alone
 * can fill it and keep the others out. `mine` counts the user's; asked only near the limit.
 */
export function jobCountLimit(held: number, mine: () => number, adding: number, max: number, user: string): string | undefined {
  if (held + adding > max) return `the controller holds ${held} job(s) pending or running, ${these(adding)} would pass its limit of ${max} (its --max-job-count, Slurm's MaxJobCount); wait for some to end`;
  const half = Math.floor(max / 2);
  if (held + adding <= half) return undefined;
  const have = mine();
  return have + adding > half ? `user ${user} has ${have} job(s) pending or running, ${these(adding)} would pass ${half}: no user holds more than half of the controller's limit of ${max} (its --max-job-count), so that others can still submit; wait for some to end` : undefined;
}
