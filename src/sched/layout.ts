/**
 * Block distribution of tasks over nodes (Slurm's default): every node gets floor(n/N) tasks and
 * the first n mod N nodes one more; ranks are numbered contiguously in node order.
 */
export function blockLayout(nodes: number, tasks: number): number[] {
  const base = Math.floor(tasks / nodes);
  const rest = tasks % nodes;
  return Array.from({ length: nodes }, (_, i) => base + (i < rest ? 1 : 0));
}

/** The first rank on each node, for a per-node task count vector. */
export function firstRanks(tasks: readonly number[]): number[] {
  const out: number[] = [];
  let acc = 0;
  for (const t of tasks) {
    out.push(acc);
    acc += t;
  }
  return out;
}

/** How many tasks a job or step runs: explicit, else per-node times nodes, else one per node. */
export function taskCount(nodes: number, tasks: number | null | undefined, tasksPerNode: number | null | undefined): number {
  if (tasks) return tasks;
  if (tasksPerNode) return nodes * tasksPerNode;
  return nodes;
}
