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

/**
 * How a step's ranks are numbered over its nodes (srun -m's first level): absent or block, each
 * node's ranks consecutive; plane N, N consecutive ranks to each node in turn (cyclic is plane 1),
 * a node that holds its count skipped. The counts per node are given; only the numbering differs.
 */
export type Distribution = { kind: "cyclic" } | { kind: "plane"; size: number };

/** The step ranks each node holds, ascending, for ranks per node `tasks` numbered by `dist`. */
export function ranksByNode(tasks: readonly number[], dist?: Distribution): number[][] {
  if (!dist) {
    const firsts = firstRanks(tasks);
    return tasks.map((t, i) => Array.from({ length: t }, (_, k) => firsts[i]! + k));
  }
  const out = tasks.map((): number[] => []);
  const chunk = dist.kind === "cyclic" ? 1 : dist.size;
  const total = tasks.reduce((a, b) => a + b, 0);
  for (let rank = 0; rank < total; )
    for (let i = 0; i < tasks.length && rank < total; i++) {
      const take = Math.min(chunk, tasks[i]! - out[i]!.length);
      for (let k = 0; k < take; k++) out[i]!.push(rank++);
    }
  return out;
}

/** The node index of every rank, in rank order (the inverse of ranksByNode). */
export function nodeOfRanks(tasks: readonly number[], dist?: Distribution): number[] {
  const total = tasks.reduce((a, b) => a + b, 0);
  // Pushed in rank order, so the array stays dense (filled out of order, 65,536 ranks took 20 ms).
  const out: number[] = [];
  const chunk = !dist ? Infinity : dist.kind === "cyclic" ? 1 : dist.size;
  const placed = tasks.map(() => 0);
  for (let rank = 0; rank < total; )
    for (let i = 0; i < tasks.length && rank < total; i++) {
      const take = Math.min(chunk, tasks[i]! - placed[i]!);
      placed[i]! += take;
      for (let k = 0; k < take; k++, rank++) out.push(i);
    }
  return out;
}

/** Slurm's counts for -m plane=N: N tasks to each node in turn until all are placed. */
export function planeLayout(nodes: number, tasks: number, size: number): number[] {
  const out = Array<number>(nodes).fill(0);
  for (let left = tasks; left > 0; ) for (let i = 0; i < nodes && left > 0; i++) {
    const take = Math.min(size, left);
    out[i]! += take;
    left -= take;
  }
  return out;
}

/**
 * A block layout of `tasks` over nodes that hold `caps` tasks each, what a node cannot hold moved
 * on to the next nodes with room; the plain block layout when they cannot hold them all.
 */
export function blockWithin(caps: readonly number[], tasks: number): number[] {
  const out = blockLayout(caps.length, tasks);
  let spill = 0;
  for (const [i, cap] of caps.entries())
    if (out[i]! > cap) {
      spill += out[i]! - cap;
      out[i] = cap;
    }
  for (const [i, cap] of caps.entries()) {
    const k = Math.min(cap - out[i]!, spill);
    out[i]! += k;
    spill -= k;
  }
  return spill > 0 ? blockLayout(caps.length, tasks) : out;
}
