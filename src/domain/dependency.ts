/**
 * Job dependencies as sbatch --dependency writes them: `afterok:12:13`, `afternotok:12`,
 * `afterany:12`, `after:12`, `singleton`, joined by `,` (all must hold) or `?` (any may). A job is
 * `12` (for an array: all of its tasks) or `12_3` (one task).
 */
import type { Dependency, DependencyType } from "./job-options.ts";

export interface JobRef {
  job: number;
  task?: number;
}

export interface DependencySpec {
  any: boolean;
  terms: ({ type: Exclude<DependencyType, "singleton">; jobs: JobRef[] } | { type: "singleton" })[];
}

const TYPES = ["after", "afterany", "afterok", "afternotok"] as const;

export function parseJobRef(text: string): JobRef | undefined {
  const m = /^(\d+)(?:_(\d+))?$/.exec(text.trim());
  if (!m) return undefined;
  const job = Number(m[1]);
  if (!Number.isSafeInteger(job) || job < 1) return undefined;
  return m[2] === undefined ? { job } : { job, task: Number(m[2]) };
}

export function parseDependency(text: string): DependencySpec | { error: string } {
  const s = text.trim();
  if (s === "") return { error: "an empty dependency; e.g. afterok:12" };
  if (s.includes(",") && s.includes("?")) return { error: `"${text}": join conditions with "," (all) or "?" (any), not both` };
  const any = s.includes("?");
  const terms: DependencySpec["terms"] = [];
  for (const part of s.split(any ? "?" : ",")) {
    const [type, ...ids] = part.trim().split(":");
    if (type === "singleton") {
      if (ids.length > 0) return { error: `"${part}": singleton takes no job ids` };
      terms.push({ type: "singleton" });
      continue;
    }
    if (!(TYPES as readonly string[]).includes(type ?? "")) {
      return { error: `"${part}": unknown dependency type "${type}"; use after, afterany, afterok, afternotok (each with :JOBID...) or singleton` };
    }
    if (ids.length === 0) return { error: `"${part}": name the job(s), e.g. ${type}:12` };
    const jobs: JobRef[] = [];
    for (const id of ids) {
      const ref = parseJobRef(id);
      if (!ref) return { error: `"${id}" in "${part}" is not a job id such as 12 or 12_3` };
      jobs.push(ref);
    }
    terms.push({ type: type as (typeof TYPES)[number], jobs });
  }
  return { any, terms };
}

/**
 * Every job `spec` names, by id (`idsOf`: a job's own id, or an array's tasks), or undefined once
 * more than `max` are named. Counted as each reference is looked up: an array named 800 times in
 * a request's 4,096 characters was read whole 800 times (~1 s of the controller's thread) before
 * the count at the end of its term.
 */
export function dependencyJobs(spec: DependencySpec, idsOf: (ref: JobRef) => readonly number[], max: number): Dependency["terms"] | undefined {
  let count = 0;
  const terms: Dependency["terms"] = [];
  for (const t of spec.terms) {
    if (t.type === "singleton") {
      terms.push(t);
      continue;
    }
    const jobs: number[] = [];
    for (const ref of t.jobs) {
      const ids = idsOf(ref);
      count += ids.length;
      if (count > max) return undefined;
      for (const id of ids) jobs.push(id);
    }
    terms.push({ type: t.type, jobs });
  }
  return terms;
}
