/**
 * What a running job measured, as the seed policies read it: ReSHAPE's per-size profile (the
 * iteration time in each configuration it ran in, oldest first) and APM's runtime model, from the
 * timing samples the controller stores (per node and window: iterations, loop and MPI time summed
 * over its ranks) and the sizes the job held over time.
 * - A configuration is the time between two committed adaptations (the first from the start).
 *   Samples of its first `warmupMs` (start-up, connection set-up, the adaptation itself) are left
 *   out; a configuration with no iteration left has no point.
 * - Iteration time: loop time / iterations (seconds per iteration of one rank).
 * - Runtime model T(p) = a + b p + c / p: fitted to the profile (`fitRuntime`) once it holds three
 *   sizes; before that APM's eq. 3 from the newest configuration, its MPI time as the sequential
 *   part and its computation as the parallel one, without overhead terms (c1 = c2 = 0: Amdahl).
 * Pure.
 */
import { apmFromMeasurement, fitRuntime, type RuntimeModel } from "../model/amdahl.ts";
import type { ProfilePoint } from "./types.ts";

export interface TimingSample {
  /** When the window ended (epoch ms). */
  time: number;
  iterations: number;
  loopNs: number;
  commNs: number;
}

/** A size the job held from `since` (epoch ms) until the next one's `since`; 0 while it adapts. */
export interface Configuration {
  since: number;
  nodes: number;
}

export interface MeasuredPoint extends ProfilePoint {
  /** MPI seconds per iteration of one rank (part of iterTime). */
  commTime: number;
  iterations: number;
}

export function measuredProfile(samples: readonly TimingSample[], configs: readonly Configuration[], warmupMs: number): MeasuredPoint[] {
  const out: MeasuredPoint[] = [];
  let k = 0;
  for (let i = 0; i < configs.length; i++) {
    const from = configs[i]!.since + warmupMs;
    const until = configs[i + 1]?.since ?? Number.POSITIVE_INFINITY;
    let iterations = 0;
    let loop = 0;
    let comm = 0;
    while (k < samples.length && samples[k]!.time < until) {
      const s = samples[k++]!;
      if (s.time <= from) continue;
      iterations += s.iterations;
      loop += s.loopNs;
      comm += s.commNs;
    }
    if (configs[i]!.nodes > 0 && iterations > 0 && loop > 0) out.push({ nodes: configs[i]!.nodes, iterTime: loop / iterations / 1e9, commTime: Math.min(comm, loop) / iterations / 1e9, iterations });
  }
  return out;
}

/** APM's runtime model from the profile (see above); undefined with no point. */
export function measuredModel(points: readonly MeasuredPoint[]): RuntimeModel | undefined {
  const last = points[points.length - 1];
  if (!last) return undefined;
  if (new Set(points.map((p) => p.nodes)).size >= 3) {
    // The newest time at each size.
    const at = new Map<number, number>();
    for (const p of points) at.set(p.nodes, p.iterTime);
    return fitRuntime([...at].map(([p, t]) => ({ p, t })));
  }
  return apmFromMeasurement(last.nodes, last.commTime, last.iterTime - last.commTime, 0, 0);
}
