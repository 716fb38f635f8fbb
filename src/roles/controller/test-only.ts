/**
 * sbatch --test-only: when and where a job would start if it were submitted now, from the current
 * queue and running jobs (each taken to run to its time limit), without submitting it.
 */
import type { JobSubmit } from "../../api/schemas.ts";
import { predictStart } from "../../sched/predict.ts";
import { compressHostlist } from "../../util/hostlist.ts";
import type { Jobs, Submitter } from "./jobs.ts";
import type { SchedulerLoop } from "./scheduler.ts";

export function testOnly(jobs: Jobs, scheduler: SchedulerLoop, req: JobSubmit, by: Submitter, now = Date.now()): { start: string | null; nodes: string[]; message: string } {
  const { values, indices } = jobs.prepare(req, by, now);
  if (values.held) return { start: null, nodes: [], message: "the job would be held (JobHeldUser) until released" };
  if (values.dependency && values.dependency.terms.length > 0) return { start: null, nodes: [], message: `the job would wait for its dependency (${values.dependency.text}) first` };
  const input = scheduler.batchInput(now);
  const id = -1;
  input.pending.push({
    id,
    minNodes: values.minNodes!,
    maxNodes: values.elastic ? values.nodes : values.maxNodes!,
    timeLimit: values.timeLimit,
    submitTime: now,
    ...(values.exclude ? { exclude: values.exclude } : {}),
    ...(values.nodelist ? { nodelist: values.nodelist } : {}),
  });
  const p = predictStart(input, id, values.beginTime ?? now);
  const what = indices ? `its first task (of ${indices.length})` : "it";
  if (p.start === undefined) return { start: null, nodes: [], message: `${what} cannot start on the nodes that are up now` };
  const when = new Date(p.start).toISOString();
  return { start: when, nodes: p.nodes, message: `${what} would start ${p.start <= now ? "now" : `at ${when}`} on ${compressHostlist(p.nodes)}` };
}
