/**
 * Resource Range Vector entries (dissertation §10.3.2) from a job's SPMD-phase model:
 * - either MTCT (average, trend) above the upper threshold: halve (mandatory, not below minNodes);
 * - both below the lower threshold: up to double (optional, not above maxNodes);
 * - one in [lower, upper] and one below lower: the metric is moving, not a candidate;
 * - both in [lower, upper] (left open by the dissertation): keep the size, but the job may still be
 *   shrunk to admit waiting jobs, since a shrink never lowers its efficiency.
 * `lo` is always minNodes: any job may be shrunk by rule 1 down to it.
 */
import type { SpmdPhase } from "../model/spmd.ts";

export type RangeKind = "shrink" | "grow" | "hold" | "unsteady";

export interface RangeEntry {
  kind: RangeKind;
  lo: number;
  hi: number;
  /** Why, with the numbers. */
  why: string;
}

export function resourceRange(job: { nodes: number; minNodes: number; maxNodes: number }, phase: SpmdPhase, upper: number, lower: number): RangeEntry {
  const n = job.nodes;
  const lo = Math.min(job.minNodes, n);
  const a = phase.average;
  const t = phase.trend;
  const mt = `MTCT avg ${fmt(a)} trend ${fmt(t)}`;
  if (a > upper || t > upper) {
    const hi = Math.max(lo, Math.floor(n / 2));
    return { kind: "shrink", lo, hi, why: `${mt}: above upper ${upper}, halve (mandatory)` };
  }
  if (a < lower && t < lower) {
    const hi = Math.max(n, Math.min(job.maxNodes, 2 * n));
    return { kind: "grow", lo, hi, why: `${mt}: below lower ${lower}, may double` };
  }
  if (a < lower || t < lower) return { kind: "unsteady", lo: n, hi: n, why: `${mt}: one below lower ${lower}, one in band, not a candidate` };
  return { kind: "hold", lo, hi: n, why: `${mt}: within [${lower}, ${upper}], hold` };
}

export function fmt(x: number): string {
  if (x === 0) return "0";
  return Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(2);
}
