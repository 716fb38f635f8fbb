/**
 * srun -m arbitrary: a task on each name of a list, in its order (SLURM_HOSTFILE's, one name a
 * line or comma-separated; without it, -w's). ebb numbers a step's ranks in blocks over its nodes
 * in the job's order, so it runs the lists that layout gives: each node once in a run of names,
 * every run as long, the nodes in the job's order (`srun -m arbitrary -w "$SLURM_JOB_NODELIST"`:
 * a task per node). Others are refused, naming why.
 */
import { UsageError } from "./errors.ts";
import { expandHostlist } from "../util/hostlist.ts";

export interface ArbitraryLayout {
  nodelist: string;
  nodes: number;
  tasksPerNode: number;
}

/** The step's nodes and tasks per node for `names` (the list, cut to `ntasks` when given) within the job's nodes `jobNodes`. */
export function arbitraryLayout(names: readonly string[], jobNodes: readonly string[], ntasks: number | undefined): ArbitraryLayout {
  const bad = (why: string) => new UsageError(`--distribution=arbitrary: ${why}`);
  if (ntasks !== undefined && ntasks > names.length) throw bad(`${ntasks} tasks, and the list names ${names.length}`);
  const list = ntasks === undefined ? names : names.slice(0, ntasks);
  if (list.length === 0) throw bad("the list names no node");
  const runs: { name: string; count: number }[] = [];
  for (const n of list) {
    if (runs.at(-1)?.name === n) runs.at(-1)!.count++;
    else runs.push({ name: n, count: 1 });
  }
  const outside = runs.find((r) => !jobNodes.includes(r.name));
  if (outside) throw bad(`${outside.name} is not a node of the job (${jobNodes.join(",")})`);
  const order = runs.map((r) => jobNodes.indexOf(r.name));
  if (new Set(runs.map((r) => r.name)).size !== runs.length || order.some((o, i) => i > 0 && o < order[i - 1]!) || runs.some((r) => r.count !== runs[0]!.count))
    throw bad(`ebb numbers a step's ranks in blocks of one size over its nodes in the job's order (${jobNodes.join(",")}); the list ${list.join(",")} is another layout`);
  return { nodelist: runs.map((r) => r.name).join(","), nodes: runs.length, tasksPerNode: runs[0]!.count };
}

/** The list srun -m arbitrary reads: SLURM_HOSTFILE's names (`read` reads the file), else -w's. */
export function arbitraryNames(hostfile: string | undefined, nodelist: string | undefined, read: (file: string) => string): string[] {
  if (hostfile !== undefined && hostfile !== "") {
    let text: string;
    try {
      text = read(hostfile);
    } catch (e) {
      throw new UsageError(`--distribution=arbitrary: cannot read SLURM_HOSTFILE ${hostfile}: ${(e as Error).message}`);
    }
    return text.split(/[\s,]+/).filter(Boolean);
  }
  if (nodelist === undefined) throw new UsageError("--distribution=arbitrary: give the nodes, in SLURM_HOSTFILE or with -w, one name a task");
  const names = expandHostlist(nodelist);
  if ("error" in names) throw new UsageError(`--nodelist=${nodelist}: ${names.error}`);
  return names;
}
