/**
 * What is free on each node (cores, memory, GPUs) and where a request goes: Slurm's cons_tres
 * placement with best fit. Built from the up nodes and the running jobs' shares (a running job
 * without shares holds its nodes whole); `place` finds nodes for a request, `take` and `give`
 * change what is free. Pure data, no clock.
 *
 * Shapes, as Slurm spreads tasks:
 * - a node count with tasks per node (`-N 2 --ntasks-per-node 4`, an elastic job's per-node
 *   shape): that many tasks on each of that many nodes;
 * - a node count and tasks (`-N 2 -n 3`): the tasks spread as evenly as they go (2 + 1);
 * - tasks only (`-n 12`): on as few nodes as hold them, the largest free first and the rest on
 *   the node it fits best;
 * - exclusive (`--exclusive`, a job without a request): idle nodes, taken whole.
 * Best fit: among the nodes that hold a part, the one left with the least (the sum of the free
 * fractions of cores, GPUs and memory it keeps) comes first, ties in name order; a job without
 * GPUs so keeps off GPU nodes, and small jobs fill partly used nodes before idle ones.
 *
 * A reservation's nodes carry a budget (`reserve`): what a job running past the reservation's
 * start may still use there (the node's free resources at that time less the reservation's
 * share). `place(..., { past: true })` keeps within it; other placements take the reserved cores
 * and GPUs first, so the budget lasts.
 */
import { amountFor, defaultMemPerCpu, hasFeatures, type Amount, type NodeFree, type NodeResources, type NodeShare, type ResourceRequest } from "../domain/resources.ts";

export interface PoolNode {
  readonly name: string;
  readonly total: NodeResources;
  /** Position in name order (ties of best fit go to the lower). */
  readonly index: number;
  /** 1 where the core (GPU) is free. */
  readonly cores: Uint8Array;
  freeCores: number;
  memMiB: number;
  readonly gpus: Uint8Array;
  freeGpus: number;
  /** Shares held on it: 0 is idle (an exclusive job may take it whole). */
  holders: number;
  /** What a job running past a reservation's start may use here; absent: all that is free. */
  budget?: Budget;
}

interface Budget {
  /** 1 where the core (GPU) may be held past the reservation's start. */
  cores: Uint8Array;
  /** Cores free now and in the budget. */
  freeCores: number;
  memMiB: number;
  gpus: Uint8Array;
  freeGpus: number;
}

export interface Placement {
  nodes: string[];
  shares: NodeShare[];
  /** Tasks on each node. */
  tasks: number[];
}

export interface PlaceOptions {
  /** Exactly this many nodes (a job's node count, a range's size); default the request's `nodes`, else as few as hold its tasks. */
  nodes?: number;
  /** The job may run past a reservation's start: keep within the reservations' budgets. */
  past?: boolean;
  /** Nodes it may not use (sbatch --exclude, the nodes a growing job holds). */
  exclude?: ReadonlySet<string>;
  /** Nodes it must use, all of them (sbatch --nodelist). */
  nodelist?: readonly string[];
}

/** A job without a request, as placement sees it: whole nodes. */
export const WHOLE: ResourceRequest = { exclusive: true, cpusPerTask: 1 };

/** A node that reports no resources, in a pool: its cpus, no memory accounted, no GPUs. */
export function resourcesOf(node: { cpus?: number; resources?: NodeResources }): NodeResources {
  return node.resources ?? { cores: Math.max(1, node.cpus ?? 1), memMiB: 0, gpus: [], features: [] };
}

export class Pool {
  readonly nodes: PoolNode[];
  private readonly byName: Map<string, PoolNode>;
  /** Nodes with no share on them. */
  idle: number;
  /** Free cores and GPUs on all nodes together. */
  freeCores = 0;
  freeGpus = 0;

  private constructor(nodes: PoolNode[], readonly defMemPerCpu: number | undefined) {
    this.nodes = nodes;
    this.byName = new Map(nodes.map((n) => [n.name, n]));
    this.idle = 0;
    for (const n of nodes) {
      if (n.holders === 0) this.idle++;
      this.freeCores += n.freeCores;
      this.freeGpus += n.freeGpus;
    }
  }

  /**
   * The up nodes (in the order given: name order) less what the running jobs hold: their shares,
   * or their nodes whole when they have none. Nodes that are not up are not in the pool.
   */
  static of(nodes: readonly { name: string; up: boolean; cpus?: number; resources?: NodeResources }[], running: readonly { nodeNames: readonly string[]; shares?: readonly NodeShare[] }[], defMemPerCpu?: number): Pool {
    const list: PoolNode[] = [];
    for (const n of nodes) {
      if (!n.up) continue;
      const total = resourcesOf(n);
      list.push({ name: n.name, total, index: list.length, cores: new Uint8Array(total.cores).fill(1), freeCores: total.cores, memMiB: total.memMiB, gpus: new Uint8Array(total.gpus.length).fill(1), freeGpus: total.gpus.length, holders: 0 });
    }
    const pool = new Pool(list, defMemPerCpu);
    for (const j of running) pool.take(j.shares ?? pool.wholeShares(j.nodeNames));
    return pool;
  }

  clone(): Pool {
    const nodes = this.nodes.map((n) => ({ ...n, cores: n.cores.slice(), gpus: n.gpus.slice(), budget: n.budget && { ...n.budget, cores: n.budget.cores.slice(), gpus: n.budget.gpus.slice() } }));
    return new Pool(nodes, this.defMemPerCpu);
  }

  node(name: string): PoolNode | undefined {
    return this.byName.get(name);
  }

  /** What is free on a node, as `domain/resources.ts` `fitOn` reads it. */
  free(name: string): NodeFree | undefined {
    const n = this.byName.get(name);
    if (!n) return undefined;
    return { name, total: n.total, cores: indices(n.cores), memMiB: n.memMiB, gpus: indices(n.gpus), idle: n.holders === 0 };
  }

  /** Shares that hold `names` whole (those in the pool). */
  wholeShares(names: readonly string[]): NodeShare[] {
    const out: NodeShare[] = [];
    for (const name of names) {
      const n = this.byName.get(name);
      if (n) out.push(wholeShare(n));
    }
    return out;
  }

  /** `shares` are held from now on (cores and GPUs already held stay so; nothing is checked). */
  take(shares: readonly NodeShare[], past = false): void {
    for (const s of shares) {
      const n = this.byName.get(s.node);
      if (!n) continue;
      const b = n.budget;
      for (const i of s.cores) {
        if (n.cores[i] !== 1) continue;
        n.cores[i] = 0;
        n.freeCores--;
        this.freeCores--;
        if (b && b.cores[i] === 1) b.freeCores--;
      }
      for (const i of s.gpus) {
        if (n.gpus[i] !== 1) continue;
        n.gpus[i] = 0;
        n.freeGpus--;
        this.freeGpus--;
        if (b && b.gpus[i] === 1) b.freeGpus--;
      }
      n.memMiB -= s.memMiB;
      if (b && past) b.memMiB -= s.memMiB;
      if (n.holders++ === 0) this.idle--;
    }
  }

  /** `shares` are given back (a job ends or shrinks). */
  give(shares: readonly NodeShare[]): void {
    for (const s of shares) {
      const n = this.byName.get(s.node);
      if (!n) continue;
      for (const i of s.cores) {
        if (n.cores[i] !== 0) continue;
        n.cores[i] = 1;
        n.freeCores++;
        this.freeCores++;
        if (n.budget?.cores[i] === 1) n.budget.freeCores++;
      }
      for (const i of s.gpus) {
        if (n.gpus[i] !== 0) continue;
        n.gpus[i] = 1;
        n.freeGpus++;
        this.freeGpus++;
        if (n.budget?.gpus[i] === 1) n.budget.freeGpus++;
      }
      n.memMiB += s.memMiB;
      if (n.holders > 0 && --n.holders === 0) this.idle++;
    }
  }

  /**
   * A reservation: `shares` will be taken at its start, when the nodes have what `then` (this pool
   * as it will be then) has free. On each of them a job that runs past the start may use only what
   * is left over then.
   */
  reserve(shares: readonly NodeShare[], then: Pool): void {
    for (const s of shares) {
      const n = this.byName.get(s.node);
      const f = then.byName.get(s.node);
      if (!n || !f) continue;
      const cores = f.cores.slice();
      for (const i of s.cores) cores[i] = 0;
      const gpus = f.gpus.slice();
      for (const i of s.gpus) gpus[i] = 0;
      n.budget = { cores, freeCores: countBoth(n.cores, cores), memMiB: f.memMiB - s.memMiB, gpus, freeGpus: countBoth(n.gpus, gpus) };
    }
  }

  /** Tasks of `req` node `n` can hold now, for a job on `nodesInJob` nodes. */
  capacity(n: PoolNode, req: ResourceRequest, nodesInJob: number, past = false): number {
    if (req.constraint && !hasFeatures(n.total, req.constraint)) return 0;
    const b = past ? n.budget : undefined;
    let cores: number;
    let mem: number;
    if (req.exclusive) {
      if (n.holders > 0 || b) return 0;
      cores = n.total.cores;
      mem = n.total.memMiB;
    } else {
      cores = b ? b.freeCores : n.freeCores;
      mem = b ? Math.min(n.memMiB, b.memMiB) : n.memMiB;
    }
    const cpt = Math.max(1, req.cpusPerTask);
    let cap = Math.floor(cores / cpt);
    if (cap === 0) return 0;
    if (req.memPerNodeMiB !== undefined) {
      if (req.memPerNodeMiB > mem) return 0;
    } else {
      const perTask = cpt * (req.memPerCpuMiB ?? defaultMemPerCpu(n.total, this.defMemPerCpu));
      if (perTask > 0) cap = Math.min(cap, Math.floor(mem / perTask));
    }
    if (req.gpusPerNode !== undefined || req.gpusPerTask !== undefined || req.gpus !== undefined) {
      const g = this.usableGpus(n, req, b !== undefined, req.exclusive).length;
      if (req.gpusPerNode !== undefined && req.gpusPerNode > g) return 0;
      if (req.gpusPerTask !== undefined && req.gpusPerTask > 0) cap = Math.min(cap, Math.floor(g / req.gpusPerTask));
      if (req.gpus !== undefined && Math.ceil(req.gpus / nodesInJob) > g) return 0;
    }
    return Math.max(0, cap);
  }

  /**
   * Where `req` goes now (best fit), or undefined if it does not fit. Nothing is taken: pass the
   * placement to `take`.
   */
  place(req: ResourceRequest, opts: PlaceOptions = {}): Placement | undefined {
    const count = opts.nodes ?? req.nodes;
    const candidates = opts.exclude || opts.nodelist ? this.nodes.filter((n) => !opts.exclude?.has(n.name)) : this.nodes;
    if (opts.nodelist) for (const name of opts.nodelist) if (!this.byName.has(name) || opts.exclude?.has(name)) return undefined;
    if (count !== undefined) {
      if (count < 1 || (opts.nodelist && opts.nodelist.length > count)) return undefined;
      const tasks = req.tasksPerNode !== undefined ? req.tasksPerNode * count : Math.max(count, req.tasks ?? count);
      const per = req.tasksPerNode;
      // Tasks spread evenly: the first `tasks % count` nodes one more.
      const hi = per ?? Math.ceil(tasks / count);
      const lo = per ?? Math.floor(tasks / count);
      const many = per !== undefined ? count : tasks % count === 0 ? count : tasks % count;
      return this.placeFixed(req, candidates, count, hi, many, lo, opts);
    }
    return this.placePacked(req, candidates, Math.max(1, req.tasks ?? 1), opts);
  }

  /** How many nodes of `candidates` could each take `perNode` tasks of `req` now. */
  countFitting(req: ResourceRequest, perNode: number, nodesInJob: number, past = false, exclude?: ReadonlySet<string>): number {
    let k = 0;
    for (const n of this.nodes) if (!exclude?.has(n.name) && this.capacity(n, req, nodesInJob, past) >= perNode) k++;
    return k;
  }

  /** `many` nodes with `hi` tasks and `count - many` with `lo`; the nodelist's nodes first. */
  private placeFixed(req: ResourceRequest, candidates: readonly PoolNode[], count: number, hi: number, many: number, lo: number, opts: PlaceOptions): Placement | undefined {
    const past = opts.past ?? false;
    const chosen: { n: PoolNode; tasks: number }[] = [];
    const used = new Set<PoolNode>();
    let needHi = many;
    let needLo = count - many;
    for (const name of opts.nodelist ?? []) {
      const n = this.byName.get(name)!;
      const cap = this.capacity(n, req, count, past);
      if (needHi > 0 && cap >= hi) {
        needHi--;
        chosen.push({ n, tasks: hi });
      } else if (needLo > 0 && cap >= lo) {
        needLo--;
        chosen.push({ n, tasks: lo });
      } else return undefined;
      used.add(n);
    }
    const fits: { n: PoolNode; cap: number; score: number }[] = [];
    for (const n of candidates) {
      if (used.has(n)) continue;
      const cap = this.capacity(n, req, count, past);
      if (cap >= lo && cap > 0) fits.push({ n, cap, score: 0 });
    }
    if (fits.length < needHi + needLo) return undefined;
    const pick = (tasks: number, k: number): boolean => {
      if (k === 0) return true;
      const a = (n: PoolNode) => amountFor(req, tasks, n.total, count, this.defMemPerCpu);
      const ok = fits.filter((f) => !used.has(f.n) && f.cap >= tasks);
      if (ok.length < k) return false;
      for (const f of ok) f.score = this.leftover(f.n, req, a(f.n), past);
      ok.sort(byScore);
      for (let i = 0; i < k; i++) {
        used.add(ok[i]!.n);
        chosen.push({ n: ok[i]!.n, tasks });
      }
      return true;
    };
    if (!pick(hi, needHi) || !pick(lo, needLo)) return undefined;
    chosen.sort((x, y) => x.n.index - y.n.index);
    return this.shares(req, chosen, count, past);
  }

  /** `tasks` on as few nodes as hold them: the largest free first, the rest where it fits best. */
  private placePacked(req: ResourceRequest, candidates: readonly PoolNode[], tasks: number, opts: PlaceOptions): Placement | undefined {
    const past = opts.past ?? false;
    // GPUs for the whole job are spread over its nodes: each node count is its own question.
    const tries = req.gpus !== undefined ? Math.min(candidates.length, tasks) : 1;
    for (let k = 1; k <= tries; k++) {
      const nodesInJob = req.gpus !== undefined ? k : 1;
      const chosen: { n: PoolNode; tasks: number }[] = [];
      let left = tasks;
      const must = new Set<PoolNode>();
      for (const name of opts.nodelist ?? []) {
        const n = this.byName.get(name)!;
        const cap = Math.min(left, this.capacity(n, req, nodesInJob, past));
        if (cap <= 0) return undefined;
        chosen.push({ n, tasks: cap });
        must.add(n);
        left -= cap;
      }
      const fits: { n: PoolNode; cap: number; score: number }[] = [];
      let total = 0;
      for (const n of candidates) {
        if (must.has(n)) continue;
        const cap = this.capacity(n, req, nodesInJob, past);
        if (cap > 0) {
          fits.push({ n, cap, score: 0 });
          total += cap;
        }
      }
      if (left > 0 && total < left) {
        if (req.gpus === undefined) return undefined;
        continue;
      }
      if (left > 0) {
        // The largest first while the rest does not fit on one node; the rest where it fits best.
        fits.sort((x, y) => y.cap - x.cap || x.n.index - y.n.index);
        let i = 0;
        while (left > 0 && fits[i]!.cap < left) {
          chosen.push({ n: fits[i]!.n, tasks: fits[i]!.cap });
          left -= fits[i]!.cap;
          i++;
        }
        if (left > 0) {
          let best: { n: PoolNode; score: number } | undefined;
          for (let j = i; j < fits.length; j++) {
            const f = fits[j]!;
            if (f.cap < left) break;
            const score = this.leftover(f.n, req, amountFor(req, left, f.n.total, nodesInJob, this.defMemPerCpu), past);
            if (!best || score < best.score || (score === best.score && f.n.index < best.n.index)) best = { n: f.n, score };
          }
          chosen.push({ n: best!.n, tasks: left });
        }
      }
      if (req.gpus !== undefined && chosen.length !== k) continue;
      chosen.sort((x, y) => x.n.index - y.n.index);
      return this.shares(req, chosen, nodesInJob, past);
    }
    return undefined;
  }

  /** What the node keeps free after `a`: the sum of the fractions of its cores, GPUs and memory. */
  private leftover(n: PoolNode, req: ResourceRequest, a: Amount, past: boolean): number {
    if (req.exclusive) return (n.total.cores - a.cores) / n.total.cores + (n.total.gpus.length > 0 ? (n.total.gpus.length - a.gpus) / n.total.gpus.length : 0) + (n.total.memMiB > 0 ? (n.total.memMiB - a.memMiB) / n.total.memMiB : 0);
    const b = past ? n.budget : undefined;
    const cores = b ? b.freeCores : n.freeCores;
    const gpus = b ? b.freeGpus : n.freeGpus;
    const mem = b ? Math.min(b.memMiB, n.memMiB) : n.memMiB;
    return (cores - a.cores) / n.total.cores + (n.total.gpus.length > 0 ? (gpus - a.gpus) / n.total.gpus.length : 0) + (n.total.memMiB > 0 ? (mem - a.memMiB) / n.total.memMiB : 0);
  }

  private shares(req: ResourceRequest, chosen: readonly { n: PoolNode; tasks: number }[], nodesInJob: number, past: boolean): Placement {
    const out: Placement = { nodes: [], shares: [], tasks: [] };
    for (const { n, tasks } of chosen) {
      out.nodes.push(n.name);
      out.tasks.push(tasks);
      if (req.exclusive) {
        out.shares.push(wholeShare(n));
        continue;
      }
      const a = amountFor(req, tasks, n.total, nodesInJob, this.defMemPerCpu);
      out.shares.push({ node: n.name, cores: pickFree(n.cores, n.budget?.cores, a.cores, past), memMiB: a.memMiB, gpus: this.usableGpus(n, req, past && n.budget !== undefined, false).slice(0, a.gpus) });
    }
    return out;
  }

  /** Free GPU indices `req` may use (its type), in the order they are best taken (see `pickFree`). */
  private usableGpus(n: PoolNode, req: ResourceRequest, past: boolean, whole: boolean): number[] {
    const out: number[] = [];
    const b = n.budget;
    const ok = (i: number) => req.gpuType === undefined || n.total.gpus[i] === req.gpuType;
    if (whole) {
      for (let i = 0; i < n.gpus.length; i++) if (ok(i)) out.push(i);
      return out;
    }
    if (past && b) {
      for (let i = 0; i < n.gpus.length; i++) if (n.gpus[i] === 1 && b.gpus[i] === 1 && ok(i)) out.push(i);
      return out;
    }
    // Outside the budget first: a job that ends before the reservation leaves the budget to those that do not.
    if (b) for (let i = 0; i < n.gpus.length; i++) if (n.gpus[i] === 1 && b.gpus[i] !== 1 && ok(i)) out.push(i);
    for (let i = 0; i < n.gpus.length; i++) if (n.gpus[i] === 1 && (!b || b.gpus[i] === 1) && ok(i)) out.push(i);
    return out;
  }
}

function wholeShare(n: PoolNode): NodeShare {
  return { node: n.name, cores: Array.from({ length: n.total.cores }, (_, i) => i), memMiB: n.total.memMiB, gpus: Array.from({ length: n.total.gpus.length }, (_, i) => i) };
}

/** `count` free indices: within the budget when `past`; else those outside it first; lowest first. */
function pickFree(free: Uint8Array, budget: Uint8Array | undefined, count: number, past: boolean): number[] {
  const out: number[] = [];
  if (count <= 0) return out;
  if (budget && !past) for (let i = 0; i < free.length && out.length < count; i++) if (free[i] === 1 && budget[i] !== 1) out.push(i);
  for (let i = 0; i < free.length && out.length < count; i++) if (free[i] === 1 && (!budget || budget[i] === 1)) out.push(i);
  if (!past) out.sort((a, b) => a - b);
  return out;
}

function indices(bits: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < bits.length; i++) if (bits[i] === 1) out.push(i);
  return out;
}

function countBoth(a: Uint8Array, b: Uint8Array): number {
  let k = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === 1 && b[i] === 1) k++;
  return k;
}

function byScore(x: { n: PoolNode; score: number }, y: { n: PoolNode; score: number }): number {
  return x.score - y.score || x.n.index - y.n.index;
}
