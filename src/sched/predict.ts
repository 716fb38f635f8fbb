/**
 * When and where a job would start if nothing else were submitted and every running job ran to its
 * time limit (sbatch --test-only): the controller's own plans (`makePlan`, starts only, the
 * configured policy) replayed at each expected end until it starts (`replayAll`: until every
 * pending job has, squeue --start). Pure; bounded by the number of
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
  let found: Prediction | undefined;
  yield* replaySteps(snap, notBefore, (id, where) => {
    if (id === jobId) found = where;
    return found !== undefined;
  });
  return found ?? { nodes: [] };
}

/**
 * Every pending job's start in the same replay (squeue --start), into `starts` as each is found:
 * a caller that stops early keeps those found so far; a job that is not in it did not start
 * within the steps taken.
 */
export function* replayAll(snap: Snapshot, starts: Map<number, Prediction & { start: number }>): Generator<void, void> {
  yield* replaySteps(snap, snap.now, (id, where) => {
    starts.set(id, where);
    return false;
  });
}

/** The replay's steps; `started` hears of each start, in the order of the plans, and ends the replay by returning true. */
function* replaySteps(snap: Snapshot, notBefore: number, started: (jobId: number, where: Prediction & { start: number }) => boolean): Generator<void, void> {
  let now = Math.max(snap.now, notBefore);
  let running: SnapshotJob[] = [...snap.running];
  let pending = [...snap.pending];
  const holder = new Map<string, number | undefined>(snap.nodes.map((n) => [n.name, n.jobId]));
  for (let round = 0; round <= snap.running.length + snap.pending.length + 1; round++) {
    const nodes = snap.nodes.map((n) => ({ ...n, jobId: holder.get(n.name) }));
    const plan = makePlan({ ...snap, now, nodes, running, pending, spawns: [], reasons: false, resizes: false });
    for (const s of plan.starts) if (started(s.jobId, { start: now, nodes: s.nodes, ...(s.shares ? { shares: s.shares } : {}) })) return;
    const byId = new Map(pending.map((j) => [j.id, j]));
    for (const s of plan.starts) {
      const j = byId.get(s.jobId)!;
      for (const n of s.nodes) holder.set(n, s.jobId);
      // Started in the replay: rigid, running to its limit.
      running.push({ id: j.id, nodes: s.nodes.length, nodeNames: s.nodes, minNodes: s.nodes.length, maxNodes: s.nodes.length, elastic: false, submitTime: j.submitTime, startTime: now, timeLimit: j.timeLimit, expectedEnd: now + j.timeLimit * 1000, samples: [], adapting: false, ...(s.shares ? { shares: s.shares } : {}) });
    }
    const startedNow = new Set(plan.starts.map((s) => s.jobId));
    pending = pending.filter((j) => !startedNow.has(j.id));
    if (running.length === 0 || pending.length === 0) return;
    // Jump to the next end: those jobs' nodes are free then.
    const next = Math.max(now, Math.min(...running.map(expectedEnd)));
    const ending = running.filter((r) => expectedEnd(r) <= next);
    running = running.filter((r) => expectedEnd(r) > next);
    for (const r of ending) for (const n of r.nodeNames) if (holder.get(n) === r.id) holder.set(n, undefined);
    now = next;
    yield;
  }
}
