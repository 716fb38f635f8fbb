/**
 * What is free on each node (cores, memory, GPUs) and where a request goes: Slurm's cons_tres
 * placement with best fit. Built from the up nodes and the running jobs' shares (a running job
 * without shares holds its nodes whole); `place` finds nodes for a request, `take` and `give`
 * change what is free. Pure data, no clock.
 *
 * Shapes, as Slurm spreads tasks:
 * - a node count with tasks per node (`-N 2 --ntasks-per-node 4`, an elastic job's per-node
 *   shape): that many tasks on each of that many nodes;
 * - a node count and tasks (`-N 3 -n 6`): nodes that hold an even spread (2 + 2 + 2), the tasks
 *   spread so, or (`ResourceRequest.fill`: sbatch's block distribution) as cons_tres lays them out,
 *   each node in name order filled with as many tasks as it holds while leaving one for each node
 *   after it (4 + 1 + 1 on idle 4-core nodes; `fillKeepingOne`); exclusive jobs spread evenly, as
 *   Slurm's do;
 * - tasks only (`-n 12`): on as few nodes as hold them, the largest free first and the rest on
 *   the node it fits best;
 * - exclusive (`--exclusive`, a job without a request): idle nodes, taken whole.
 * Best fit: among the nodes that hold a part, those whose capacity (in the job's tasks) is the
 * least that holds it first, then the one left with the least (the sum of the free fractions of
 * cores, GPUs and memory it keeps), then name order; small jobs so fill partly used nodes before
 * idle ones, and a job without GPUs keeps off GPU nodes.
 *
 * A reservation's nodes carry a budget (`reserve`): what a job running past the reservation's
 * start may still use there (the node's free resources at that time less the reservation's
 * share). `place(..., { past: true })` keeps within it. `placeAhead` puts the reservation itself on
 * what the running jobs release by its start first, `placeSparing` a job that ends before it on
 * the reserved nodes' spare part first: both leave the budget as large as it can be.
 *
 * Speed: a pass asks about thousands of jobs but only a few kinds of task (cores, memory and GPUs
 * per task or node, type, features: a `Profile`). For each kind asked about, the pool keeps every
 * node's capacity in tasks, their sum and how many nodes hold each number of tasks, and brings
 * them up to date on the nodes a `take`, `give` or `reserve` touches. Whether a job fits is then
 * a lookup (packed tasks fit when the capacities add up to them; a node count when enough nodes
 * hold the tasks per node), and a placement reads capacities instead of computing them.
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

/** Every node's capacity in tasks of one kind of task (see the file comment). */
export interface Profile {
  readonly key: string;
  readonly req: ResourceRequest;
  readonly nodesInJob: number;
  readonly past: boolean;
  /** Tasks each node can take now, by node index. */
  readonly caps: Int32Array;
  /** Their sum. */
  sum: number;
  /** How many nodes can take exactly i tasks (the last entry: that many or more). */
  readonly hist: Int32Array;
}

/** Per request object, its profile's keys (now, past a reservation): built once, so that a lookup hashes a string it has hashed before. */
const profileKeys = new WeakMap<ResourceRequest, [string, string]>();

/** What a placement's capacity depends on: the request less its task and node counts. */
function profileKey(req: ResourceRequest, nodesInJob: number, past: boolean): string {
  let k = profileKeys.get(req);
  if (k === undefined) {
    const base = `${req.exclusive ? "x" : "s"}${req.cpusPerTask}m${req.memPerNodeMiB ?? ""}/${req.memPerCpuMiB ?? ""}g${req.gpus ?? ""}/${req.gpusPerNode ?? ""}/${req.gpusPerTask ?? ""}/${req.gpuType ?? ""}f${req.constraint?.join("&") ?? ""}`;
    profileKeys.set(req, (k = [base, `${base}p`]));
  }
  // GPUs for the whole job: a node's part depends on how many nodes the job has.
  if (req.gpus !== undefined) return `${k[0]}n${nodesInJob}${past ? "p" : ""}`;
  return k[past ? 1 : 0];
}

export class Pool {
  readonly nodes: PoolNode[];
  private readonly byName: Map<string, PoolNode>;
  private readonly byKey = new Map<string, Profile>();
  private readonly profiles: Profile[] = [];
  /** Tasks a node can hold at most (the largest node's cores): the histograms' length. */
  private readonly maxCap: number;
  /** Nodes with no share on them. */
  idle: number;
  /** Nodes with a reservation's budget. */
  private budgeted: PoolNode[] = [];
  /** Free cores and GPUs on all nodes together. */
  freeCores = 0;
  freeGpus = 0;

  private constructor(nodes: PoolNode[], readonly defMemPerCpu: number | undefined, profiles?: readonly Profile[]) {
    this.nodes = nodes;
    this.byName = new Map(nodes.map((n) => [n.name, n]));
    this.idle = 0;
    let maxCap = 1;
    for (const n of nodes) maxCap = Math.max(maxCap, n.total.cores);
    this.maxCap = maxCap;
    for (const p of profiles ?? []) {
      const copy = { ...p, caps: p.caps.slice(), hist: p.hist.slice() };
      this.profiles.push(copy);
      this.byKey.set(p.key, copy);
    }
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

  /**
   * A copy to change apart. `profiles` false: without the profiles asked of this pool so far, which
   * are caches (each is made again, the same, when asked): a copy that asks for few of them, and
   * whose changes then keep fewer up to date, costs less.
   */
  clone(profiles = true): Pool {
    const nodes = this.nodes.map((n) => ({ ...n, cores: n.cores.slice(), gpus: n.gpus.slice(), budget: n.budget && { ...n.budget, cores: n.budget.cores.slice(), gpus: n.budget.gpus.slice() } }));
    const pool = new Pool(nodes, this.defMemPerCpu, profiles ? this.profiles : undefined);
    for (const n of this.budgeted) pool.budgeted.push(pool.nodes[n.index]!);
    return pool;
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
      this.touch(n);
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
      this.touch(n);
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
      if (!n.budget) this.budgeted.push(n);
      n.budget = { cores, freeCores: countBoth(n.cores, cores), memMiB: f.memMiB - s.memMiB, gpus, freeGpus: countBoth(n.gpus, gpus) };
      this.touch(n);
    }
  }

  /** The capacities of every node for a kind of task, kept up to date from now on. */
  profile(req: ResourceRequest, nodesInJob: number, past: boolean): Profile {
    const key = profileKey(req, nodesInJob, past);
    let p = this.byKey.get(key);
    if (!p) {
      p = { key, req, nodesInJob, past, caps: new Int32Array(this.nodes.length), sum: 0, hist: new Int32Array(this.maxCap + 1) };
      for (const n of this.nodes) {
        const c = this.capacity(n, req, nodesInJob, past);
        p.caps[n.index] = c;
        p.sum += c;
        p.hist[Math.min(c, this.maxCap)]!++;
      }
      this.byKey.set(key, p);
      this.profiles.push(p);
    }
    return p;
  }

  /** Nodes that can take at least `tasks` tasks of the profile now. */
  atLeast(p: Profile, tasks: number): number {
    let k = 0;
    for (let i = Math.max(0, Math.min(tasks, this.maxCap + 1)); i <= this.maxCap; i++) k += p.hist[i]!;
    return tasks > this.maxCap ? 0 : k;
  }

  /** A node's free state changed: its capacity in every profile follows. */
  private touch(n: PoolNode): void {
    for (const p of this.profiles) {
      const c = this.capacity(n, p.req, p.nodesInJob, p.past);
      const old = p.caps[n.index]!;
      if (c === old) continue;
      p.caps[n.index] = c;
      p.sum += c - old;
      p.hist[Math.min(old, this.maxCap)]!--;
      p.hist[Math.min(c, this.maxCap)]!++;
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
    const candidates = opts.exclude ? this.nodes.filter((n) => !opts.exclude!.has(n.name)) : this.nodes;
    if (opts.nodelist) for (const name of opts.nodelist) if (!this.byName.has(name) || opts.exclude?.has(name)) return undefined;
    if (count !== undefined) {
      if (count < 1 || (opts.nodelist && opts.nodelist.length > count)) return undefined;
      const tasks = req.tasksPerNode !== undefined ? req.tasksPerNode * count : Math.max(count, req.tasks ?? count);
      const per = req.tasksPerNode;
      // Tasks spread evenly: the first `tasks % count` nodes one more.
      const hi = per ?? Math.ceil(tasks / count);
      const lo = per ?? Math.floor(tasks / count);
      const many = per !== undefined ? count : tasks % count === 0 ? count : tasks % count;
      return this.placeFixed(req, candidates, count, hi, many, lo, opts, per === undefined && !req.exclusive && req.fill === true);
    }
    return this.placePacked(req, candidates, Math.max(1, req.tasks ?? 1), opts);
  }

  /** How many nodes (not in `exclude`) could each take `perNode` tasks of `req` now. */
  countFitting(req: ResourceRequest, perNode: number, nodesInJob: number, past = false, exclude?: ReadonlySet<string>): number {
    const p = this.profile(req, nodesInJob, past);
    let k = this.atLeast(p, Math.max(1, perNode));
    if (exclude) for (const name of exclude) {
      const n = this.byName.get(name);
      if (n && p.caps[n.index]! >= Math.max(1, perNode)) k--;
    }
    return k;
  }

  /** `many` nodes with `hi` tasks and `count - many` with `lo`; the nodelist's nodes first. */
  private placeFixed(req: ResourceRequest, candidates: readonly PoolNode[], count: number, hi: number, many: number, lo: number, opts: PlaceOptions, fill = false): Placement | undefined {
    const past = opts.past ?? false;
    const prof = this.profile(req, count, past);
    const caps = prof.caps;
    // Enough nodes hold the tasks: exact unless nodes are named.
    if (!opts.nodelist && !opts.exclude && (this.atLeast(prof, lo) < count || this.atLeast(prof, hi) < many)) return undefined;
    const chosen: { n: PoolNode; tasks: number }[] = [];
    const used = new Set<PoolNode>();
    let needHi = many;
    let needLo = count - many;
    for (const name of opts.nodelist ?? []) {
      const n = this.byName.get(name)!;
      const cap = caps[n.index]!;
      if (needHi > 0 && cap >= hi) {
        needHi--;
        chosen.push({ n, tasks: hi });
      } else if (needLo > 0 && cap >= lo) {
        needLo--;
        chosen.push({ n, tasks: lo });
      } else return undefined;
      used.add(n);
    }
    const pick = (tasks: number, k: number): boolean => {
      if (k === 0) return true;
      const best = this.bestFit(req, caps, candidates, tasks, k, count, past, used);
      if (!best) return false;
      for (const n of best) {
        used.add(n);
        chosen.push({ n, tasks });
      }
      return true;
    };
    if (!pick(hi, needHi) || !pick(lo, needLo)) return undefined;
    chosen.sort((x, y) => x.n.index - y.n.index);
    if (fill) {
      const tasks = fillKeepingOne(chosen.map((c) => caps[c.n.index]!), hi * many + lo * (count - many));
      chosen.forEach((c, i) => (c.tasks = tasks[i]!));
    }
    return this.shares(req, chosen, count, past);
  }

  /** `tasks` on as few nodes as hold them: the largest free first, the rest where it fits best. */
  private placePacked(req: ResourceRequest, candidates: readonly PoolNode[], tasks: number, opts: PlaceOptions): Placement | undefined {
    const past = opts.past ?? false;
    // GPUs for the whole job are spread over its nodes: each node count is its own question.
    const tries = req.gpus !== undefined ? Math.min(candidates.length, tasks) : 1;
    for (let k = 1; k <= tries; k++) {
      const nodesInJob = req.gpus !== undefined ? k : 1;
      const prof = this.profile(req, nodesInJob, past);
      const caps = prof.caps;
      // Packed tasks fit exactly when the capacities add up to them.
      if (!opts.nodelist && !opts.exclude && req.gpus === undefined && prof.sum < tasks) return undefined;
      const chosen: { n: PoolNode; tasks: number }[] = [];
      let left = tasks;
      const must = new Set<PoolNode>();
      for (const name of opts.nodelist ?? []) {
        const n = this.byName.get(name)!;
        const cap = Math.min(left, caps[n.index]!);
        if (cap <= 0) return undefined;
        chosen.push({ n, tasks: cap });
        must.add(n);
        left -= cap;
      }
      // One node holds the rest: the best fit among those that do.
      const one = left > 0 ? this.bestFit(req, caps, candidates, left, 1, nodesInJob, past, must) : undefined;
      if (one) {
        chosen.push({ n: one[0]!, tasks: left });
        left = 0;
      }
      if (left > 0) {
        // The largest first (by capacity, then name order) while the rest does not fit on one node; the rest where it fits best.
        const byCap: PoolNode[][] = Array.from({ length: this.maxCap + 1 }, () => []);
        let total = 0;
        for (const n of candidates) {
          const cap = caps[n.index]!;
          if (cap > 0 && !must.has(n)) {
            byCap[cap]!.push(n);
            total += cap;
          }
        }
        if (total < left) {
          if (req.gpus === undefined) return undefined;
          continue;
        }
        const taken = new Set<PoolNode>(must);
        let top = -1;
        for (let c = this.maxCap; c > 0 && left > 0; c--) {
          for (const n of byCap[c]!) {
            if (c >= left) {
              top = c;
              break;
            }
            chosen.push({ n, tasks: c });
            taken.add(n);
            left -= c;
          }
          if (top >= 0) break;
        }
        if (left > 0) {
          const rest = this.bestFit(req, caps, candidates, left, 1, nodesInJob, past, taken);
          if (!rest) return undefined;
          chosen.push({ n: rest[0]!, tasks: left });
        }
      }
      if (req.gpus !== undefined && chosen.length !== k) continue;
      chosen.sort((x, y) => x.n.index - y.n.index);
      return this.shares(req, chosen, nodesInJob, past);
    }
    return undefined;
  }

  /**
   * The `k` nodes of `candidates` (not in `skip`) that best fit `tasks` tasks each: the least
   * capacity that holds them first, then the least left over (`leftover`), then name order. Undefined
   * if fewer than `k` hold them. Only the nodes at the last capacity taken are scored; nodes in the
   * same state score the same and are scored once.
   */
  private bestFit(req: ResourceRequest, caps: Int32Array, candidates: readonly PoolNode[], tasks: number, k: number, nodesInJob: number, past: boolean, skip: ReadonlySet<PoolNode>): PoolNode[] | undefined {
    const counts = new Int32Array(this.maxCap + 2);
    let ok = 0;
    const skipping = skip.size > 0;
    for (const n of candidates) {
      const c = caps[n.index]!;
      if (c >= tasks && !(skipping && skip.has(n))) {
        counts[Math.min(c, this.maxCap)]!++;
        ok++;
      }
    }
    if (ok < k) return undefined;
    // The capacity at which the k-th tightest node is.
    let edge = tasks;
    let below = 0;
    while (below + counts[edge]! < k) below += counts[edge++]!;
    const out: PoolNode[] = [];
    const bucket: { n: PoolNode; score: number }[] = [];
    const scored = new Map<NodeResources, Map<number, number>>();
    for (const n of candidates) {
      const c = Math.min(caps[n.index]!, this.maxCap);
      if (c < tasks || c > edge || (skipping && skip.has(n))) continue;
      if (c < edge) {
        out.push(n);
        continue;
      }
      // Same total, same free state: same score.
      let byState = scored.get(n.total);
      if (!byState) scored.set(n.total, (byState = new Map()));
      const b = past ? n.budget : undefined;
      const state = req.exclusive ? 0 : ((b ? b.freeCores : n.freeCores) * 4096 + (b ? b.freeGpus : n.freeGpus)) * 2 ** 32 + Math.max(0, b ? Math.min(b.memMiB, n.memMiB) : n.memMiB);
      let score = byState.get(state);
      if (score === undefined) byState.set(state, (score = this.leftover(n, req, amountFor(req, tasks, n.total, nodesInJob, this.defMemPerCpu), past)));
      bucket.push({ n, score });
    }
    if (bucket.length > k - out.length) bucket.sort(byScore);
    for (let i = 0; out.length < k; i++) out.push(bucket[i]!.n);
    return out;
  }

  /**
   * Where a reservation goes, this pool being the nodes at its start and `now` as they are now: the
   * cores, memory and GPUs released by then first, what is free now only for the rest, so that
   * as much as possible of what is free now stays in the reservation's budget for jobs that run
   * past it (a promise of capacity: the job is placed afresh, best fit, when it starts).
   */
  placeAhead(req: ResourceRequest, now: Pool, opts: { nodes?: number } = {}): Placement | undefined {
    const released = (n: PoolNode): Spare => {
      const m = now.byName.get(n.name);
      if (!m || (req.exclusive && m.holders > 0)) return { cores: n.cores, memMiB: n.memMiB, gpus: n.gpus };
      if (req.exclusive) return { cores: NONE, memMiB: 0, gpus: NONE };
      return { cores: n.cores.map((c, i) => (c === 1 && m.cores[i] !== 1 ? 1 : 0)), memMiB: n.memMiB - m.memMiB, gpus: n.gpus.map((g, i) => (g === 1 && m.gpus[i] !== 1 ? 1 : 0)) };
    };
    return this.placePreferring(req, { nodes: opts.nodes }, this.nodes, released) ?? this.place(req, opts);
  }

  /**
   * Where a job that ends before the reservation's start goes: on what the reservation's budget
   * does not need first (the cores and GPUs its share takes then, the memory beyond the budget), so
   * that the budget is left to the jobs that run past it. As `place` without a reservation.
   */
  placeSparing(req: ResourceRequest, opts: PlaceOptions = {}): Placement | undefined {
    if (this.budgeted.length === 0 || opts.nodelist || opts.past || req.exclusive) return this.place(req, opts);
    const spare = (n: PoolNode): Spare => {
      const b = n.budget!;
      return { cores: n.cores.map((c, i) => (c === 1 && b.cores[i] !== 1 ? 1 : 0)), memMiB: Math.max(0, n.memMiB - b.memMiB), gpus: n.gpus.map((g, i) => (g === 1 && b.gpus[i] !== 1 ? 1 : 0)) };
    };
    return this.placePreferring(req, opts, this.budgeted, spare) ?? this.place(req, opts);
  }

  /**
   * `req` on the `preferred` part (`prefer`) of the nodes `among` first, the rest as `place` puts it
   * on the other nodes: a node count, the nodes whose preferred part holds a node's tasks first;
   * packed tasks, the preferred parts first (most first). The cores and GPUs taken are the
   * preferred ones first. Undefined when no preferred part holds a task, or for a shape it leaves
   * to `place` (GPUs per job, an uneven spread, named nodes), or when it does not fit.
   */
  private placePreferring(req: ResourceRequest, opts: PlaceOptions, among: readonly PoolNode[], prefer: (n: PoolNode) => Spare): Placement | undefined {
    const count = opts.nodes ?? req.nodes;
    // An uneven spread, and a node count whose tasks fill the nodes (fillKeepingOne), are laid out by `place`.
    if (req.gpus !== undefined || opts.nodelist || (count !== undefined && req.tasksPerNode === undefined && req.tasks !== undefined && (req.fill ? req.tasks > count : req.tasks % count !== 0))) return undefined;
    const caps = this.profile(req, count ?? 1, false).caps;
    const per = count !== undefined ? (req.tasksPerNode ?? Math.max(1, (req.tasks ?? count) / count)) : 1;
    const parts: { n: PoolNode; spare: Spare; tasks: number }[] = [];
    for (const n of among) {
      if (caps[n.index]! < per || opts.exclude?.has(n.name)) continue;
      const spare = prefer(n);
      if (spare.cores === NONE) continue;
      const view: PoolNode = { ...n, cores: spare.cores, freeCores: count1(spare.cores), memMiB: spare.memMiB, gpus: spare.gpus, freeGpus: count1(spare.gpus), budget: undefined };
      const tasks = Math.min(caps[n.index]!, this.capacity(view, req, count ?? 1, false));
      if (tasks >= per) parts.push({ n, spare, tasks });
    }
    if (parts.length === 0) return undefined;
    const on = new Map<PoolNode, number>();
    let rest: Placement | undefined;
    if (count !== undefined) {
      parts.sort((x, y) => caps[x.n.index]! - caps[y.n.index]! || x.n.index - y.n.index);
      for (const p of parts.slice(0, count)) on.set(p.n, per);
      if (on.size < count) {
        rest = this.place(req, { nodes: count - on.size, exclude: new Set([...(opts.exclude ?? []), ...[...on.keys()].map((n) => n.name)]) });
        if (!rest) return undefined;
      }
    } else {
      let left = Math.max(1, req.tasks ?? 1);
      parts.sort((x, y) => y.tasks - x.tasks || x.n.index - y.n.index);
      for (const p of parts) {
        if (left <= 0) break;
        const t = Math.min(p.tasks, left);
        on.set(p.n, t);
        left -= t;
      }
      if (left > 0) {
        // The rest packed on other nodes (best fit), else on what the chosen ones have left.
        rest = this.place({ ...req, tasks: left }, { exclude: new Set([...(opts.exclude ?? []), ...[...on.keys()].map((n) => n.name)]) });
        if (!rest) {
          for (const n of this.nodes) {
            if (left <= 0) break;
            const t = Math.min(caps[n.index]! - (on.get(n) ?? 0), left);
            if (t <= 0 || opts.exclude?.has(n.name)) continue;
            on.set(n, (on.get(n) ?? 0) + t);
            left -= t;
          }
          if (left > 0) return undefined;
        }
      }
    }
    const chosen = [...on].map(([n, tasks]) => ({ n, tasks }));
    for (let i = 0; rest && i < rest.nodes.length; i++) chosen.push({ n: this.byName.get(rest.nodes[i]!)!, tasks: rest.tasks[i]! });
    chosen.sort((x, y) => x.n.index - y.n.index);
    const out = this.shares(req, chosen, count ?? 1, false);
    if (req.exclusive) return out;
    // Which cores and GPUs: the preferred ones first.
    const spares = new Map(parts.map((p) => [p.n.name, p.spare]));
    for (const sh of out.shares) {
      const p = spares.get(sh.node);
      if (!p) continue;
      const n = this.byName.get(sh.node)!;
      (sh as { cores: readonly number[] }).cores = preferring(n.cores, p.cores, sh.cores.length);
      (sh as { gpus: readonly number[] }).gpus = preferring(n.gpus, p.gpus, sh.gpus.length, (i) => req.gpuType === undefined || n.total.gpus[i] === req.gpuType);
    }
    return out;
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

/**
 * Slurm's cons_tres layout of `tasks` over nodes that hold `caps` tasks each (their sum at least
 * `tasks`, each at least 1): each node in turn takes as many as it holds, leaving one for each node
 * after it. Slurm 22.05 on idle 4-core nodes: -N 3 -n 6 gives 4,1,1; -N 3 -n 7 4,2,1; -N 2 -n 4 3,1.
 */
export function fillKeepingOne(caps: readonly number[], tasks: number): number[] {
  let left = tasks;
  return caps.map((cap, i) => {
    const t = Math.max(1, Math.min(cap, left - (caps.length - i - 1)));
    left -= t;
    return t;
  });
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

/** A part of a node's free resources a placement prefers. */
interface Spare {
  cores: Uint8Array;
  memMiB: number;
  gpus: Uint8Array;
}

const NONE = new Uint8Array(0);

/** `count` free indices, those in `preferred` first, ascending. */
function preferring(free: Uint8Array, preferred: Uint8Array, count: number, ok: (i: number) => boolean = () => true): number[] {
  const out: number[] = [];
  for (let i = 0; i < free.length && out.length < count; i++) if (free[i] === 1 && preferred[i] === 1 && ok(i)) out.push(i);
  for (let i = 0; i < free.length && out.length < count; i++) if (free[i] === 1 && preferred[i] !== 1 && ok(i)) out.push(i);
  return out.sort((a, b) => a - b);
}

function count1(bits: Uint8Array): number {
  let k = 0;
  for (let i = 0; i < bits.length; i++) if (bits[i] === 1) k++;
  return k;
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
