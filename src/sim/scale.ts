/**
 * Larger workloads from a trace, at the trace's own load: for measuring how the simulator's cost
 * grows (bench sim-speed), not for judging policies.
 * - `widen(trace, k)`: k copies side by side, for a machine k times as large. Copy c arrives
 *   c/k of the trace's mean inter-arrival time after the original, so the copies interleave
 *   instead of arriving in bursts of k; sizes, run times and limits are the trace's.
 * - `lengthen(trace, k)`: the trace k times over, each time after the last one's final arrival
 *   plus one mean inter-arrival time: the same load profile repeated, so a linear simulator takes
 *   k times as long.
 * Job ids are renumbered 1.. in arrival order (copies are distinct jobs).
 */
import type { TraceJob } from "./swf.ts";

function meanGap(trace: readonly TraceJob[]): number {
  if (trace.length < 2) return 1;
  return Math.max(1e-3, (trace[trace.length - 1]!.submit - trace[0]!.submit) / (trace.length - 1));
}

function renumbered(jobs: TraceJob[]): TraceJob[] {
  jobs.sort((a, b) => a.submit - b.submit || a.id - b.id);
  return jobs.map((j, i) => ({ ...j, id: i + 1 }));
}

export function widen(trace: readonly TraceJob[], k: number): TraceJob[] {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`widen: ${k} copies; give a whole number >= 1`);
  const gap = meanGap(trace);
  const out: TraceJob[] = [];
  for (let c = 0; c < k; c++) for (const j of trace) out.push({ ...j, id: j.id * k + c, submit: j.submit + (c * gap) / k });
  return renumbered(out);
}

export function lengthen(trace: readonly TraceJob[], k: number): TraceJob[] {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`lengthen: ${k} times; give a whole number >= 1`);
  if (trace.length === 0) return [];
  const first = trace[0]!.submit;
  const span = trace[trace.length - 1]!.submit - first + meanGap(trace);
  const out: TraceJob[] = [];
  for (let c = 0; c < k; c++) for (const j of trace) out.push({ ...j, id: j.id * k + c, submit: j.submit + c * span });
  return renumbered(out);
}
