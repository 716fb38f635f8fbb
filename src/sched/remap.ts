/**
 * Rank mapping across an adaptation (dissertation §9.1.1-9.1.2). Ranks are laid out over the
 * allocation's nodes in order, a block per node. Staying ranks keep their rank; leaving ranks are
 * the highest (so a shrink gives back the last nodes of the allocation); joining ranks are appended
 * on the added nodes. Node order is the allocation's order, never sorted by name, so any order of
 * node identifiers maps correctly.
 */

export interface Placement {
  /** Nodes in rank order. */
  nodes: string[];
  /** Ranks per node, in the same order. */
  tasks: number[];
}

/** A placement as given: read, never changed (the result's arrays are new). */
export type GivenPlacement = { readonly nodes: readonly string[]; readonly tasks: readonly number[] };

export interface Remap {
  before: GivenPlacement;
  after: Placement;
  /** Nodes that leave (a shrink) and nodes that are added (a grow). */
  removed: string[];
  added: string[];
  staying: number;
  leaving: number;
  joining: number;
}

/**
 * Resize `before` to `count` nodes. Growing appends `added` (with `tasksPerNode` ranks each, by
 * default what the first node had); shrinking drops the last nodes, so leaving ranks are the highest.
 */
export function remap(before: GivenPlacement, count: number, added: readonly string[] = [], tasksPerNode?: number): Remap {
  const n = before.nodes.length;
  if (count < 1) throw new RangeError("a job keeps at least one node");
  const perNode = tasksPerNode ?? before.tasks[0] ?? 1;
  if (count >= n) {
    if (added.length !== count - n) throw new RangeError(`growing from ${n} to ${count} nodes needs ${count - n} added nodes, got ${added.length}`);
    const dup = firstHeld(added, before.nodes);
    if (dup) throw new RangeError(`node ${dup} is already in the allocation`);
    const joinTasks = added.map(() => perNode);
    const after = { nodes: [...before.nodes, ...added], tasks: [...before.tasks, ...joinTasks] };
    const staying = sum(before.tasks);
    const joining = sum(joinTasks);
    return {
      before,
      after,
      removed: [],
      added: [...added],
      staying,
      leaving: 0,
      joining,
    };
  }
  const after = { nodes: before.nodes.slice(0, count), tasks: before.tasks.slice(0, count) };
  const staying = sum(after.tasks);
  return {
    before,
    after,
    removed: before.nodes.slice(count),
    added: [],
    staying,
    leaving: sum(before.tasks) - staying,
    joining: 0,
  };
}

/**
 * A swap (a move, docs/adaptation.md §7.10): the nodes from `keep` on leave, with their ranks (the
 * highest), and `added` join at the end with `tasksPerNode` ranks each (default the first node's),
 * in one window: staying ranks keep their rank, joining ranks take the ranks after them.
 */
export function swap(before: GivenPlacement, keep: number, added: readonly string[], tasksPerNode?: number): Remap {
  const n = before.nodes.length;
  if (keep < 1 || keep >= n) throw new RangeError(`a swap keeps 1 to ${n - 1} of ${n} nodes, not ${keep}`);
  if (added.length === 0) throw new RangeError("a swap adds nodes");
  const dup = firstHeld(added, before.nodes);
  if (dup) throw new RangeError(`node ${dup} is already in the allocation`);
  const perNode = tasksPerNode ?? before.tasks[0] ?? 1;
  const joinTasks = added.map(() => perNode);
  const staying = sum(before.tasks.slice(0, keep));
  return {
    before,
    after: { nodes: [...before.nodes.slice(0, keep), ...added], tasks: [...before.tasks.slice(0, keep), ...joinTasks] },
    removed: before.nodes.slice(keep),
    added: [...added],
    staying,
    leaving: sum(before.tasks) - staying,
    joining: sum(joinTasks),
  };
}

/** Each rank's status in the window, by its rank in the old world. */
export function statusOf(rank: number, m: Pick<Remap, "staying">): "staying" | "leaving" {
  return rank < m.staying ? "staying" : "leaving";
}

/** The node (index in `nodes`) of every rank. */
export function nodeOfRanks(p: Placement): number[] {
  const out: number[] = [];
  p.tasks.forEach((t, i) => {
    for (let k = 0; k < t; k++) out.push(i);
  });
  return out;
}

/** The first of `added` that `nodes` holds already (a grow of a large job onto many nodes: a Set, not a search of every pair). */
function firstHeld(added: readonly string[], nodes: readonly string[]): string | undefined {
  if (added.length * nodes.length <= 64) return added.find((a) => nodes.includes(a));
  // Usually a few nodes join a large allocation and none is in it: a Set of the few settles that.
  if (added.length < nodes.length) {
    const few = new Set(added);
    if (!nodes.some((n) => few.has(n))) return undefined;
  }
  const held = new Set(nodes);
  return added.find((a) => held.has(a));
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
