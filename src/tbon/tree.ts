/**
 * The k-ary tree over a step's nodes. The launcher is the root (index -1); node indices 0..n-1
 * are laid out breadth-first, so the root's children are 0..k-1 and node i's are (i+1)k..(i+1)k+k-1.
 * Depth is ceil(log_k(n)), so a broadcast or a reduction costs O(log n) hops.
 */
export const ROOT = -1;

export function childrenOf(index: number, n: number, k: number): number[] {
  const first = (index + 1) * k;
  const out: number[] = [];
  for (let c = first; c < Math.min(n, first + k); c++) out.push(c);
  return out;
}

export function parentOf(index: number, k: number): number {
  return Math.floor(index / k) - 1;
}

/** How many nodes are in the subtree rooted at `index` (the node itself included). */
export function subtreeSize(index: number, n: number, k: number): number {
  let size = index === ROOT ? 0 : 1;
  let level = childrenOf(index, n, k);
  while (level.length > 0) {
    size += level.length;
    const first = (level[0]! + 1) * k;
    const last = Math.min(n, (level[level.length - 1]! + 1) * k + k);
    level = first < n ? Array.from({ length: Math.max(0, last - first) }, (_, i) => first + i) : [];
  }
  return size;
}

export function depth(n: number, k: number): number {
  let d = 0;
  let reach = 0;
  let width = 1;
  while (reach < n) {
    width *= k;
    reach += width;
    d++;
  }
  return d;
}
