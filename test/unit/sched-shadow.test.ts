import { describe, expect, test } from "bun:test";
import type { NodeResources, NodeShare, ResourceRequest } from "../../src/domain/resources.ts";
import { demandOf, NeverFits, planBatchVectors, shadowOf, type Ending } from "../../src/sched/batch-vectors.ts";
import { Pool } from "../../src/sched/pool.ts";
import type { ClusterNode, PendingJob } from "../../src/sched/types.ts";
import { mulberry32 } from "../../src/sim/random.ts";

// The batch pass's shadow time with endings sorted once per pass, and a pool copied without its
// profiles (caches): both must leave every answer as it was (issue 36: exact cuts of the pass).

const NOW = 1_000_000_000;
const cpu = (cores: number): NodeResources => ({ cores, memMiB: cores * 1000, gpus: [], features: [] });
const req = (over: Partial<ResourceRequest> = {}): ResourceRequest => ({ cpusPerTask: 1, exclusive: false, ...over });

/** A random cluster of shared nodes, jobs running on part of it (ends often equal), and a queue. */
function scene(seed: number) {
  const r = mulberry32(seed);
  const rnd = () => r.next();
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const nodes: ClusterNode[] = Array.from({ length: int(2, 6) }, (_, i) => ({ name: `n${i + 1}`, up: true, resources: cpu(int(2, 8)) }));
  const running: { nodeNames: string[]; shares: NodeShare[]; end: number }[] = [];
  for (const n of nodes) {
    let next = 0;
    while (next < n.resources!.cores && rnd() < 0.8) {
      const k = Math.min(int(1, 3), n.resources!.cores - next);
      const cores = Array.from({ length: k }, (_, i) => next + i);
      next += k;
      running.push({ nodeNames: [n.name], shares: [{ node: n.name, cores, memMiB: k * 1000, gpus: [] }], end: NOW + int(1, 4) * 60_000 });
    }
  }
  const pending: PendingJob[] = Array.from({ length: int(3, 12) }, (_, i) => {
    const tasks = int(1, 6);
    return { id: i + 1, minNodes: 1, maxNodes: 1, timeLimit: int(1, 6) * 60, submitTime: i, resources: rnd() < 0.3 ? req({ nodes: 1, tasksPerNode: Math.min(tasks, 2) }) : req({ tasks }) };
  });
  const endings: Ending[] = running.map((j) => ({ shares: j.shares, end: j.end }));
  return { nodes, running, pending, endings };
}

describe("shadow time: endings sorted once, pool copied without its profiles", () => {
  test("a batch pass's reservation, found on its endings in order merged with its own starts, is the shadow of all of them unsorted", () => {
    let reserved = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const { nodes, running, pending, endings } = scene(seed);
      const never = NeverFits.of(nodes, undefined);
      const plan = planBatchVectors({ now: NOW, pool: Pool.of(nodes, running), never: (j, d) => never.never(j, d), endings: [...endings].sort((a, b) => a.end - b.end), pending });
      if (!plan.reservation) continue;
      // The reservation's job is the first that did not start; what started before it ends at its limit.
      const job = pending.find((j) => j.id === plan.reservation!.jobId)!;
      const startedBefore = plan.starts.filter((s) => s.reason === "fcfs");
      const after = Pool.of(nodes, running);
      for (const s of startedBefore) after.take(s.shares);
      const own = startedBefore.map((s) => ({ shares: s.shares, end: NOW + pending.find((j) => j.id === s.jobId)!.timeLimit * 1000 }));
      const shadow = shadowOf(after, [...own, ...endings], job, demandOf(job), NOW);
      expect({ start: plan.reservation.start, shares: plan.reservation.shares }).toEqual({ start: shadow!.time, shares: shadow!.placement.shares });
      if (own.length > 0) reserved++;
    }
    // Reservations found on the running jobs' ends and on this pass's starts.
    expect(reserved).toBeGreaterThan(30);
  });

  test("shadowOf on endings already in order (`sorted`) answers as on them unsorted, and the pool it starts from is left alone", () => {
    let found = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const { nodes, running, pending, endings } = scene(seed);
      const job = pending.at(-1)!;
      const pool = Pool.of(nodes, running);
      const before = pool.profile(job.resources!, 1, false).caps.slice();
      const a = shadowOf(pool, endings, job, demandOf(job), NOW);
      const b = shadowOf(pool, [...endings].sort((x, y) => x.end - y.end), job, demandOf(job), NOW, true);
      expect(b?.time).toBe(a?.time);
      expect(b?.placement).toEqual(a?.placement);
      if (a) found++;
      expect(pool.profile(job.resources!, 1, false).caps).toEqual(before);
    }
    expect(found).toBeGreaterThan(100);
  });

  test("a copy without the profiles makes each again as the copy with them keeps it", () => {
    for (let seed = 1; seed <= 100; seed++) {
      const { nodes, running, pending, endings } = scene(seed);
      const pool = Pool.of(nodes, running);
      for (const j of pending) pool.profile(j.resources!, 1, false);
      const kept = pool.clone();
      const fresh = pool.clone(false);
      for (const e of endings.slice(0, 3)) {
        kept.give(e.shares);
        fresh.give(e.shares);
      }
      for (const j of pending)
        for (const past of [false, true]) {
          const k = kept.profile(j.resources!, 1, past);
          const f = fresh.profile(j.resources!, 1, past);
          expect([f.sum, [...f.caps], [...f.hist]]).toEqual([k.sum, [...k.caps], [...k.hist]]);
        }
    }
  });
});
