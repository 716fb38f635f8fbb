/**
 * Loop nesting as a forest. A loop's `parent` comes from one rank's view (the lowest rank that
 * runs it), and each rank's view is a forest by construction (`KeyForest`); `forest()` is the
 * last word: every parent names a loop of the list and no parent chain comes back to its start,
 * whatever the input (a tie between two reports of one rank, a stored document of an older
 * build), so every loop is reachable from a root.
 */

export interface Nested {
  key: string;
  parent: string | null;
}

/**
 * Parent links between loop keys, added one at a time, never making a cycle: a link is refused
 * when the child has a parent already, or when the proposed parent is the child or nested in it.
 */
export class KeyForest {
  private readonly parents = new Map<string, string>();

  /** Adds `child` → `parent` if that keeps a forest; whether it was added. */
  propose(child: string, parent: string): boolean {
    if (this.parents.has(child)) return false;
    for (let p: string | undefined = parent; p !== undefined; p = this.parents.get(p)) if (p === child) return false;
    this.parents.set(child, parent);
    return true;
  }

  parentOf(key: string): string | null {
    return this.parents.get(key) ?? null;
  }
}

/** Each loop's parent once the links form a forest: dangling parents dropped, a cycle cut at its least key. */
export function forestParents(loops: readonly Nested[]): Map<string, string | null> {
  const keys = new Set(loops.map((l) => l.key));
  const parent = new Map<string, string | null>();
  for (const l of loops) parent.set(l.key, l.parent !== null && l.parent !== l.key && keys.has(l.parent) ? l.parent : null);
  const done = new Set<string>();
  for (const start of parent.keys()) {
    const path: string[] = [];
    const onPath = new Set<string>();
    let x: string | null = start;
    while (x !== null && !done.has(x) && !onPath.has(x)) {
      path.push(x);
      onPath.add(x);
      x = parent.get(x) ?? null;
    }
    if (x !== null && onPath.has(x)) {
      const cycle = path.slice(path.indexOf(x));
      parent.set(cycle.reduce((a, b) => (b < a ? b : a)), null);
    }
    for (const k of path) done.add(k);
  }
  return parent;
}

/** Makes the loops' parents a forest (see `forestParents`), in place. */
export function forest<T extends Nested>(loops: T[]): T[] {
  const parent = forestParents(loops);
  for (const l of loops) l.parent = parent.get(l.key) ?? null;
  return loops;
}

/** Keys of `key`'s ancestors in a forest's parent map, nearest first. */
export function ancestors(parent: ReadonlyMap<string, string | null>, key: string): string[] {
  const out: string[] = [];
  for (let p = parent.get(key) ?? null; p !== null && out.length <= parent.size; p = parent.get(p) ?? null) out.push(p);
  return out;
}
