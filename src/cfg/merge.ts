/**
 * Distributed CFG reduction (dissertation §10.2.3): node CFGs combine into the job's, loop by
 * loop (same key), rank sets united, times summed, visit histograms added. The merge is
 * associative and commutative, so every level of the launch tree applies the same function.
 * Over time, per loop: mean, variance, min, max and a recent vector of the iteration time and
 * the MPI time per iteration. A loop present at every rank is a *distributed loop*; the
 * SPMD-phase model reads the current one (the outermost distributed loop whose head ran last).
 */
import { ancestors, forest, forestParents } from "./nest.ts";
import { addCounts, mode, type NodeCfg, type ReducedLoop } from "./node.ts";

/** Combines node (or subtree) CFGs into one. */
export function mergeCfg(parts: readonly NodeCfg[]): NodeCfg {
  const byKey = new Map<string, { loop: ReducedLoop; counts: Map<number, number>; ranks: Set<number>; lowest: number }>();
  for (const part of parts) {
    for (const l of part.loops) {
      let e = byKey.get(l.key);
      if (!e) {
        e = {
          loop: { ...l, ranks: [], visitCounts: [], iterations: 0, loopTime: 0, mpiTime: 0, reentries: 0 },
          counts: new Map(),
          ranks: new Set(),
          lowest: Number.POSITIVE_INFINITY,
        };
        byKey.set(l.key, e);
      }
      const r = e.loop;
      for (const k of l.ranks) e.ranks.add(k);
      const low = l.ranks.length > 0 ? Math.min(...l.ranks) : Number.POSITIVE_INFINITY;
      // The lowest rank's view names the head and the parent: each rank's nesting is a forest,
      // and a parent is a loop of the same rank, so parents taken this way make no cycle.
      if (low < e.lowest || (low === e.lowest && before(l.parent, r.parent))) {
        e.lowest = low;
        r.head = l.head;
        r.parent = l.parent;
      }
      addCounts(e.counts, l.visitCounts);
      r.iterations += l.iterations;
      r.loopTime += l.loopTime;
      r.mpiTime += l.mpiTime;
      r.reentries += l.reentries;
      if (l.last > r.last) r.last = l.last;
    }
  }
  const loops = [...byKey.values()].map(({ loop, counts, ranks }) => {
    loop.ranks = [...ranks].sort((a, b) => a - b);
    loop.visitCounts = [...counts].sort((a, b) => a[0] - b[0]);
    loop.visits = mode(loop.visitCounts);
    return loop;
  });
  loops.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { loops: forest(loops) };
}

/** Order of two reports' parents when their lowest ranks tie (one rank in two steps): any fixed order. */
function before(a: string | null, b: string | null): boolean {
  return a !== b && (b === null || (a !== null && a < b));
}

/** Running statistics of one quantity: Welford mean/variance, extremes, the newest values. */
export interface Series {
  n: number;
  mean: number;
  /** Sum of squared deviations (variance = m2 / n). */
  m2: number;
  min: number;
  max: number;
  recent: number[];
}

export function emptySeries(): Series {
  return { n: 0, mean: 0, m2: 0, min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY, recent: [] };
}

export function pushSeries(s: Series, x: number, keep: number): Series {
  const n = s.n + 1;
  const d = x - s.mean;
  const mean = s.mean + d / n;
  const recent = [...s.recent, x];
  if (recent.length > keep) recent.splice(0, recent.length - keep);
  return { n, mean, m2: s.m2 + d * (x - mean), min: Math.min(s.min, x), max: Math.max(s.max, x), recent };
}

export function variance(s: Series): number {
  return s.n > 0 ? s.m2 / s.n : 0;
}

/** A loop of the job, as the controller keeps it. */
export interface JobLoop extends ReducedLoop {
  /** Present at every rank of the job. */
  distributed: boolean;
  /** Per iteration, over the whole run (the detector's TLT and TMT averaged over ranks). */
  iterTime: number;
  mpiPerIter: number;
  /** MTCT = MPI time / compute time, from the newest window (the whole run before the first). */
  mtct: number;
  /** Per-window iteration time and MPI time per iteration, one value per observation that saw iterations. */
  iter: Series;
  mpi: Series;
}

export interface JobCfg {
  /** Number of ranks of the job when observed. */
  ntasks: number;
  loops: JobLoop[];
  /** Key of the current distributed loop (the outermost one whose head ran last), if any. */
  current: string | null;
}

function mtctOf(mpi: number, iter: number): number {
  const compute = iter - mpi;
  return compute > 0 ? mpi / compute : mpi > 0 ? Number.POSITIVE_INFINITY : 0;
}

/**
 * Folds a new merged CFG into the job's history: each loop's window since the previous
 * observation (iterations, loop time and MPI time that grew) becomes one point of its series.
 */
export function observeCfg(prev: JobCfg | undefined, merged: NodeCfg, ntasks: number, keep = 16): JobCfg {
  const before = new Map((prev?.loops ?? []).map((l) => [l.key, l]));
  const loops: JobLoop[] = merged.loops.map((l) => {
    const p = before.get(l.key);
    let iter = p?.iter ?? emptySeries();
    let mpi = p?.mpi ?? emptySeries();
    const dIt = l.iterations - (p?.iterations ?? 0);
    const dLoop = l.loopTime - (p?.loopTime ?? 0);
    const dMpi = l.mpiTime - (p?.mpiTime ?? 0);
    let windowMtct: number | undefined;
    if (p && dIt > 0 && dLoop > 0 && dMpi >= 0) {
      iter = pushSeries(iter, dLoop / dIt, keep);
      mpi = pushSeries(mpi, dMpi / dIt, keep);
      windowMtct = mtctOf(dMpi, dLoop);
    } else if (!p && l.iterations > 0 && l.loopTime > 0) {
      iter = pushSeries(iter, l.loopTime / l.iterations, keep);
      mpi = pushSeries(mpi, l.mpiTime / l.iterations, keep);
    }
    const iterTime = l.iterations > 0 ? l.loopTime / l.iterations : 0;
    const mpiPerIter = l.iterations > 0 ? l.mpiTime / l.iterations : 0;
    return {
      ...l,
      // Every rank of the world runs it (ranks that left in a shrink may still be listed).
      distributed: ntasks > 0 && l.ranks.filter((r) => r < ntasks).length === ntasks,
      iterTime,
      mpiPerIter,
      mtct: windowMtct ?? (p ? p.mtct : mtctOf(l.mpiTime, l.loopTime)),
      iter,
      mpi,
    };
  });
  return { ntasks, loops, current: outermostActive(loops) };
}

/**
 * The SPMD phase the job is in: among the distributed loops not nested in another distributed
 * loop, the one whose head ran last. A time-step loop is current while its halo loops run.
 */
function outermostActive(loops: readonly JobLoop[]): string | null {
  const parent = forestParents(loops);
  const distributed = new Set(loops.filter((l) => l.distributed).map((l) => l.key));
  let current: JobLoop | undefined;
  for (const l of loops) {
    if (!l.distributed || ancestors(parent, l.key).some((a) => distributed.has(a))) continue;
    if (!current || l.last > current.last || (l.last === current.last && l.iterations > current.iterations)) current = l;
  }
  return current?.key ?? null;
}

/** The MTCT the SPMD-phase model uses: the current distributed loop's, if there is one. */
export function currentMtct(cfg: JobCfg | undefined): number | undefined {
  if (!cfg || cfg.current === null) return undefined;
  const l = cfg.loops.find((x) => x.key === cfg.current);
  return l && Number.isFinite(l.mtct) ? l.mtct : undefined;
}
