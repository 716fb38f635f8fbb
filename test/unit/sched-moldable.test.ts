import { describe, expect, test } from "bun:test";
import { planBatchCounts, type Ending } from "../../src/sched/batch.ts";
import type { PendingJob } from "../../src/sched/types.ts";
import { mulberry32 } from "../../src/sim/random.ts";

const NOW = 5_000_000;
const job = (id: number, minNodes: number, maxNodes: number, limit: number, preferredNodes?: number): PendingJob => ({ id, minNodes, maxNodes, timeLimit: limit, submitTime: id, preferredNodes });

/** Seeded integers in [0, n). */
function ints(seed: number): (n: number) => number {
  const g = mulberry32(seed);
  return (n) => Math.floor(g.next() * n);
}

describe("moldable starts", () => {
  test("a job starts at its preferred size when that many are free, never above it", () => {
    const p = planBatchCounts({ now: NOW, upNodes: 32, freeNodes: 32, running: [], pending: [job(1, 2, 16, 60, 8)] });
    expect(p.starts).toEqual([{ jobId: 1, nodes: 8, reason: "fcfs" }]);
  });

  test("with fewer free, it starts smaller, down to its minimum, rather than wait", () => {
    const p = planBatchCounts({ now: NOW, upNodes: 32, freeNodes: 5, running: [{ nodes: 27, expectedEnd: NOW + 1e6 }], pending: [job(1, 2, 16, 60, 8)] });
    expect(p.starts).toEqual([{ jobId: 1, nodes: 5, reason: "fcfs" }]);
    const q = planBatchCounts({ now: NOW, upNodes: 32, freeNodes: 1, running: [{ nodes: 31, expectedEnd: NOW + 1e6 }], pending: [job(1, 2, 16, 60, 8)] });
    expect(q.starts).toEqual([]);
    expect(q.reservation).toMatchObject({ jobId: 1, nodes: 2 });
  });

  test("the chosen size is always within [min, max] and never more than free, for random queues", () => {
    const r = ints(5);
    for (let round = 0; round < 300; round++) {
      const up = 4 + r(60);
      const free = r(up + 1);
      const pending = Array.from({ length: 1 + r(8) }, (_, i) => {
        const min = 1 + r(up);
        const max = min + r(up - min + 1);
        return job(i + 1, min, max, 1 + r(500), min + r(max - min + 1));
      });
      const p = planBatchCounts({ now: NOW, upNodes: up, freeNodes: free, running: [{ nodes: up - free, expectedEnd: NOW + 300_000 }], pending, scaleLimits: true });
      let used = 0;
      for (const s of p.starts) {
        const j = pending.find((x) => x.id === s.jobId)!;
        expect(s.nodes).toBeGreaterThanOrEqual(j.minNodes);
        expect(s.nodes).toBeLessThanOrEqual(Math.min(j.maxNodes, j.preferredNodes!));
        used += s.nodes;
      }
      expect(used).toBeLessThanOrEqual(free);
      expect(p.free).toBe(free - used);
    }
  });

  test("with scaled limits a job started below its preferred size counts as running longer", () => {
    // Reservation for job 1 at +100 s. Job 2 wants 4 nodes for 80 s; on the 2 free nodes it would take 160 s.
    const running: Ending[] = [{ nodes: 6, expectedEnd: NOW + 100_000 }];
    const pending = [job(1, 8, 8, 60), job(2, 1, 4, 80, 4)];
    const plain = planBatchCounts({ now: NOW, upNodes: 8, freeNodes: 2, running, pending });
    expect(plain.starts).toEqual([{ jobId: 2, nodes: 2, reason: "backfill" }]);
    const scaled = planBatchCounts({ now: NOW, upNodes: 8, freeNodes: 2, running, pending, scaleLimits: true });
    expect(scaled.starts).toEqual([]);
  });

  test("EASY never delays the reservation, moldable jobs and scaled limits included (random replay)", () => {
    const r = ints(99);
    for (let round = 0; round < 400; round++) {
      const up = 2 + r(24);
      const running: Ending[] = [];
      let held = 0;
      while (held < up && r(3) > 0) {
        const n = 1 + r(Math.max(1, Math.floor((up - held) / 2)));
        running.push({ nodes: n, expectedEnd: NOW + (1 + r(300)) * 1000 });
        held += n;
      }
      const pending = Array.from({ length: 1 + r(8) }, (_, i) => {
        const min = 1 + r(up);
        const max = min + r(up - min + 1);
        return job(i + 1, min, max, 1 + r(400), max);
      });
      const p = planBatchCounts({ now: NOW, upNodes: up, freeNodes: up - held, running, pending, scaleLimits: true });
      if (!p.reservation) continue;
      // Replay: started jobs run for their (scaled) limits; the reserved nodes must be free by the promised time.
      const ends: Ending[] = [...running];
      for (const s of p.starts) {
        const j = pending.find((x) => x.id === s.jobId)!;
        ends.push({ nodes: s.nodes, expectedEnd: NOW + ((j.timeLimit * Math.max(s.nodes, j.maxNodes)) / s.nodes) * 1000 });
      }
      ends.sort((a, b) => a.expectedEnd - b.expectedEnd);
      let avail = p.free;
      let t = NOW;
      for (const e of ends) {
        if (avail >= p.reservation.nodes) break;
        avail += e.nodes;
        t = e.expectedEnd;
      }
      expect(avail).toBeGreaterThanOrEqual(p.reservation.nodes);
      expect(t).toBeLessThanOrEqual(p.reservation.start);
    }
  });
});
