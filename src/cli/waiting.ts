/** Waiting for jobs to end (ebb wait, ebb submit --wait): one long poll per job at a time. */
import type { ApiClient } from "../api/client.ts";
import type { JobView } from "../api/schemas.ts";
import { parseJobRef } from "../domain/dependency.ts";
import { UsageError } from "./errors.ts";
import { isActive } from "../domain/job.ts";

/** A job's exit status for a shell: 0 if it completed, else its exit code, or 1 if it has none. */
export function exitStatus(j: Pick<JobView, "state" | "exitCode">): number {
  if (j.state === "COMPLETED") return 0;
  return j.exitCode !== null && j.exitCode > 0 ? Math.min(j.exitCode, 255) : 1;
}

/** The job ids a user's JOBID stands for: an array's id is all of its tasks, 12_3 one of them. */
export async function jobIds(c: ApiClient, text: string): Promise<number[]> {
  const ref = parseJobRef(text);
  if (!ref || !/^\d+(_\d+)?$/.test(text.trim())) throw new UsageError(`"${text}" is not a job id such as 12, or an array task such as 12_3`);
  if (ref.task !== undefined) return [(await c.job(ref.job, ref.task)).id];
  const tasks = (await c.jobs({ array: ref.job, limit: 100_000 })).jobs;
  return tasks.length > 0 ? tasks.map((t) => t.id) : [ref.job];
}

/** Waits until every job has ended; their final views, in order. */
export async function waitForJobs(c: ApiClient, ids: readonly number[]): Promise<JobView[]> {
  const out: JobView[] = [];
  for (const id of ids) {
    for (;;) {
      const j = await c.job(id, undefined, 30);
      if (!isActive(j.state)) {
        out.push(j);
        break;
      }
    }
  }
  return out;
}
