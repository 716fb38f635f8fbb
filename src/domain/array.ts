/**
 * Job array specifications, as sbatch --array takes them: `0-15`, `1,3,5`, `1-9:2` (a step),
 * any mix of those, and `%N` at the end: at most N tasks run at once.
 */
/** The most tasks any array may have; a controller's --max-array-tasks (default DEFAULT_ARRAY_TASKS) may allow fewer. */
export const MAX_ARRAY_TASKS = 10_000;
/** Slurm's default MaxArraySize. */
export const DEFAULT_ARRAY_TASKS = 1001;
export const MAX_ARRAY_INDEX = 4_000_000;

export interface ArraySpec {
  /** Task ids, ascending, each once. */
  indices: number[];
  /** At most this many tasks run at a time. */
  limit?: number;
  /** The step of the first range that has one, else 1: Slurm's SLURM_ARRAY_TASK_STEP ("1,5,9" is 1, "1-3,5-9:2" is 2). */
  step: number;
}

export function parseArraySpec(text: string, maxTasks = MAX_ARRAY_TASKS): ArraySpec | { error: string } {
  const m = /^([^%]+)(?:%(\d+))?$/.exec(text.trim());
  if (!m) return { error: `"${text}" is not an array spec such as 1-10, 1,3,5, 1-9:2 or 1-10%2` };
  const limit = m[2] === undefined ? undefined : Number(m[2]);
  if (limit !== undefined && limit < 1) return { error: `%${m[2]}: at least 1 task must be allowed to run` };
  const set = new Set<number>();
  let first: number | undefined;
  // Ids named, repeats counted: ranges that name the same ids again ("0-9999,0-9999,…") made each
  // request walk millions of ids (4,096 characters: ~0.3 s of the controller's thread).
  let named = 0;
  const parts = m[1]!.split(",");
  for (const part of parts) {
    const r = /^\s*(\d+)(?:-(\d+)(?::(\d+))?)?\s*$/.exec(part);
    if (!r) return { error: `"${part}" in "${text}" is not a task id, a range such as 1-10, or a range with a step such as 1-9:2` };
    const lo = Number(r[1]);
    const hi = r[2] === undefined ? lo : Number(r[2]);
    const step = r[3] === undefined ? 1 : Number(r[3]);
    if (r[3] !== undefined) first ??= step;
    if (hi < lo) return { error: `"${part}": a range goes from low to high` };
    if (step < 1) return { error: `"${part}": the step must be at least 1` };
    if (hi > MAX_ARRAY_INDEX) return { error: `"${part}": task ids go up to ${MAX_ARRAY_INDEX}` };
    named += Math.floor((hi - lo) / step) + 1;
    if (named > maxTasks) return { error: `"${text}" makes more than ${maxTasks} tasks${parts.length > 1 ? " (an id named twice counts twice)" : ""}` };
    for (let i = lo; i <= hi; i += step) set.add(i);
  }
  return { indices: [...set].sort((a, b) => a - b), limit, step: first ?? 1 };
}

/** 1,2,3,5,7,8 -> "1-3,5,7-8": how squeue shows an array's pending tasks. */
export function compressIndices(indices: readonly number[]): string {
  const out: string[] = [];
  let i = 0;
  while (i < indices.length) {
    let j = i;
    while (j + 1 < indices.length && indices[j + 1] === indices[j]! + 1) j++;
    out.push(i === j ? String(indices[i]) : `${indices[i]}-${indices[j]}`);
    i = j + 1;
  }
  return out.join(",");
}
