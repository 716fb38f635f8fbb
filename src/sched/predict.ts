/**
 * When and where a job would start if nothing else were submitted and every running job ran to its
 * time limit (sbatch --test-only): the controller's own plans (`makePlan`, starts only, the
 * configured policy) replayed at each expected end until it starts. Pure; bounded by the number of
 * jobs, since every step ends at least one of them. `replay` takes one step (one makePlan) at a
 * time, so that a caller can stop after a number of them and let other work run between them.
 * In resource mode the prediction says what it would hold on each node (its shares), and the jobs
 * the replay starts hold theirs until their limits.
 */
import type { NodeShare } from "../domain/resources.ts";
import { expectedEnd } from "./elastic.ts";
import { makePlan, type Snapshot, type SnapshotJob } from "./plan.ts";

export interface Prediction {
  /** Epoch ms; undefined if it can never start on these nodes. */
  start?: number;
  nodes: string[];
  /** Resource mode: its share of each node. */
  shares?: NodeShare[];
}

export function predictStart(snap: Snapshot, jobId: number, notBefore = snap.now): Prediction {
  const steps = replay(snap, jobId, notBefore);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** The replay: yields after each step (one plan, then the jump to the next end) that did not start the job. */
export function* replay(snap: Snapshot, jobId: number, notBefore = snap.now): Generator<void, Prediction> {
  let now = Math.max(snap.now, notBefore);
  let running: SnapshotJob[] = [...snap.running];
  let pending = [...snap.pending];
  const holder = new Map<string, number | undefined>(snap.nodes.map((n) => [n.name, n.jobId]));
  for (let round = 0; round <= snap.running.length + snap.pending.length + 1; round++) {
    const nodes = snap.nodes.map((n) => ({ ...n, jobId: holder.get(n.name) }));
    const plan = makePlan({ ...snap, now, nodes, running, pending, spawns: [], reasons: false, resizes: false });
    const mine = plan.starts.find((s) => s.jobId === jobId);
    if (mine) return { start: now, nodes: mine.nodes, ...(mine.shares ? { shares: mine.shares } : {}) };
    const byId = new Map(pending.map((j) => [j.id, j]));
    for (const s of plan.starts) {
      const j = byId.get(s.jobId)!;
      for (const n of s.nodes) holder.set(n, s.jobId);
      // Started in the replay: rigid, running to its limit.
      running.push({ id: j.id, nodes: s.nodes.length, nodeNames: s.nodes, minNodes: s.nodes.length, maxNodes: s.nodes.length, elastic: false, submitTime: j.submitTime, startTime: now, timeLimit: j.timeLimit, expectedEnd: now + j.timeLimit * 1000, samples: [], adapting: false, ...(s.shares ? { shares: s.shares } : {}) });
    }
    const started = new Set(plan.starts.map((s) => s.jobId));
    pending = pending.filter((j) => !started.has(j.id));
    if (running.length === 0) return { nodes: [] };
    // Jump to the next end: those jobs' nodes are free then.
    const next = Math.max(now, Math.min(...running.map(expectedEnd)));
    const ending = running.filter((r) => expectedEnd(r) <= next);
    running = running.filter((r) => expectedEnd(r) > next);
    for (const r of ending) for (const n of r.nodeNames) if (holder.get(n) === r.id) holder.set(n, undefined);
    now = next;
    yield;
  }
  return { nodes: [] };
}
