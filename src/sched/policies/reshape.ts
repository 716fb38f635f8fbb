/**
 * ReSHAPE (Sudarsan & Ribbens) as a policy. Batch side: FCFS with simple (EASY) backfilling, jobs
 * start at their requested size. At each job's resize point:
 * - the last expansion made the iteration time worse: revert to the previous size;
 * - a job waits: shrink to a size the job already ran at, enough to start the head of the queue if
 *   one such size frees enough, else to the smallest size it ran at;
 * - idle nodes nobody waits for, and the job never expanded or its last expansion helped: expand
 *   to its next valid size (or +50% when it declares none).
 * No cost model (the paper recorded redistribution cost but did not use it).
 */
import type { PassInput, PassPlan, Resize } from "../types.ts";
import { batch, countStarts, firstWaiting, incomingNodes, movable, nextSize, queue, rigid } from "./common.ts";

export function planReshape(input: PassInput): PassPlan {
  const q = queue(input);
  const b = batch(input, q, { rigid: true });
  const head = firstWaiting(input, q, b.starts, 1)[0];
  const idle = b.free;
  let need = head ? rigid(head).minNodes - idle - incomingNodes(input) : 0;
  // With a job waiting, only nodes its reservation leaves over may go to expansions.
  let spare = head ? Math.min(idle, Math.max(0, b.extra)) : idle;
  const resizes: Resize[] = [];
  const jobs = input.running.filter((j) => movable(j, input) && j.profile && j.profile.length > 0 && j.profile[j.profile.length - 1]!.nodes === j.nodes);
  jobs.sort((a, b2) => a.id - b2.id);

  for (const job of jobs) {
    const profile = job.profile!;
    const last = profile[profile.length - 1]!;
    const prev = profile.length > 1 ? profile[profile.length - 2] : undefined;
    const n = job.nodes;
    if (prev && last.nodes > prev.nodes && last.iterTime >= prev.iterTime) {
      resizes.push({ jobId: job.id, from: n, to: prev.nodes, rule: "revert", reason: `iteration time ${last.iterTime.toFixed(2)} s at ${n} nodes is no better than ${prev.iterTime.toFixed(2)} s at ${prev.nodes}: revert` });
      if (need > 0) need -= n - prev.nodes;
      continue;
    }
    if (need > 0 && head) {
      const visited = [...new Set(profile.map((p) => p.nodes))].filter((s) => s < n && s >= job.minNodes).sort((x, y) => y - x);
      if (visited.length === 0) continue;
      const to = visited.find((s) => n - s >= need) ?? visited[visited.length - 1]!;
      resizes.push({ jobId: job.id, from: n, to, rule: "admit", reason: `job ${head.id} waits for ${need} more node(s): shrink to ${to}, a size it ran at` });
      need -= n - to;
      continue;
    }
    if (spare <= 0 || !expansionHelped(profile)) continue;
    const next = nextSize(job, n);
    const to = job.sizes && job.sizes.length > 0 ? next : Math.min(next, n + spare);
    if (!Number.isFinite(to) || to > job.maxNodes || to - n > spare || to <= n) continue;
    spare -= to - n;
    const why = profile.length > 1 ? `last expansion improved iteration time to ${last.iterTime.toFixed(2)} s` : "never expanded";
    resizes.push({ jobId: job.id, from: n, to, rule: "expand", reason: `${why}; ${to - n} idle node(s) nobody waits for: expand to ${to}` });
  }
  const reservations = b.reservation ? [b.reservation] : [];
  return { starts: countStarts(b), resizes, reservations, notes: [] };
}

/** ReSHAPE's third expand condition: never expanded, or the last expansion lowered the iteration time. */
export function expansionHelped(profile: readonly { nodes: number; iterTime: number }[]): boolean {
  for (let i = profile.length - 1; i > 0; i--) {
    const cur = profile[i]!;
    const before = profile[i - 1]!;
    if (cur.nodes > before.nodes) return cur.iterTime < before.iterTime;
  }
  return true;
}

