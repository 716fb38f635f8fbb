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
import { KeyForest, forest } from "./nest.ts";
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
  /**
   * Key of the loop this one is nested in, if any (by head chain or by a re-entry from it), as the
   * lowest rank that runs it sees it. The loops' parents form a forest (`nest.ts`).
   */
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

/**
 * Signatures by the exact token sequence, without building it: a 2 x 32-bit hash of the members'
 * (type, site) — p2p/one-sided as one token — finds the cached signature, and the stored members
 * are compared on a hit, so a collision costs a rebuild, never a wrong key.
 */
interface SigEntry {
  types: Uint8Array;
  sites: Float64Array;
  sig: string;
}
const byHash = new Map<number, SigEntry>();

const M1 = 0x9e3779b1;
const M2 = 0x85ebca77;
function mix(h: number, x: number, m: number): number {
  h = Math.imul(h ^ x, m);
  return (h ^ (h >>> 15)) | 0;
}

function cachedSignature(rows: readonly CfgNodeRow[], members: Int32Array, from: number, to: number): string {
  let h1 = 0x1234567 | 0;
  let h2 = 0x7654321 | 0;
  for (let k = from; k < to; k++) {
    const r = rows[members[k]!]!;
    if (collapsible(r.type)) {
      h1 = mix(h1, 1, M1);
      h2 = mix(h2, 1, M2);
    } else {
      const lo = r.site | 0;
      const hi = ((r.site - (r.site >>> 0)) / 0x100000000) | 0;
      h1 = mix(mix(mix(h1, 2 + r.type, M1), lo, M1), hi, M1);
      h2 = mix(mix(mix(h2, 2 + r.type, M2), hi, M2), lo, M2);
    }
  }
  const key = (h1 >>> 0) * 0x200000 + ((h2 >>> 0) & 0x1fffff);
  const n = to - from;
  const e = byHash.get(key);
  if (e && e.types.length === n) {
    let same = true;
    for (let k = 0; k < n && same; k++) {
      const r = rows[members[from + k]!]!;
      const c = collapsible(r.type);
      same = c ? collapsible(e.types[k]! as OpType) : e.types[k] === r.type && e.sites[k] === r.site;
    }
    if (same) return e.sig;
  }
  const tokens: string[] = new Array(n);
  const types = new Uint8Array(n);
  const sites = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const r = rows[members[from + k]!]!;
    tokens[k] = token(r);
    types[k] = r.type;
    sites[k] = r.site;
  }
  const sig = signature(tokens);
  if (byHash.size > 4096) byHash.clear();
  byHash.set(key, { types, sites, sig });
  return sig;
}

/** Position of a member in its loop: the head first, then by mean offset from the head, then by creation. */
function before(rows: readonly CfgNodeRow[], head: number, a: number, b: number): number {
  const pos = (i: number) => {
    if (i === head) return -1;
    const r = rows[i]!;
    return r.offsetCount > 0 ? r.offset / r.offsetCount : Number.POSITIVE_INFINITY;
  };
  return pos(a) - pos(b) || rows[a]!.created - rows[b]!.created;
}

/**
 * The loops of one rank's table, with their signatures and the head of the enclosing loop.
 * Linear in the table (no per-loop scans): one site -> row map, members grouped by a counting
 * sort, an order check that is usually all the ordering needed, cached signatures.
 */
/**
 * Site id -> row index: open addressing over typed arrays. Site ids are up to 53-bit integers
 * (object + offset, hashes); a Map with such keys costs ~100 ns per insert, this ~10.
 */
class SiteIndex {
  private keys = new Float64Array(0);
  private vals = new Int32Array(0);
  private mask = 0;

  reset(n: number): void {
    let cap = 16;
    while (cap < 2 * n) cap *= 2;
    if (cap > this.keys.length) {
      this.keys = new Float64Array(cap);
      this.vals = new Int32Array(cap);
    }
    this.mask = cap - 1;
    this.vals.fill(-1, 0, cap);
  }

  private slot(site: number): number {
    const lo = site >>> 0; // site mod 2^32, without a floating-point modulo
    const hi = ((site - lo) / 0x100000000) | 0;
    const h = Math.imul(lo ^ Math.imul(hi, 0x85ebca77), 0x9e3779b1);
    return (h ^ (h >>> 16)) & this.mask;
  }

  set(site: number, i: number): void {
    let s = this.slot(site);
    while (this.vals[s] !== -1 && this.keys[s] !== site) s = (s + 1) & this.mask;
    this.keys[s] = site;
    this.vals[s] = i;
  }

  /** The row of `site`, or -1. */
  get(site: number): number {
    let s = this.slot(site);
    for (;;) {
      const v = this.vals[s]!;
      if (v === -1 || this.keys[s] === site) return v;
      s = (s + 1) & this.mask;
    }
  }
}

/** Scratch space reused across calls (the agent reduces every sampling interval): no allocation per row. */
const scratch = { index: new SiteIndex(), size: 0, parentOf: new Int32Array(0), count: new Int32Array(0), start: new Int32Array(0), fill: new Int32Array(0), members: new Int32Array(0), viaReentry: new Int32Array(0) };

function scratchFor(n: number): typeof scratch {
  if (scratch.size < n + 1) {
    const size = Math.max(n + 1, scratch.size * 2, 64);
    scratch.size = size;
    scratch.parentOf = new Int32Array(size);
    scratch.count = new Int32Array(size);
    scratch.start = new Int32Array(size);
    scratch.fill = new Int32Array(size);
    scratch.members = new Int32Array(2 * size);
    scratch.viaReentry = new Int32Array(size);
  }
  scratch.index.reset(n);
  return scratch;
}

export function rankLoops(cfg: RankCfg): RankLoop[] {
  const rows = cfg.rows;
  const n = rows.length;
  const { index, parentOf, count, start, fill, members, viaReentry } = scratchFor(n);
  for (let i = 0; i < n; i++) index.set(rows[i]!.site, i);
  // The loop a body row belongs to (its immediate head's row, when that is a head), else -1.
  parentOf.fill(-1, 0, n);
  count.fill(0, 0, n + 1);
  let heads = 0;
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    if (r.head) {
      count[i]!++;
      heads++;
    }
    if (r.body && r.headOf !== null) {
      const h = index.get(r.headOf);
      if (h >= 0 && rows[h]!.head) {
        parentOf[i] = h;
        count[h]!++;
      }
    }
  }
  if (heads === 0) return [];
  // Members of loop h: members[start[h] .. start[h+1]), in row order (a counting sort; a row is
  // in at most two loops: its own as a head, its head's as a body node).
  start[0] = 0;
  for (let i = 0; i < n; i++) start[i + 1] = start[i]! + count[i]!;
  fill.set(start.subarray(0, n));
  for (let i = 0; i < n; i++) {
    if (rows[i]!.head) members[fill[i]!++] = i;
    const h = parentOf[i]!;
    if (h >= 0) members[fill[h]!++] = i;
  }
  // Usually already in loop order (created in the order of the first pass); sort only if not.
  const keys = new Map<number, string>();
  for (let h = 0; h < n; h++) {
    if (!rows[h]!.head) continue;
    const from = start[h]!;
    const to = start[h + 1]!;
    let sorted = true;
    for (let k = from + 1; k < to && sorted; k++) sorted = before(rows, h, members[k - 1]!, members[k]!) <= 0;
    if (!sorted) members.subarray(from, to).sort((a, b) => before(rows, h, a, b));
    keys.set(h, cachedSignature(rows, members, from, to));
  }
  // Nesting, as a forest over this rank's loop keys (two loops of one rank may share a key).
  // First by the head chain: a loop whose head is a body node of another is nested in it. Then,
  // for loops that have no parent that way, the dissertation's reading of Fig. 10.2: a member of
  // loop L re-enters another loop's body, so L ran inside that loop's iteration. The first such
  // row (in table order) names L's candidate; a candidate that would make a cycle is refused.
  viaReentry.fill(-1, 0, n);
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    if (r.reentrySource === null) continue;
    const src = index.get(r.reentrySource);
    if (src < 0) continue;
    const target = r.head ? i : r.headOf === null ? -1 : index.get(r.headOf);
    if (target < 0 || !rows[target]!.head) continue;
    // The loops `src` is a member of: its own (if a head) and its head's.
    if (rows[src]!.head && viaReentry[src] === -1 && target !== src) viaReentry[src] = target;
    const p = parentOf[src]!;
    if (p >= 0 && viaReentry[p] === -1 && target !== p) viaReentry[p] = target;
  }
  const nesting = new KeyForest();
  for (let h = 0; h < n; h++) {
    const head = rows[h]!;
    if (!head.head || !head.body || head.headOf === null) continue;
    const p = index.get(head.headOf);
    if (p >= 0 && rows[p]!.head) nesting.propose(keys.get(h)!, keys.get(p)!);
  }
  for (let h = 0; h < n; h++) if (rows[h]!.head && viaReentry[h]! >= 0) nesting.propose(keys.get(h)!, keys.get(viaReentry[h]!)!);
  const origin = cfg.origin ?? 0;
  const out: RankLoop[] = [];
  for (let h = 0; h < n; h++) {
    const head = rows[h]!;
    if (!head.head) continue;
    let reentries = 0;
    for (let k = start[h]!; k < start[h + 1]!; k++) reentries += rows[members[k]!]!.re;
    out.push({
      key: keys.get(h)!,
      head: head.site,
      rank: cfg.rank,
      visits: head.rv + 1,
      iterations: Math.max(0, head.rv + 1 - head.detectedVisits),
      loopTime: head.last - head.detected,
      mpiTime: head.tmtLast,
      last: origin + head.last / 1e6,
      reentries,
      parentKey: nesting.parentOf(keys.get(h)!),
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
        r.parent = parent;
      }
      e.counts.set(l.visits, (e.counts.get(l.visits) ?? 0) + 1);
      r.iterations += l.iterations;
      r.loopTime += l.loopTime;
      r.mpiTime += l.mpiTime;
      r.reentries += l.reentries;
      if (l.last > r.last) r.last = l.last;
    }
  }
  const loops = [...byKey.values()].map(({ loop, counts }) => {
    loop.ranks.sort((a, b) => a - b);
    loop.visitCounts = [...counts].sort((a, b) => a[0] - b[0]);
    loop.visits = mode(loop.visitCounts);
    return loop;
  });
  loops.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { loops: forest(loops) };
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
