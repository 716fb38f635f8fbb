/** Slurm's output file patterns: a job's, expanded by the controller when it starts (%N is its first node); a step's (ebb run -o), by its launcher. */
import { isAbsolute, join } from "node:path";
import type { JobListRow } from "../store/jobs.ts";

/** What the patterns stand for: %j job id, %x name, %A array id, %a task id, %u user, %N first node (if known). */
export function patternVars(row: JobListRow, firstNode?: string): Record<string, string> {
  return { j: String(row.id), x: row.name, A: String(row.arrayJobId ?? row.id), a: String(row.arrayTaskId ?? 0), u: row.user ?? "", ...(firstNode ? { N: firstNode } : {}) };
}

/** %% is a percent sign; a pattern it does not know stays as it is. Relative to the job's directory. */
export function expandPattern(pattern: string, vars: Record<string, string>, cwd: string): string {
  const p = pattern.replace(/%(.)/g, (whole, c: string) => (c === "%" ? "%" : (vars[c] ?? whole)));
  return isAbsolute(p) ? p : join(cwd, p);
}
