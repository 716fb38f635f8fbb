/**
 * Moving a global array from one layout to another (layout.ts): which old rank sends which
 * elements to which new rank, and in which round. Pure; redistribute.ts executes it.
 *
 * The pieces come from one merge of the two layouts' runs (both in global order). Everything one
 * old rank sends one new rank is one message; the pieces of a message are in global order on both
 * sides, so the receiver unpacks what the sender packed without any index in the message.
 *
 * Rounds: the messages are the edges of a bipartite graph (old ranks | new ranks), coloured so no
 * two edges of one colour share a vertex: in a round every old rank sends at most one message and
 * every new rank receives at most one (ReSHAPE's contention-free schedule). König's theorem says
 * max-degree colours suffice; the alternating-path recolouring below finds such a colouring.
 * A rank that is both old rank r and new rank r (a staying rank) copies its own piece locally.
 */
import type { Layout } from "./layout.ts";

export interface Message {
  /** Old rank that sends. */
  src: number;
  /** New rank that receives. */
  dst: number;
  /** Flat [srcOffset, dstOffset, length] per piece, in global order. */
  pieces: number[];
  /** Elements in the message. */
  count: number;
  /** Round it is sent in; -1 for a local copy. */
  round: number;
}

export interface Plan {
  oldSize: number;
  newSize: number;
  /** Old rank r and new rank r are one process for r < staying. */
  staying: number;
  newLengths: number[];
  messages: Message[];
  /** Messages that cross processes, by round. */
  rounds: Message[][];
}

/**
 * The plan for moving from `from` to `to`; `staying` (default: the smaller size) says which old
 * and new ranks are the same process.
 */
export function planMove(from: Layout, to: Layout, staying = Math.min(from.size, to.size)): Plan {
  if (from.length !== to.length) throw new RangeError(`layouts: the old one has ${from.length} elements, the new one ${to.length}`);
  const a = from.runs();
  const b = to.runs();
  const byPair = new Map<number, Message>();
  const messages: Message[] = [];
  let i = 0;
  let j = 0;
  let pos = 0;
  while (i < a.length && j < b.length) {
    const aEnd = a[i]! + a[i + 1]!;
    const bEnd = b[j]! + b[j + 1]!;
    const end = Math.min(aEnd, bEnd);
    const len = end - pos;
    if (len > 0) {
      const src = a[i + 2]!;
      const dst = b[j + 2]!;
      const so = a[i + 3]! + (pos - a[i]!);
      const dO = b[j + 3]! + (pos - b[j]!);
      const key = src * 65536 + dst;
      let m = byPair.get(key);
      if (!m) {
        m = { src, dst, pieces: [], count: 0, round: -1 };
        byPair.set(key, m);
        messages.push(m);
      }
      const p = m.pieces;
      const n = p.length;
      // Coalesce with the previous piece when it continues it on both sides.
      if (n > 0 && p[n - 3]! + p[n - 1]! === so && p[n - 2]! + p[n - 1]! === dO) p[n - 1]! += len;
      else p.push(so, dO, len);
      m.count += len;
    }
    pos = end;
    if (aEnd === end) i += 4;
    if (bEnd === end) j += 4;
  }
  const remote = messages.filter((m) => !(m.src === m.dst && m.src < staying));
  const rounds = colour(remote, from.size, to.size);
  const newLengths = Array.from({ length: to.size }, (_, r) => to.localLength(r));
  return { oldSize: from.size, newSize: to.size, staying, newLengths, messages, rounds };
}

/** Bipartite edge colouring with max-degree colours; sets each message's round. */
function colour(edges: Message[], left: number, right: number): Message[][] {
  const deg = (n: number, side: (m: Message) => number) => {
    const d = new Array<number>(n).fill(0);
    for (const e of edges) d[side(e)]!++;
    return Math.max(0, ...d);
  };
  const D = Math.max(deg(left, (m) => m.src), deg(right, (m) => m.dst));
  // at[side][vertex * D + c]: the edge of colour c at that vertex, or undefined.
  const L: (Message | undefined)[] = new Array(left * D);
  const R: (Message | undefined)[] = new Array(right * D);
  const free = (t: (Message | undefined)[], v: number) => {
    for (let c = 0; c < D; c++) if (!t[v * D + c]) return c;
    throw new Error("schedule: no free colour (degree miscounted)");
  };
  for (const e of edges) {
    const a = free(L, e.src);
    const b = free(R, e.dst);
    if (a !== b && R[e.dst * D + a]) {
      // Flip the a/b path that starts at e.dst with colour a; it cannot reach e.src (König).
      const path: Message[] = [];
      let v = e.dst;
      let onRight = true;
      let c = a;
      for (;;) {
        const next = onRight ? R[v * D + c] : L[v * D + c];
        if (!next) break;
        path.push(next);
        v = onRight ? next.src : next.dst;
        onRight = !onRight;
        c = c === a ? b : a;
      }
      for (const m of path) {
        L[m.src * D + m.round] = undefined;
        R[m.dst * D + m.round] = undefined;
      }
      for (const m of path) {
        m.round = m.round === a ? b : a;
        L[m.src * D + m.round] = m;
        R[m.dst * D + m.round] = m;
      }
    }
    e.round = a;
    L[e.src * D + a] = e;
    R[e.dst * D + a] = e;
  }
  const rounds: Message[][] = Array.from({ length: D }, () => []);
  for (const e of edges) rounds[e.round]!.push(e);
  return rounds;
}

/**
 * Runs a plan on plain arrays (one per old rank): what the ranks would hold afterwards. For tests
 * and for checking a layout; the real move is redistribute.ts.
 */
export function applyPlan<T extends { length: number; set(a: ArrayLike<number | bigint>, o?: number): void; subarray(s: number, e: number): T }>(
  plan: Plan,
  locals: T[],
  make: (n: number) => T,
): T[] {
  const out = plan.newLengths.map((n) => make(n));
  for (const m of plan.messages) {
    const src = locals[m.src]!;
    const dst = out[m.dst]!;
    for (let k = 0; k < m.pieces.length; k += 3) {
      const [so, dO, len] = [m.pieces[k]!, m.pieces[k + 1]!, m.pieces[k + 2]!];
      dst.set(src.subarray(so, so + len) as unknown as ArrayLike<number>, dO);
    }
  }
  return out;
}
