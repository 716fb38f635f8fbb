/** Slurm's output file patterns: a job's, expanded by the controller when it starts (%N is its first node); a step's (ebb run -o), by its launcher. */
import { isAbsolute, join } from "node:path";
import type { JobListRow } from "../store/jobs.ts";

/** Slurm's NO_VAL: what its %a is in a job that is no array task. */
const NO_ARRAY_TASK = "4294967294";

/**
 * What the patterns stand for: %j job id, %x name, %A array id, %a task id, %u user, %N first node
 * (if known); and, as sbatch has them for the batch script, %s `batch`, %J the job id, %t and %n 0.
 */
export function patternVars(row: JobListRow, firstNode?: string): Record<string, string> {
  return {
    j: String(row.id),
    J: String(row.id),
    s: "batch",
    t: "0",
    n: "0",
    x: row.name,
    A: String(row.arrayJobId ?? row.id),
    a: row.arrayTaskId === null || row.arrayTaskId === undefined ? NO_ARRAY_TASK : String(row.arrayTaskId),
    u: row.user ?? "",
    ...(firstNode ? { N: firstNode } : {}),
  };
}

/** A step's %a: its job's array task id, else Slurm's NO_VAL. */
export const arrayTaskVar = (taskId: string | undefined): string => taskId ?? NO_ARRAY_TASK;

/** A pattern with a width (`%5a`, `%03t`) zero-pads a number (`%5J` the job id of `15.1`); a name (`%10x`, `%5N`) stays as it is, as Slurm's. */
function padded(value: string, width: string): string {
  const n = Number(width);
  if (!(n > 0)) return value;
  const m = /^(\d+)(\..*)?$/.exec(value);
  return m ? m[1]!.padStart(n, "0") + (m[2] ?? "") : value;
}

/** %% is a percent sign; a pattern it does not know stays as it is. Relative to the job's directory. */
export function expandPattern(pattern: string, vars: Record<string, string>, cwd: string): string {
  const p = pattern.replace(/%(\d*)(.)/g, (whole, width: string, c: string) => (c === "%" ? "%" : vars[c] === undefined ? whole : padded(vars[c], width)));
  return isAbsolute(p) ? p : join(cwd, p);
}

/** Whether a pattern has a per-rank part: %t the rank, %n its node's index, %N its node's name (widths allowed). */
export const perRankPattern = (pattern: string): boolean => /%\d*[tnN]/.test(pattern.replaceAll("%%", ""));
