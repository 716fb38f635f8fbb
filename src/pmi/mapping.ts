import { V1_MAX_VALUE } from "./limits.ts";

/**
 * `PMI_process_mapping`: `(vector,(start,nnodes,ppn),...)`. Each block says "ranks go ppn at a
 * time onto nodes start, start+1, ..., start+nnodes-1". MPICH (`MPIR_NODEMAP_populate_ids_from_mapping`)
 * walks the blocks in rank order and, if ranks remain, starts over at the first block, so a cyclic
 * layout can be written as one period. Node ids only tell which ranks share a node; here they are
 * given in order of first appearance, so the allocation's node order (sorted or not) never matters.
 */

interface Block {
  start: number;
  nnodes: number;
  ppn: number;
}

const render = (blocks: readonly Block[]): string =>
  `(vector,${blocks.map((b) => `(${b.start},${b.nnodes},${b.ppn})`).join(",")})`;

/** Runs of ranks on one node, consecutive nodes with equal runs folded into one block. */
function fold(runs: ReadonlyArray<{ node: number; len: number }>): Block[] {
  const blocks: Block[] = [];
  for (const r of runs) {
    const last = blocks[blocks.length - 1];
    if (last && last.ppn === r.len && last.start + last.nnodes === r.node) last.nnodes++;
    else blocks.push({ start: r.node, nnodes: 1, ppn: r.len });
  }
  return blocks;
}

/** Block layout: node i (in allocation order) holds `tasksPerNode[i]` consecutive ranks. Empty string if no ranks or longer than `limit`. */
export function processMapping(tasksPerNode: readonly number[], limit = V1_MAX_VALUE): string {
  const runs: Array<{ node: number; len: number }> = [];
  for (const n of tasksPerNode) {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`tasks per node must be non-negative integers, got ${n}`);
    if (n > 0) runs.push({ node: runs.length, len: n });
  }
  if (runs.length === 0) return "";
  const s = render(fold(runs));
  return s.length <= limit ? s : "";
}

/**
 * Any layout, given the node of every rank (names or numbers, any order). Picks the shorter of the
 * explicit form and the shortest repeating period. Empty string if no ranks or longer than `limit`.
 */
export function processMappingOfRanks(nodeOfRank: ReadonlyArray<string | number>, limit = V1_MAX_VALUE): string {
  if (nodeOfRank.length === 0) return "";
  const ids = new Map<string | number, number>();
  const seq = nodeOfRank.map((n) => {
    let id = ids.get(n);
    if (id === undefined) ids.set(n, (id = ids.size));
    return id;
  });
  const runs: Array<{ node: number; len: number }> = [];
  for (const id of seq) {
    const last = runs[runs.length - 1];
    if (last && last.node === id) last.len++;
    else runs.push({ node: id, len: 1 });
  }
  const blocks = fold(runs);
  let best = render(blocks);
  for (let k = 1; k < blocks.length; k++) {
    const period = blocks.slice(0, k);
    const cand = render(period);
    if (cand.length >= best.length) break;
    const expanded = expandProcessMapping(cand, seq.length);
    if (expanded && expanded.every((v, i) => v === seq[i])) {
      best = cand;
      break;
    }
  }
  return best.length <= limit ? best : "";
}

/** Node id of every rank, the way MPICH reads the vector; undefined if it does not parse. */
export function expandProcessMapping(mapping: string, size: number): number[] | undefined {
  const m = /^\s*\(\s*vector\s*((?:,\s*\(\s*\d+\s*,\s*\d+\s*,\s*\d+\s*\)\s*)+)\)\s*$/.exec(mapping);
  if (!m?.[1] || size < 0) return undefined;
  const blocks = [...m[1].matchAll(/\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)/g)].map((b) => ({
    start: Number(b[1]),
    nnodes: Number(b[2]),
    ppn: Number(b[3]),
  }));
  const out: number[] = [];
  let foundWrap = false;
  while (out.length < size) {
    const before = out.length;
    let b = 0;
    if (foundWrap) while (b < blocks.length && blocks[b]?.start !== 0) b++;
    for (; b < blocks.length && out.length < size; b++) {
      const blk = blocks[b] as Block;
      if (blk.start === 0) foundWrap = true;
      for (let n = 0; n < blk.nnodes && out.length < size; n++)
        for (let p = 0; p < blk.ppn && out.length < size; p++) out.push(blk.start + n);
    }
    if (out.length === before) return undefined; // MPICH would loop forever here
  }
  return out;
}
