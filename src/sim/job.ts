/**
 * A simulated job: when it arrives, what it asks for, and how long it takes at each size.
 * `time(p)` is the whole job's run time on p nodes; `mtct(p)` is what its SPMD-phase samples would
 * read (MPI time / compute time of its main loop) on p nodes.
 */
import type { ResourceRequest } from "../domain/resources.ts";
import type { RuntimeModel } from "../model/amdahl.ts";

export interface Work {
  time(p: number): number;
  mtct(p: number): number;
  /** Outer iterations: resize points only between them. Absent: the job can resize any time. */
  iterations?: number;
}

export interface SimJob {
  id: number;
  /** Seconds from the trace's start. */
  submit: number;
  /** The size the job asked for (the trace's). */
  nodes: number;
  minNodes: number;
  maxNodes: number;
  malleable: boolean;
  /** The user's time bound at `nodes` (seconds). */
  estimate: number;
  work: Work;
  /** Seconds one adaptation from -> to costs (no progress meanwhile). */
  resizeCost(from: number, to: number): number;
  /** The same cost as plain data, as the scheduler may know it (fixed + perNode * nodes moved). */
  costModel?: { fixed: number; perNode: number };
  /** Valid sizes (ReSHAPE's process grids), if restricted. */
  sizes?: number[];
  /** The runtime model the job declares (apm-maxs), if any. */
  model?: RuntimeModel;
  /** Shared nodes: what it asks of them (tasks of one core); absent: whole nodes. */
  request?: ResourceRequest;
  /** Shared nodes: the cores it asks for (its processors; whole nodes' cores for a job of whole nodes). */
  cores?: number;
}

/**
 * Amdahl's law with serial fraction s: T(p) = T1 (s + (1-s)/p). The serial part is read as the
 * loop's MPI time, so MTCT(p) = s p / (1 - s).
 */
export function amdahlWork(t1: number, s: number): Work {
  return {
    time: (p) => t1 * (s + (1 - s) / p),
    mtct: (p) => (s >= 1 ? Number.POSITIVE_INFINITY : (s * p) / (1 - s)),
  };
}

/** A job that takes `time` seconds whatever it runs on (a rigid job on shared nodes). */
export function fixedWork(time: number): Work {
  return { time: () => time, mtct: () => 0 };
}

/**
 * Measured run times at a few sizes; in between, the speedup is interpolated linearly (as a rate);
 * beyond the last point it stays flat, below the first it falls off linearly to one node.
 * The MTCT comes from the efficiency against the smallest measured size: 1/E - 1.
 */
export function tableWork(points: readonly (readonly [number, number])[], iterations?: number): Work {
  const pts = [...points].sort((a, b) => a[0] - b[0]);
  if (pts.length === 0) throw new RangeError("a table model needs at least one point");
  const [p0, t0] = pts[0]!;
  const rate = (p: number): number => {
    if (p <= p0) return (1 / t0) * (p / p0);
    for (let i = 1; i < pts.length; i++) {
      const [pa, ta] = pts[i - 1]!;
      const [pb, tb] = pts[i]!;
      if (p <= pb) return 1 / ta + ((p - pa) / (pb - pa)) * (1 / tb - 1 / ta);
    }
    return 1 / pts[pts.length - 1]![1];
  };
  return {
    time: (p) => 1 / rate(p),
    mtct: (p) => {
      const e = (rate(p) / p) * (p0 * t0);
      return Math.max(0, 1 / e - 1);
    },
    iterations,
  };
}
