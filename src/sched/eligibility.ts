/**
 * Whether a pending job may be considered by a scheduling pass at all, apart from resources: held
 * jobs, unmet dependencies, a begin time still ahead, an array at its `%N` limit wait, each with
 * Slurm's reason. Pure: the caller passes what it knows about other jobs, and `now`.
 */
import { isFinal } from "../domain/job.ts";
import type { Dependency, DependencyType } from "../domain/job-options.ts";

/** A job's dependency: defined in domain/, where the store reads it too. */
export type { Dependency, DependencyType };

export interface JobFacts {
  state: string;
  exitCode: number | null;
}

export type WaitReason = "JobHeldUser" | "Dependency" | "DependencyNeverSatisfied" | "BeginTime" | "JobArrayTaskLimit";

export interface Ineligible {
  reason: WaitReason;
  /** For people: which job, what time, which limit. */
  detail: string;
}

type Status = { state: "met" } | { state: "wait" | "never"; detail: string };


function jobStatus(type: Exclude<DependencyType, "singleton">, id: number, f: JobFacts | undefined): Status {
  if (!f) return type === "after" || type === "afterany" ? { state: "met" } : { state: "never", detail: `job ${id} is not known (any more); ${type}:${id} can never be met` };
  const ended = isFinal(f.state);
  switch (type) {
    case "after":
      return f.state !== "PENDING" ? { state: "met" } : { state: "wait", detail: `waits for job ${id} to start (after)` };
    case "afterany":
      return ended ? { state: "met" } : { state: "wait", detail: `waits for job ${id} to end (afterany)` };
    case "afterok":
      if (!ended) return { state: "wait", detail: `waits for job ${id} to complete (afterok)` };
      return f.state === "COMPLETED" ? { state: "met" } : { state: "never", detail: `job ${id} ended ${f.state}${f.exitCode ? ` (exit code ${f.exitCode})` : ""}, so afterok:${id} can never be met` };
    case "afternotok":
      if (!ended) return { state: "wait", detail: `waits for job ${id} to fail (afternotok)` };
      return f.state !== "COMPLETED" ? { state: "met" } : { state: "never", detail: `job ${id} COMPLETED, so afternotok:${id} can never be met` };
  }
}

/**
 * Where a dependency stands. `singletonBlocker`: an active job of the same name and user that
 * keeps a `singleton` term waiting (a running one, or one submitted earlier).
 */
export function dependencyStatus(dep: Dependency, facts: (id: number) => JobFacts | undefined, singletonBlocker?: number): Status {
  const statuses: Status[] = dep.terms.map((t) => {
    if (t.type === "singleton") return singletonBlocker === undefined ? { state: "met" } : { state: "wait", detail: `waits for job ${singletonBlocker} of the same name to end (singleton)` };
    const each = t.jobs.map((id) => jobStatus(t.type, id, facts(id)));
    return each.find((s) => s.state === "never") ?? each.find((s) => s.state === "wait") ?? { state: "met" };
  });
  if (dep.any) {
    if (statuses.some((s) => s.state === "met")) return { state: "met" };
    return statuses.every((s) => s.state === "never") ? statuses[0]! : statuses.find((s) => s.state === "wait")!;
  }
  return statuses.find((s) => s.state === "never") ?? statuses.find((s) => s.state === "wait") ?? { state: "met" };
}

export interface EligibilityInput {
  held: boolean;
  /** Epoch ms before which the job may not start. */
  beginTime: number | null;
  dependency?: Status;
  /** An array task: tasks of its array running now, and the array's limit. */
  array?: { running: number; limit: number };
}

/** Why the job may not be scheduled yet, or undefined if it may. */
export function ineligible(job: EligibilityInput, now: number): Ineligible | undefined {
  if (job.held) return { reason: "JobHeldUser", detail: "held by a user; ebb release JOBID lets it run" };
  const d = job.dependency;
  if (d && d.state === "never") return { reason: "DependencyNeverSatisfied", detail: d.detail };
  if (d && d.state === "wait") return { reason: "Dependency", detail: d.detail };
  if (job.beginTime !== null && job.beginTime > now) return { reason: "BeginTime", detail: `may not start before ${new Date(job.beginTime).toISOString()}` };
  if (job.array && job.array.running >= job.array.limit) return { reason: "JobArrayTaskLimit", detail: `${job.array.running} tasks of its array run, its limit is ${job.array.limit}` };
  return undefined;
}
