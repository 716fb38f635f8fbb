/**
 * The papers' small scenarios, as simulator inputs (regression targets for the policies).
 * - APM (Hungershöfer et al., Table 1): four malleable jobs on 8 processors, run times measured at
 *   1, 2, 4 and 8; the simulator interpolates the speedup between them, apm-maxs plans with the
 *   Amdahl-plus-overhead model fitted to the same four points; reallocation is free and instant.
 *   Paper: makespan 1380 s under equipartition, 1303 s under maxS*.
 * - ReSHAPE (Sudarsan & Ribbens, Fig. 3a): LU of order 12000, 10 outer iterations, starting on 2
 *   processors, near-square grids; iteration times and redistribution costs as measured.
 *   Paper: 862.9 s resized vs 1296.3 s static on 2 processors.
 */
import { fitRuntime } from "../model/amdahl.ts";
import { tableWork, type SimJob } from "./job.ts";

export const APM_TABLE1: Record<string, { arrival: number; times: readonly [number, number, number, number] }> = {
  A: { arrival: 0, times: [2316, 1005, 552, 340] },
  B: { arrival: 100, times: [1280, 748, 497, 362] },
  C: { arrival: 200, times: [5026, 2562, 1340, 615] },
  D: { arrival: 500, times: [845, 629, 525, 520] },
};

export function apmScenario(): { nodes: number; jobs: SimJob[] } {
  const jobs = Object.entries(APM_TABLE1).map(([, j], i): SimJob => {
    const points = [1, 2, 4, 8].map((p, k) => [p, j.times[k]!] as const);
    return {
      id: i + 1,
      submit: j.arrival,
      nodes: 8,
      minNodes: 1,
      maxNodes: 8,
      malleable: true,
      estimate: j.times[0],
      work: tableWork(points),
      resizeCost: () => 0,
      model: fitRuntime(points.map(([p, t]) => ({ p, t }))),
    };
  });
  return { nodes: 8, jobs };
}

/** Fig. 3a: processors -> seconds per iteration. */
export const RESHAPE_LU_ITER: readonly (readonly [number, number])[] = [
  [2, 129.63],
  [4, 112.52],
  [6, 82.31],
  [9, 79.61],
  [12, 69.85],
  [16, 74.91],
];

/** Fig. 3a: redistribution seconds per resize. */
export const RESHAPE_LU_COST: Readonly<Record<string, number>> = { "2>4": 8.0, "4>6": 7.74, "6>9": 5.25, "9>12": 4.86, "12>16": 4.41, "16>12": 4.41 };

export function reshapeLuScenario(): { nodes: number; jobs: SimJob[] } {
  const iterations = 10;
  const job: SimJob = {
    id: 1,
    submit: 0,
    nodes: 2,
    minNodes: 2,
    maxNodes: 36,
    malleable: true,
    estimate: iterations * RESHAPE_LU_ITER[0]![1],
    work: tableWork(
      RESHAPE_LU_ITER.map(([p, t]) => [p, t * iterations] as const),
      iterations,
    ),
    resizeCost: (from, to) => {
      const c = RESHAPE_LU_COST[`${from}>${to}`];
      if (c === undefined) throw new RangeError(`no measured redistribution cost for ${from} -> ${to}`);
      return c;
    },
    // Near-square process grids for N = 12000 (1x2, 2x2, 2x3, 3x3, 3x4, 4x4, 4x5, 5x5, 5x6, 6x6).
    sizes: [2, 4, 6, 9, 12, 16, 20, 25, 30, 36],
  };
  return { nodes: 36, jobs: [job] };
}
