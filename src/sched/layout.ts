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
 * A block layout of `tasks` over nodes that hold `caps` tasks each, as Slurm 22.05 lays out a job's
 * or step's tasks over CPUs that differ by node (slurm_step_layout.c, _task_layout_block without
 * Pack): a task to each node with room in turn, round after round, then the ranks numbered in
 * blocks. So caps 4,1,4 take 7 tasks as 3,1,3. Tasks that `caps` cannot hold all go on round
 * after round over every node, as Slurm's over-subscription; the caller refuses what overfills.
 * Closed form (a level every node is filled to, the round it stops in), not round by round.
 */
export function blockWithin(caps: readonly number[], tasks: number): number[] {
  const held = (level: number) => caps.reduce((sum, c) => sum + Math.min(c, level), 0);
  const total = held(Infinity);
  if (tasks >= total) {
    const over = blockLayout(caps.length, tasks - total);
    return caps.map((c, i) => c + over[i]!);
  }
  // The last full round: the highest level whose tasks are not more than `tasks`.
  let lo = 0;
  let hi = caps.reduce((a, b) => Math.max(a, b), 0);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (held(mid) <= tasks) lo = mid;
    else hi = mid - 1;
  }
  let rest = tasks - held(lo);
  return caps.map((c) => Math.min(c, lo) + (c > lo && rest > 0 ? (rest--, 1) : 0));
}
