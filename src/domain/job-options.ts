/**
 * What a job may ask for beyond its size, as every layer names it: its dependency on other jobs,
 * and its own elastic-scheduler settings. The store keeps both as JSON columns of the job's row,
 * the scheduler reads them (`sched/eligibility.ts`, `sched/config.ts`), the API parses them.
 */

export type DependencyType = "after" | "afterany" | "afterok" | "afternotok" | "singleton";

/** A dependency with every job named by its id (array references expanded when it was submitted). */
export interface Dependency {
  any: boolean;
  terms: ({ type: Exclude<DependencyType, "singleton">; jobs: number[] } | { type: "singleton" })[];
}

/** What a job may set for itself (sched/config.ts bounds it by the admin limits). The interval stays cluster-wide (one timer). */
export interface JobOverrides {
  upper?: number;
  lower?: number;
  window?: number;
  minSamples?: number;
  settle?: number;
  payoff?: boolean;
}
