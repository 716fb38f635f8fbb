/**
 * Node-local CFG reduction (dissertation §10.2.2): the tables of a node's ranks become one list
 * of loops with rank sets.
 *   1. nodes outside loops are ignored;
 *   2. consecutive point-to-point / one-sided operations collapse into one block (so a rank that
 *      sends then receives matches one that receives then sends);
 *   3. identical loops are combined into one with the set of ranks that run it; their loop time
 *      and MPI time are summed, the visit count is the mode.
 */
import type { CfgNodeRow } from "./detector.ts";
import { OP_TYPE_NAMES, collapsible, type OpType } from "./types.ts";

/** One rank's table, as the detector (or the C library's shared-memory block) gives it. */
export interface RankCfg {
  rank: number;
  rows: readonly CfgNodeRow[];
  /** Epoch ms at the rank's detector time 0 (its times are ns from there); default 0. */
  origin?: number;
}

/** A loop after reduction: what matches across ranks, nodes and time. */
export interface ReducedLoop {
  /** The loop's signature: its members in order, p2p/one-sided runs collapsed, rotation-normalised. */
  key: string;
  /** Site id of the head (of the lowest rank that has the loop). */
  head: number;
  /** Ranks that run this loop, ascending. */
  ranks: number[];
  /** Histogram of the ranks' head-visit counts: `[visits, ranks]` pairs; the mode is `visits`. */
  visitCounts: [number, number][];
  /** Mode of the ranks' head-visit counts. */
  visits: number;
  /**
   * Summed over ranks, from each rank's detection of the loop on: complete iterations, wall time
   * (detection to the last head visit), MPI time (TMT).
   */
  iterations: number;
  loopTime: number;
  mpiTime: number;
  /** Latest head visit over the ranks, epoch ms (which loop is current). */
  last: number;
  /** Key of the loop this one is nested in, if any (by head chain or by a re-entry from it). */
  parent: string | null;
  /** Unexpected re-entries into the loop, summed over ranks. */
  reentries: number;
}

export interface NodeCfg {
  loops: ReducedLoop[];
}

function token(r: CfgNodeRow): string {
  return collapsible(r.type) ? "p2p" : `${OP_TYPE_NAMES[r.type as OpType] ?? "other"}@${r.site}`;
}

/** Least rotation of a sequence (Booth's algorithm, O(n)): the index it starts at. */
function leastRotation(t: readonly string[]): number {
  const n = t.length;
  const f = new Int32Array(2 * n).fill(-1);
  let k = 0;
  for (let j = 1; j < 2 * n; j++) {
    const sj = t[j % n]!;
    let i = f[j - k - 1]!;
    while (i !== -1 && sj !== t[(k + i + 1) % n]) {
      if (sj < t[(k + i + 1) % n]!) k = j - i - 1;
      i = f[i]!;
    }
    if (sj !== t[(k + i + 1) % n]) {
      // i === -1
      if (sj < t[k % n]!) k = j;
      f[j - k] = -1;
    } else f[j - k] = i + 1;
  }
  return k % n;
}

const signatures = new Map<string, string>();

/** Collapses runs of "p2p" (circularly: a loop's end meets its start) and rotates to the least rotation. */
export function signature(tokens: readonly string[]): string {
  const raw = tokens.join(" ");
  const known = signatures.get(raw);
  if (known !== undefined) return known;
  let t = tokens.filter((x, i) => !(x === "p2p" && tokens[(i + tokens.length - 1) % tokens.length] === "p2p"));
  if (t.length === 0) t = ["p2p"];
  const k = leastRotation(t);
  const sig = [...t.slice(k), ...t.slice(0, k)].join(" ");
  if (signatures.size > 4096) signatures.clear();
  signatures.set(raw, sig);
  return sig;
}

export interface RankLoop {
  key: string;
  head: number;
  rank: number;
  visits: number;
  /** Complete iterations since detection (head visits after the detecting one). */
  iterations: number;
  loopTime: number;
  mpiTime: number;
  last: number;
  reentries: number;
  parentKey: string | null;
}

/** The loops of one rank's table, with their signatures and the head of the enclosing loop. */
export function rankLoops(cfg: RankCfg): RankLoop[] {
  const bySite = new Map<number, CfgNodeRow>();
  for (const r of cfg.rows) bySite.set(r.site, r);
  const members = new Map<number, CfgNodeRow[]>();
  for (const r of cfg.rows) {
    if (r.head) (members.get(r.site) ?? members.set(r.site, []).get(r.site)!).push(r);
    if (r.body && r.headOf !== null && bySite.get(r.headOf)?.head) {
      (members.get(r.headOf) ?? members.set(r.headOf, []).get(r.headOf)!).push(r);
    }
  }
  const loopOfSite = (site: number): number | null => {
    const r = bySite.get(site);
    if (!r) return null;
    return r.head ? r.site : r.headOf;
  };
  const keys = new Map<number, string>();
  for (const [h, ms] of members) {
    const pos = (r: CfgNodeRow) => (r.site === h ? -1 : r.offsetCount > 0 ? r.offset / r.offsetCount : Number.POSITIVE_INFINITY);
    const ordered = [...ms].sort((a, b) => pos(a) - pos(b) || a.created - b.created);
    keys.set(h, signature(ordered.map(token)));
  }
  const out: RankLoop[] = [];
  for (const [h, ms] of members) {
    const head = bySite.get(h)!;
    let parentHead: number | null = head.body ? head.headOf : null;
    if (parentHead === null) {
      // Nested the dissertation's way: a member of this loop re-enters another loop's body.
      const mine = new Set(ms.map((m) => m.site));
      for (const r of cfg.rows) {
        if (r.reentrySource !== null && mine.has(r.reentrySource)) {
          const l = loopOfSite(r.site);
          if (l !== null && l !== h) {
            parentHead = l;
            break;
          }
        }
      }
    }
    out.push({
      key: keys.get(h)!,
      head: h,
      rank: cfg.rank,
      visits: head.rv + 1,
      iterations: Math.max(0, head.rv + 1 - head.detectedVisits),
      loopTime: head.last - head.detected,
      mpiTime: head.tmtLast,
      last: (cfg.origin ?? 0) + head.last / 1e6,
      reentries: ms.reduce((a, m) => a + m.re, 0),
      parentKey: parentHead === null ? null : (keys.get(parentHead) ?? null),
    });
  }
  return out;
}

/** Mode of a `[value, count]` histogram (ties: the larger value). */
export function mode(hist: readonly [number, number][]): number {
  let best = 0;
  let bestN = -1;
  for (const [v, n] of hist) if (n > bestN || (n === bestN && v > best)) [best, bestN] = [v, n];
  return best;
}

export function addCounts(into: Map<number, number>, pairs: readonly [number, number][]): void {
  for (const [v, n] of pairs) into.set(v, (into.get(v) ?? 0) + n);
}

/** §10.2.2: the tables of one node's ranks -> its reduced loops (sorted by key). */
export function reduceNode(ranks: readonly RankCfg[]): NodeCfg {
  const byKey = new Map<string, { loop: ReducedLoop; counts: Map<number, number>; lowest: number }>();
  for (const cfg of ranks) {
    for (const l of rankLoops(cfg)) {
      const parent = l.parentKey;
      let e = byKey.get(l.key);
      if (!e) {
        e = {
          loop: { key: l.key, head: l.head, ranks: [], visitCounts: [], visits: 0, iterations: 0, loopTime: 0, mpiTime: 0, last: l.last, parent, reentries: 0 },
          counts: new Map(),
          lowest: l.rank,
        };
        byKey.set(l.key, e);
      }
      const r = e.loop;
      if (!r.ranks.includes(l.rank)) r.ranks.push(l.rank);
      if (l.rank < e.lowest) {
        e.lowest = l.rank;
        r.head = l.head;
      }
      e.counts.set(l.visits, (e.counts.get(l.visits) ?? 0) + 1);
      r.iterations += l.iterations;
      r.loopTime += l.loopTime;
      r.mpiTime += l.mpiTime;
      r.reentries += l.reentries;
      if (l.last > r.last) r.last = l.last;
      if (r.parent === null && parent !== null && parent !== l.key) r.parent = parent;
    }
  }
  const loops = [...byKey.values()].map(({ loop, counts }) => {
    loop.ranks.sort((a, b) => a - b);
    loop.visitCounts = [...counts].sort((a, b) => a[0] - b[0]);
    loop.visits = mode(loop.visitCounts);
    return loop;
  });
  loops.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { loops };
}

/** "0-3,5,7-8" */
export function rankRange(ranks: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < ranks.length; ) {
    let j = i;
    while (j + 1 < ranks.length && ranks[j + 1] === ranks[j]! + 1) j++;
    parts.push(j === i ? `${ranks[i]}` : `${ranks[i]}-${ranks[j]}`);
    i = j + 1;
  }
  return parts.join(",");
}
