/**
 * What each user used over a time window (`ebb usage`, like sreport's UserUtilizationByAccount):
 * the jobs that ran in it, and their node-, core- and GPU-seconds within it, from the allocation
 * history (job_nodes; a node counts with all of its CPUs, as jobs hold whole nodes; GPUs are the
 * job's on the node, a row from before shares the node's). Read a
 * chunk of rows at a time by id: the generator yields between chunks, so that a caller can let
 * other work run; memory grows with the number of users only.
 */
import type { Database } from "bun:sqlite";
import { expandIndices } from "./jobs.ts";

export interface UserUsage {
  user: string;
  /** Jobs that held nodes in the window. */
  jobs: number;
  nodeSeconds: number;
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
  const held = db.query<{ user: string | null; nodeMs: number; coreMs: number }, Record<string, string | number>>(
    `SELECT j.user AS user,
            SUM(MIN(COALESCE(a.until, $now), $until) - MAX(a.since, $since)) AS nodeMs,
            SUM((MIN(COALESCE(a.until, $now), $until) - MAX(a.since, $since)) * COALESCE(n.cpus, 1)) AS coreMs
       FROM job_nodes a JOIN jobs j ON j.id = a.job_id LEFT JOIN nodes n ON n.name = a.node
      WHERE a.id > $after AND a.id <= $last AND a.since < $until AND COALESCE(a.until, $now) > $since ${only}
      GROUP BY j.user`,
  );
  // Rows that held GPUs, one by one: their GPU lists ("0-3,8") are counted here, not in SQL.
  const gpus = db.query<{ user: string | null; ms: number; gpus: string | null; nodeGpus: number | null }, Record<string, string | number>>(
    `SELECT j.user AS user, MIN(COALESCE(a.until, $now), $until) - MAX(a.since, $since) AS ms, a.gpus AS gpus,
            CASE WHEN a.cores IS NULL THEN json_array_length(n.gpus) END AS nodeGpus
       FROM job_nodes a JOIN jobs j ON j.id = a.job_id LEFT JOIN nodes n ON n.name = a.node
      WHERE a.id > $after AND a.id <= $last AND a.since < $until AND COALESCE(a.until, $now) > $since ${only}
        AND (CASE WHEN a.cores IS NULL THEN json_array_length(n.gpus) > 0 ELSE a.gpus IS NOT NULL AND a.gpus != '' END)`,
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
        e.nodeSeconds += r.nodeMs / 1000;
        e.coreSeconds += r.coreMs / 1000;
      }
      for (const r of gpus.all(params(after, last))) entry(r.user ?? "").gpuSeconds += ((r.nodeGpus ?? expandIndices(r.gpus ?? "").length) * r.ms) / 1000;
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
