/**
 * The order in which running jobs give nodes to an admit (ebb.ts `planAdmit`): a node at a time
 * from the job whose next node stretches it least (its remaining work at one node fewer, plus its
 * adaptation with the first node; weighed by priority), a job giving nodes while its next one
 * still costs least (ties: the lower job id). The order does not depend on how many nodes an admit
 * needs, so it is worked out once, only as far as the largest need asked, for every admit of a
 * pass that weighs the jobs alike: a pass prices up to 16 backfill admits (backfill-admit.ts),
 * most of them ending "not admitted" after the same first nodes. Pure: the jobs' objects are not
 * written; an order lives for one pass.
 */
import { Heap } from "../../util/heap.ts";
import { sortPairs } from "./common.ts";

/** A running job that may give nodes, as an admit prices it. */
export interface Giver {
  readonly job: { readonly id: number; readonly nodes: number; readonly minNodes: number; readonly priority?: number };
  /** Seconds its remaining work takes at its current size. */
  readonly rem: number;
  /** Its time at m nodes against its time at its current size. */
  ratio(m: number): number;
  /** Seconds an adaptation by d nodes costs it (a fixed part and a part linear in d: `adaptationCost`). */
  cost(d: number): number;
  /** Its time never drops as nodes do and is convex in them (`Speed.slowerWhenSmaller`: Amdahl by MTCT, a profile's fit). */
  readonly slowerWhenSmaller?: boolean;
}

export class GiveOrder<G extends Giver> {
  /** The jobs that can give a node (above their floor), in the order given. */
  readonly pool: readonly G[];
  /** The fewest nodes each job of the pool may keep. */
  private readonly floor: readonly number[];
  /** Nodes they can give together. */
  readonly surplus: number;
  private least: number | undefined;
  // Per job of the pool, once the first nodes are priced (an admit that fails on the surplus or the
  // clock prices none): nodes given so far, the stretch for them and for one more, the next node's stretch.
  private delta = new Int32Array(0);
  private at = new Float64Array(0);
  private next = new Float64Array(0);
  private key = new Float64Array(0);
  /** Its weight (`weight` of its priority): what pricing reads a node at a time. */
  private w = new Float64Array(0);
  private heap: Heap<number> | undefined;
  /** The least any node of the order can add to the stretch (`surelyExceeds`), and each job's first node's stretch; worked out when first read. */
  private step: number | undefined;
  private first: Float64Array | undefined;
  /** Each job's step (the least a node of it adds), and the steps in rising order with the nodes each job can give (`leastStretch`). */
  private steps: Float64Array | undefined;
  private stepOrder: { keys: Float64Array; caps: Float64Array } | undefined;
  /** The stretch summed over the first i nodes given, in the order given (`taken[0]` = 0). */
  private readonly taken: number[] = [0];
  /** The pool index of the job that gives each node. */
  private readonly giver: number[] = [];
  /** The node counts after which one job stops giving: where an admit checks its stretch so far. */
  private readonly checks: number[] = [];

  constructor(
    givers: readonly G[],
    /** How one second of a job of priority p weighs. */
    private readonly weight: (p: number | undefined) => number,
    /** The fewest nodes each giver may keep (a backfill's donor floor), in the givers' order; default their minimum. */
    floors?: readonly number[],
  ) {
    const pool: G[] = [];
    const floor: number[] = [];
    let surplus = 0;
    for (let i = 0; i < givers.length; i++) {
      const c = givers[i]!;
      const f = floors ? floors[i]! : c.job.minNodes;
      if (c.job.nodes <= f) continue;
      pool.push(c);
      floor.push(f);
      surplus += c.job.nodes - f;
    }
    this.pool = pool;
    this.floor = floor;
    this.surplus = surplus;
  }

  /** Seconds the cheapest one-node adaptation among them takes (worked out when first read: an admit short of surplus reads none). */
  get cheapest(): number {
    if (this.least === undefined) {
      let least = Number.POSITIVE_INFINITY;
      for (const c of this.pool) least = Math.min(least, c.cost(1));
      this.least = least;
    }
    return this.least;
  }

  /** The (weighed) stretch of a job giving `give` nodes: its remaining work at the smaller size, plus the adaptation. */
  stretchAt(c: G, give: number): number {
    return give === 0 ? 0 : weighedStretch(c, this.weight(c.job.priority), give);
  }

  /**
   * Giving `need` nodes in this order: the stretch summed at the first point (a job's last node
   * of a run, or the need's last) where it exceeds `limit`, else undefined. `need` <= `surplus`.
   */
  exceeds(need: number, limit: number): number | undefined {
    // Worked out only as far as this admit goes: most stop after a few jobs' nodes.
    for (let k = 0; ; k++) {
      if (k === this.checks.length && !this.extendRun()) break;
      const g = this.checks[k]!;
      if (g >= need) break;
      if (this.taken[g]! > limit) return this.taken[g]!;
    }
    return this.taken[need]! > limit ? this.taken[need]! : undefined;
  }

  /**
   * Whether giving `need` nodes surely stretches the jobs more than `limit` (`exceeds` is then not
   * undefined), by a bound that prices each job's first node only: a node adds its job's time at
   * one node fewer, which grows node by node for a convex time (`slowerWhenSmaller`), so its first
   * node's is the least, plus a step of the adaptation (its fixed part with the first node, then a
   * linear one); so every node of a job adds at least its step, and `need` nodes at least the
   * cheapest steps filled up to what each job can give (`leastStretch`). No bound unless every
   * job's time is convex. A margin far above rounding keeps it on the safe side.
   */
  surelyExceeds(need: number, limit: number): boolean {
    const step = this.step ?? this.priceSteps();
    if (!(step > 0)) return false;
    // The least step for every node settles most; the steps job by job settle more (issue 35: a
    // sixth of the admits priced on the 4,096-node replay worked the order out to fail after all).
    return need * step * (1 - 1e-6) > limit || this.leastStretch(need) * (1 - 1e-6) > limit;
  }

  /** Prices every job's first node (kept for `priceFirst`), each job's step, and the least step of the order. */
  private priceSteps(): number {
    const { pool } = this;
    const first = (this.first = new Float64Array(pool.length));
    const steps = (this.steps = new Float64Array(pool.length));
    let step = Number.POSITIVE_INFINITY;
    for (let i = 0; i < pool.length; i++) {
      const c = pool[i]!;
      const w = this.weight(c.job.priority);
      const time = c.rem * (c.ratio(c.job.nodes - 1) - 1);
      const one = c.cost(1);
      // As `rekey` works it out for the first node.
      first[i] = w * (time + one);
      steps[i] = w * (time + Math.min(0, one, c.cost(2) - one));
      if (!c.slowerWhenSmaller) step = Number.NEGATIVE_INFINITY;
      else step = Math.min(step, steps[i]!);
    }
    this.step = step;
    return step;
  }

  /**
   * The least stretch of `need` nodes if every node of a job added only its step (`priceSteps`;
   * every step > 0): the cheapest steps first, each job's as many times as it can give nodes.
   */
  private leastStretch(need: number): number {
    if (!this.stepOrder) {
      const n = this.pool.length;
      const keys = Float64Array.from(this.steps!);
      const caps = new Float64Array(n);
      for (let i = 0; i < n; i++) caps[i] = this.pool[i]!.job.nodes - this.floor[i]!;
      sortPairs(keys, caps, 0, n);
      this.stepOrder = { keys, caps };
    }
    const { keys, caps } = this.stepOrder;
    let sum = 0;
    for (let i = 0, left = need; i < keys.length && left > 0; i++) {
      const g = Math.min(left, caps[i]!);
      sum += g * keys[i]!;
      left -= g;
    }
    return sum;
  }

  /** The jobs that give the first `need` nodes and how many each, in pool order. */
  given(need: number): { c: G; give: number }[] {
    this.extend(need);
    const count = new Int32Array(this.pool.length);
    for (let i = 0; i < need; i++) count[this.giver[i]!]!++;
    const out: { c: G; give: number }[] = [];
    for (let i = 0; i < count.length; i++) if (count[i]! > 0) out.push({ c: this.pool[i]!, give: count[i]! });
    return out;
  }

  /** The next node's stretch, from the stretch so far (`at`: one price a node). */
  private rekey(i: number): void {
    const c = this.pool[i]!;
    // stretchAt, its weight read once.
    this.next[i] = weighedStretch(c, this.w[i]!, this.delta[i]! + 1);
    this.key[i] = this.next[i]! - this.at[i]!;
  }

  /** Works the order out to at least `n` nodes, or as far as the pool gives. */
  private extend(n: number): void {
    while (this.giver.length < n && this.extendRun());
  }

  /** Prices every job's first node. */
  private priceFirst(): Heap<number> {
    const { pool } = this;
    const n = pool.length;
    this.delta = new Int32Array(n);
    this.at = new Float64Array(n);
    this.next = new Float64Array(n);
    this.w = new Float64Array(n);
    // The job ids, as the heap's order reads them (ties: the lower id).
    const id = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      this.w[i] = this.weight(pool[i]!.job.priority);
      id[i] = pool[i]!.job.id;
    }
    const key = (this.key = new Float64Array(n));
    const heap = (this.heap = new Heap<number>((x, y) => key[x]! < key[y]! || (key[x] === key[y] && id[x]! < id[y]!)));
    const first = this.first;
    for (let i = 0; i < n; i++) {
      if (first) {
        this.next[i] = first[i]!;
        key[i] = first[i]!;
      } else this.rekey(i);
      heap.push(i);
    }
    return heap;
  }

  /** Works out one more run of nodes one job gives; false if the pool has no node left. */
  private extendRun(): boolean {
    const heap = this.heap ?? this.priceFirst();
    const { key, pool, delta } = this;
    if (heap.size === 0) return false;
    const i = heap.pop()!;
    const c = pool[i]!;
    // It gives nodes while its next one still costs least (the heap's order: key, then job id), as popping it again would.
    for (;;) {
      this.taken.push(this.taken[this.taken.length - 1]! + key[i]!);
      this.giver.push(i);
      delta[i]!++;
      this.at[i] = this.next[i]!;
      if (c.job.nodes - delta[i]! <= this.floor[i]!) break;
      this.rekey(i);
      const top = heap.peek();
      if (top !== undefined && !heap.before(i, top)) {
        heap.push(i);
        break;
      }
    }
    this.checks.push(this.giver.length);
    return true;
  }
}

/** The stretch of `c` giving `give` nodes (> 0), its seconds weighing `w`: its remaining work at the smaller size, plus the adaptation. */
function weighedStretch(c: Giver, w: number, give: number): number {
  return w * (c.rem * (c.ratio(c.job.nodes - give) - 1) + c.cost(give));
}
