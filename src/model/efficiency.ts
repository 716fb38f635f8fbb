/**
 * A seff-like efficiency summary of a rigid job's run from its communication loops: per loop the
 * communication share of an iteration (MPI time / iteration time) and the node count at which the
 * SPMD model predicts the best efficiency for the time spent (`kneeNodes`); the same for the job,
 * over its outermost loops weighted by the time spent in them.
 */
import { forestParents } from "../cfg/nest.ts";
import { kneeNodes } from "./scaling.ts";

export interface LoopTimes {
  key: string;
  /** Key of the enclosing loop, if any (nested loops' time is part of their parent's). */
  parent: string | null;
  /** Wall time and MPI time summed over ranks and iterations (any one unit). */
  loopTime: number;
  mpiTime: number;
}

export interface LoopEfficiency {
  key: string;
  /** MPI time / iteration time, in [0, 1]. */
  commShare: number;
  /** MPI time / compute time. */
  mtct: number;
  /** Predicted best node count; null when the loop spends no time in MPI (no limit). */
  bestNodes: number | null;
}

export interface Efficiency {
  nodes: number;
  /** Over the outermost loops, weighted by their time. */
  commShare: number;
  mtct: number;
  bestNodes: number | null;
  loops: LoopEfficiency[];
}

function of(nodes: number, loopTime: number, mpiTime: number): { commShare: number; mtct: number; bestNodes: number | null } {
  const mpi = Math.min(Math.max(0, mpiTime), loopTime);
  const commShare = loopTime > 0 ? mpi / loopTime : 0;
  const compute = loopTime - mpi;
  const mtct = compute > 0 ? mpi / compute : mpi > 0 ? Number.POSITIVE_INFINITY : 0;
  const best = kneeNodes(nodes, mtct);
  return { commShare, mtct, bestNodes: Number.isFinite(best) ? best : null };
}

/** The job's efficiency summary at `nodes` nodes, or undefined when no loop ran a timed iteration. */
export function efficiency(nodes: number, loops: readonly LoopTimes[]): Efficiency | undefined {
  const timed = loops.filter((l) => l.loopTime > 0);
  if (timed.length === 0) return undefined;
  const parent = forestParents(timed);
  const outer = timed.filter((l) => parent.get(l.key) === null);
  const loopTime = outer.reduce((a, l) => a + l.loopTime, 0);
  const mpiTime = outer.reduce((a, l) => a + Math.min(Math.max(0, l.mpiTime), l.loopTime), 0);
  return { nodes, ...of(nodes, loopTime, mpiTime), loops: timed.map((l) => ({ key: l.key, ...of(nodes, l.loopTime, l.mpiTime) })) };
}
