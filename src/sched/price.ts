/**
 * What a node-second is worth while jobs wait: the node price. When the machine is the bottleneck,
 * every node-second a running job does not use lets the queue drain sooner: spread over the
 * `upNodes` nodes, it starts each of the `waiting` jobs about 1/upNodes s earlier. So a node-second
 * costs λ = waiting / upNodes seconds of turnaround (summed over the queue), and nothing when no
 * job waits. A malleable job's size is then priced as its own remaining time plus λ times the
 * node-seconds it will use (Lagrangian relaxation of "minimise the summed turnaround subject to
 * the machine's capacity"; the queue's gain is the whole queue's, not only its head's):
 *   F(m) = R(m) + c + λ (m R(m) + max(n, m) c),
 * R(m) its remaining time at m nodes, c the adaptation from n to m (0 when m = n; the job makes no
 * progress meanwhile and holds the larger of both sizes). With λ = 0 only its own time counts (grow
 * into idle nodes); the longer the queue, the more a size that uses fewer node-seconds for its work
 * is worth (shrink the inefficient jobs first). Pure.
 */

/** A running job as the price sees it. */
export interface Priced {
  /** Nodes it holds now. */
  n: number;
  /** Seconds its remaining work takes at n. */
  rem: number;
  /** T(m) / T(n). */
  ratio(m: number): number;
  /** Seconds an adaptation moving d nodes costs. */
  cost(d: number): number;
  /** Its time never drops as nodes do (`Speed.slowerWhenSmaller`): R(m) >= R(n − 1) at every m < n. */
  slowerWhenSmaller?: boolean;
}

/** λ: seconds of summed turnaround one node-second is worth with `waiting` jobs queued on `upNodes` nodes. */
export function nodePrice(waiting: number, upNodes: number): number {
  return upNodes > 0 && waiting > 0 ? waiting / upNodes : 0;
}

/** Remaining time at m nodes. */
export function remAt(j: Priced, m: number): number {
  return m === j.n ? j.rem : j.rem * j.ratio(m);
}

/** F(m), in seconds of summed turnaround (see the file's comment). */
export function price(j: Priced, m: number, lambda: number): number {
  const c = m === j.n ? 0 : j.cost(Math.abs(m - j.n));
  const r = remAt(j, m);
  return r + c + lambda * (m * r + Math.max(j.n, m) * c);
}

export interface Shrink {
  to: number;
  /** F(n) − F(to): what the queue and the job gain together (s). */
  gain: number;
  /** The job's own stretch: R(to) − R(n) + c (s). */
  stretch: number;
  /** Seconds the adaptation costs. */
  cost: number;
  /** Node-seconds its remaining work saves (n R(n) − to R(to)). */
  saved: number;
}

/** Sizes from lo to hi worth pricing: all of them when few, else 65 spread evenly (both ends included). */
export function sizesBetween(lo: number, hi: number): number[] {
  return Array.from({ length: sizeCount(lo, hi) }, (_, i) => sizeAt(lo, hi, i));
}

/** How many sizes `sizesBetween(lo, hi)` gives. */
function sizeCount(lo: number, hi: number): number {
  return hi < lo ? 0 : Math.min(hi - lo, 64) + 1;
}

/** The i-th of them (steps of span/64 > 1 when spread, so no two are the same). */
function sizeAt(lo: number, hi: number, i: number): number {
  const span = hi - lo;
  return span <= 64 ? lo + i : lo + Math.round((span * i) / 64);
}

/**
 * The size in [lo, n − 1] with the lowest price (the first of `sizesBetween`'s if two tie), if
 * shrinking to it gains more than its adaptation (the margin: the adaptation may have to be undone
 * when the queue empties). The price is convex in the size for every speed ebb reads — T(m) =
 * a + b m + c/m with b, c >= 0 (Amdahl by MTCT, a profile's fit, a declared model) plus an
 * adaptation linear in the nodes moved — so the gains over the sizes rise, then fall: a binary
 * search on their slope finds the first largest in about 14 prices instead of up to 65.
 */
export function bestShrink(j: Priced, lo: number, lambda: number): Shrink | undefined {
  if (!(lambda > 0) || lo >= j.n) return undefined;
  const here = price(j, j.n, lambda);
  // At any size m < n: its time R(m) >= R(n) and its work's node-seconds m R(m) >= lo R(lo) (no
  // model ebb reads is superlinear), the adaptation >= one node's. Bounding the gain by that costs
  // one price; a job that cannot gain its cheapest adaptation is done.
  const one = j.cost(1);
  const atLo = lambda * lo * remAt(j, lo);
  if (here - j.rem - atLo - one * (1 + lambda * j.n) <= one) return undefined;
  const hi = j.n - 1;
  // A time that never drops with nodes is at least R(n − 1) at every size tried: a bound one
  // ratio more, which settles a third of the jobs on a long queue (the margin keeps rounding safe).
  if (j.slowerWhenSmaller && here - remAt(j, hi) - atLo - one * (1 + lambda * j.n) + 1e-9 * (Math.abs(here) + 1) <= one) return undefined;
  const gainAt = (i: number): number => here - price(j, sizeAt(lo, hi, i), lambda);
  let a = 0;
  let b = sizeCount(lo, hi) - 1;
  while (a < b) {
    const mid = (a + b) >> 1;
    if (gainAt(mid) >= gainAt(mid + 1)) b = mid;
    else a = mid + 1;
  }
  const m = sizeAt(lo, hi, a);
  const gain = gainAt(a);
  const cost = j.cost(j.n - m);
  return gain > cost ? { to: m, gain, stretch: remAt(j, m) - j.rem + cost, cost, saved: j.n * j.rem - m * remAt(j, m) } : undefined;
}

export interface MoldableWorth {
  /** Seconds the job itself ends later by starting now at k than at its size when it could (negative: sooner). */
  ownLoss: number;
  /** Seconds of the others' summed turnaround gained: λ × the node-seconds of its work moved into nodes idle until then. */
  queueGain: number;
  ok: boolean;
}

/**
 * Starting a waiting job now on k nodes, below the `want` it asked for, instead of at `waitStart`
 * (when it could start at `want`). Its time at k is `limit × ratio` (ratio = T(k)/T(want) ≥ 1 by
 * its model, or want/k, the bound that time grows at most linearly as nodes drop). The k nodes are
 * idle until `waitStart` otherwise, so the node-seconds of its work done before then are capacity
 * the others gain at λ each (λ: `nodePrice` of the jobs that still wait). It starts if the queue's
 * gain exceeds its own loss.
 */
export function moldableWorth(now: number, waitStart: number, limit: number, ratio: number, k: number, lambda: number): MoldableWorth {
  const endNow = now + limit * Math.max(1, ratio);
  const endWaiting = waitStart + limit;
  const ownLoss = endNow - endWaiting;
  const queueGain = lambda > 0 ? lambda * k * Math.min(Math.max(0, waitStart - now), limit * Math.max(1, ratio)) : 0;
  return { ownLoss, queueGain, ok: queueGain > ownLoss };
}

/**
 * How many jobs a node-second saved now lets start earlier: the `waiting` jobs, and those expected
 * to arrive before the backlog ahead of them clears (they queue behind it too). The backlog is
 * `work` node-seconds (the running jobs' remaining work plus the waiting jobs' size × limit),
 * spread over the machine; the arrival rate is read off the queue itself: the waiting jobs arrived
 * over the time since the oldest of them was submitted (at least `minSpan` s). Nothing waits: 0.
 */
export function queueReach(now: number, upNodes: number, waiting: number, oldestSubmit: number, work: number, minSpan: number): number {
  if (waiting <= 0 || upNodes <= 0) return 0;
  const rate = waiting / Math.max(minSpan, now - oldestSubmit);
  return waiting + rate * (work / upNodes);
}
