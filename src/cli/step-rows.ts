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
      job: step({ name: s.name ?? (basename(s.argv[0] ?? "") || "step"), state: s.state as JobView["state"], exitCode: s.exitCode, startTime: s.startTime, endTime: s.endTime }, s.nodes),
      ctx: { label: `${label}.${s.stepId}`, now },
    });
  return rows;
}

/**
 * sacct -j's ids (pure): a job's (`42`: all its lines) or one of its steps' (`42.batch`,
 * `42.0`: that line alone, as sacct prints it); `ids` the jobs to list, `steps` the steps asked of
 * each job named only by its steps.
 */
export function stepSelection(value: string): { ids: string; steps: Map<string, Set<string>> } {
  const whole = new Set<string>();
  const steps = new Map<string, Set<string>>();
  for (const item of value.split(",").map((s) => s.trim()).filter(Boolean)) {
    const dot = item.indexOf(".");
    if (dot < 0) whole.add(item);
    else steps.set(item.slice(0, dot), (steps.get(item.slice(0, dot)) ?? new Set()).add(item.slice(dot + 1)));
  }
  for (const job of whole) steps.delete(job);
  const ids = [...new Set([...whole, ...steps.keys()])].join(",");
  return { ids, steps };
}

/** The rows `stepSelection` keeps: every row of a job named whole, the named steps' rows of the others. */
export function selectedRows(rows: readonly Row[], steps: ReadonlyMap<string, ReadonlySet<string>>): Row[] {
  return rows.filter(({ job, ctx }) => {
    const dot = ctx.label.indexOf(".");
    const asked = steps.get(dot < 0 ? ctx.label : ctx.label.slice(0, dot)) ?? steps.get(String(job.id));
    return asked === undefined || (dot >= 0 && asked.has(ctx.label.slice(dot + 1)));
  });
}
