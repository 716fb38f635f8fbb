/**
 * When and where a job would start if nothing else were submitted and every running job ran to its
 * time limit (sbatch --test-only): batch passes replayed at each expected end until it starts.
 * Pure; bounded by the number of jobs, since every step ends at least one of them.
 */
import { planBatch } from "./batch.ts";
import type { BatchInput, RunningJob } from "./types.ts";

export interface Prediction {
  /** Epoch ms; undefined if it can never start on these nodes. */
  start?: number;
  nodes: string[];
}

export function predictStart(input: BatchInput, jobId: number, notBefore = input.now): Prediction {
  let now = Math.max(input.now, notBefore);
  let running: RunningJob[] = [...input.running];
  let pending = [...input.pending];
  const holder = new Map<string, number | undefined>(input.nodes.map((n) => [n.name, n.jobId]));
  for (let round = 0; round <= input.running.length + input.pending.length + 1; round++) {
    const nodes = input.nodes.map((n) => ({ name: n.name, up: n.up, jobId: holder.get(n.name) }));
    const plan = planBatch({ ...input, now, nodes, running, pending, reasons: false });
    const mine = plan.starts.find((s) => s.jobId === jobId);
    if (mine) return { start: now, nodes: mine.nodes };
    const byId = new Map(pending.map((j) => [j.id, j]));
    for (const s of plan.starts) {
      for (const n of s.nodes) holder.set(n, s.jobId);
      running.push({ id: s.jobId, nodes: s.nodes, expectedEnd: now + byId.get(s.jobId)!.timeLimit * 1000 });
    }
    const started = new Set(plan.starts.map((s) => s.jobId));
    pending = pending.filter((j) => !started.has(j.id));
    if (running.length === 0) return { nodes: [] };
    // Jump to the next end: those jobs' nodes are free then.
    const next = Math.max(now, Math.min(...running.map((r) => r.expectedEnd)));
    const ending = running.filter((r) => r.expectedEnd <= next);
    running = running.filter((r) => r.expectedEnd > next);
    for (const r of ending) for (const n of r.nodes) if (holder.get(n) === r.id) holder.set(n, undefined);
    now = next;
  }
  return { nodes: [] };
}
