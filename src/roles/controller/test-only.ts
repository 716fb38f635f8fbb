/**
 * sbatch --test-only: when and where a job would start if it were submitted now, from the current
 * queue and running jobs (each taken to run to its time limit) by the scheduler's own plans
 * (sched/predict.ts), without submitting it. The replay runs one plan at a time with the event
 * loop's other work between them, and stops after MAX_PREDICT_STEPS job ends: with a long queue a
 * replay to the end would hold the controller for as long as it takes (17 s at 10,000 jobs).
 */
import type { JobSubmit } from "../../proto/requests.ts";
import { replay, type Prediction } from "../../sched/predict.ts";
import { compressHostlist } from "../../util/hostlist.ts";
import { formatIndexList } from "../../domain/index-list.ts";
import type { NodeShare } from "../../domain/resources.ts";
import type { Jobs, Submitter } from "./jobs.ts";
import type { SchedulerLoop } from "./scheduler.ts";
import { nextTurn } from "./turns.ts";

/** How many expected job ends a `--test-only` replay looks past before it gives up. */
export const MAX_PREDICT_STEPS = 200;

export async function testOnly(jobs: Jobs, scheduler: SchedulerLoop, req: JobSubmit, by: Submitter, now = Date.now()): Promise<{ start: string | null; nodes: string[]; message: string }> {
  const { values, indices } = jobs.prepare(req, by, now);
  if (values.held) return { start: null, nodes: [], message: "the job would be held (JobHeldUser) until released" };
  if (values.dependency && values.dependency.terms.length > 0) return { start: null, nodes: [], message: `the job would wait for its dependency (${values.dependency.text}) first` };
  // The plan the scheduler would make (its policy, starts only), replayed at each running job's limit.
  const snap = scheduler.snapshot(now);
  const id = -1;
  snap.pending = [
    ...snap.pending,
    {
      id,
      minNodes: values.minNodes!,
      maxNodes: values.elastic ? values.nodes : values.maxNodes!,
      timeLimit: values.timeLimit,
      submitTime: now,
      elastic: values.elastic,
      ...(!values.elastic && values.minNodes! < values.maxNodes! ? { moldable: true } : {}),
      ...(values.exclude ? { exclude: values.exclude } : {}),
      ...(values.nodelist ? { nodelist: values.nodelist } : {}),
      ...(values.sizes ? { sizes: values.sizes } : {}),
      ...(values.resources ? { resources: values.resources } : {}),
    },
  ];
  const what = indices ? `its first task (of ${indices.length})` : "it";
  const steps = replay(snap, id, values.beginTime ?? now);
  let p: Prediction | undefined;
  for (let n = 0; p === undefined; n++) {
    const r = steps.next();
    if (r.done) p = r.value;
    else if (n + 1 >= MAX_PREDICT_STEPS)
      return { start: null, nodes: [], message: `${what} would not start within the next ${MAX_PREDICT_STEPS} job ends (${snap.pending.length - 1} jobs are pending, ${snap.running.length} running); ebb predicts no further than that` };
    else await nextTurn();
  }
  if (p.start === undefined) return { start: null, nodes: [], message: `${what} cannot start on the nodes that are up now` };
  const when = new Date(p.start).toISOString();
  const where = p.shares ? p.shares.map(shareText).join(", ") : compressHostlist(p.nodes);
  return { start: when, nodes: p.nodes, message: `${what} would start ${p.start <= now ? "now" : `at ${when}`} on ${where}` };
}

/** "node01 (cores 0-3, 4096 MiB, GPUs 0,1)": where a job would be, and what it would hold there. */
function shareText(s: NodeShare): string {
  const gpus = s.gpus.length > 0 ? `, GPU${s.gpus.length === 1 ? "" : "s"} ${formatIndexList(s.gpus)}` : "";
  return `${s.node} (core${s.cores.length === 1 ? "" : "s"} ${formatIndexList(s.cores)}, ${s.memMiB} MiB${gpus})`;
}
