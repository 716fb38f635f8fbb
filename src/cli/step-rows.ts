/**
 * sacct's step lines (pure): a job's row, then `ID.batch` for a batch job's shell (not salloc's
 * holding one) and `ID.0`,
 * `ID.1`... for its steps, each a job view of its own so that every --format field reads it: its
 * name (`batch`, else the step's program, as sacct names an srun step), state, exit code, times,
 * nodes and their CPUs; no partition, user or usage of its own (sacct leaves them empty on steps).
 */
import { basename } from "node:path";
import type { JobDetail, JobView } from "../api/schemas.ts";
import type { RowContext } from "./job-format.ts";
import { SALLOC_MARK } from "./salloc-env.ts";

type Row = { job: JobView; ctx: RowContext };

export function withSteps(job: JobView, detail: Pick<JobDetail, "steps"> & Partial<Pick<JobDetail, "env">> | undefined, label: string, now: number): Row[] {
  const rows: Row[] = [{ job, ctx: { label, now } }];
  if (!detail || job.startTime === null) return rows;
  const step = (over: Partial<JobView>, nodes: readonly string[]): JobView => ({
    ...job,
    partition: null,
    user: null,
    usage: null,
    allocation: [...nodes],
    shares: job.shares.filter((s) => nodes.includes(s.node)),
    ...over,
  });
  if (job.kind === "batch" && detail.env?.[SALLOC_MARK] === undefined) {
    const first = job.allocation.slice(0, 1);
    const ended = job.endTime !== null;
    rows.push({ job: step({ name: "batch", state: ended ? job.state : "RUNNING", exitCode: ended ? job.exitCode : null }, first), ctx: { label: `${label}.batch`, now } });
  }
  for (const s of detail.steps)
    rows.push({
      job: step({ name: basename(s.argv[0] ?? "") || "step", state: s.state as JobView["state"], exitCode: s.exitCode, startTime: s.startTime, endTime: s.endTime }, s.nodes),
      ctx: { label: `${label}.${s.stepId}`, now },
    });
  return rows;
}
