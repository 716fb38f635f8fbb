/**
 * What each user used over a time window (`ebb usage`, like sreport's UserUtilizationByAccount):
 * the jobs that ran in it, and their node-, core- and GPU-seconds within it, from the allocation
 * history (job_nodes: a row's cores and GPUs are the job's share of the node; a row from before
 * shares held the whole node, all of its CPUs and GPUs). Read a chunk of rows at a time by id: the
 * generator yields between chunks, so that a caller can let other work run; memory grows with the
 * number of users and of distinct shares in a chunk only.
 */
import type { Database } from "bun:sqlite";
import { countIndices } from "./jobs.ts";

export interface UserUsage {
  user: string;
  /** Jobs that held nodes in the window. */
  jobs: number;
  nodeSeconds: number;
  /** Cores held times the seconds held. */
  coreSeconds: number;
  /** GPUs held times the seconds held. */
  gpuSeconds: number;
}

/** Rows of job_nodes (and of jobs) read per chunk. */
const CHUNK = 20_000;

/** Per user (a job without one counts as ""), over [since, until] in epoch ms; `now` closes allocations still open. */
export function* usageByUser(db: Database, since: number, until: number, now: number, opts: { user?: string; chunk?: number } = {}): Generator<void, UserUsage[]> {
  const chunk = opts.chunk ?? CHUNK;
  const byUser = new Map<string, UserUsage>();
  const entry = (user: string) => byUser.get(user) ?? byUser.set(user, { user, jobs: 0, nodeSeconds: 0, coreSeconds: 0, gpuSeconds: 0 }).get(user)!;
  const only = opts.user === undefined ? "" : "AND j.user = $user";
  // Time held per user and share (the cores' and GPUs' lists, "0-3,8", are counted below: few
  // distinct ones); a row from before shares per node, whose CPUs and GPUs it held.
  const held = db.query<{ user: string | null; ms: number; cores: string | null; gpus: string | null; nodeCpus: number | null; nodeGpus: number | null }, Record<string, string | number>>(
    `SELECT j.user AS user, a.cores AS cores, a.gpus AS gpus, n.cpus AS nodeCpus, json_array_length(n.gpus) AS nodeGpus,
            SUM(MIN(COALESCE(a.until, $now), $until) - MAX(a.since, $since)) AS ms
       FROM job_nodes a JOIN jobs j ON j.id = a.job_id LEFT JOIN nodes n ON n.name = a.node
      WHERE a.id > $after AND a.id <= $last AND a.since < $until AND COALESCE(a.until, $now) > $since ${only}
      GROUP BY j.user, a.cores, a.gpus, CASE WHEN a.cores IS NULL THEN a.node END`,
  );
  const ran = db.query<{ user: string | null; jobs: number }, Record<string, string | number>>(
    `SELECT j.user AS user, COUNT(*) AS jobs FROM jobs j
      WHERE j.id > $after AND j.id <= $last AND j.start_time IS NOT NULL AND j.start_time < $until AND COALESCE(j.end_time, $now) > $since ${only}
      GROUP BY j.user`,
  );
  const bounds = (table: string) => db.query<{ lo: number | null; hi: number | null }, []>(`SELECT MIN(id) AS lo, MAX(id) AS hi FROM ${table}`).get()!;
  const params = (after: number, last: number) => ({ $after: after, $last: last, $since: since, $until: until, $now: now, ...(opts.user === undefined ? {} : { $user: opts.user }) });
  for (const [table, read] of [
    ["job_nodes", (after: number, last: number) => {
      for (const r of held.all(params(after, last))) {
        const e = entry(r.user ?? "");
        const whole = r.cores === null;
        e.nodeSeconds += r.ms / 1000;
        e.coreSeconds += ((whole ? (r.nodeCpus ?? 1) : countIndices(r.cores!)) * r.ms) / 1000;
        e.gpuSeconds += ((whole ? (r.nodeGpus ?? 0) : countIndices(r.gpus ?? "")) * r.ms) / 1000;
      }
    }],
    ["jobs", (after: number, last: number) => {
      for (const r of ran.all(params(after, last))) entry(r.user ?? "").jobs += r.jobs;
    }],
  ] as const) {
    const { lo, hi } = bounds(table);
    if (lo === null || hi === null) continue;
    for (let after = lo - 1; after < hi; after += chunk) {
      read(after, Math.min(hi, after + chunk));
      yield;
    }
  }
  return [...byUser.values()].sort((a, b) => b.coreSeconds - a.coreSeconds || a.user.localeCompare(b.user));
}
