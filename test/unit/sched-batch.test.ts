import { describe, expect, test } from "bun:test";
import { planBatch, shadowTime } from "../../src/sched/batch.ts";
import type { ClusterNode, PendingJob, RunningJob } from "../../src/sched/types.ts";

const NOW = 1_000_000;
const min = 60;

function cluster(n: number, held: Record<string, number> = {}, down: string[] = []): ClusterNode[] {
  return Array.from({ length: n }, (_, i) => {
    const name = `node${String(i + 1).padStart(2, "0")}`;
    return { name, up: !down.includes(name), jobId: held[name] };
  });
}
function pending(id: number, nodes: number, limitSec: number, submitTime = id): PendingJob {
  return { id, minNodes: nodes, maxNodes: nodes, timeLimit: limitSec, submitTime };
}
function running(id: number, nodes: string[], endsInSec: number): RunningJob {
  return { id, nodes, expectedEnd: NOW + endsInSec * 1000 };
}

describe("FCFS order", () => {
  test("starts jobs in submit order while they fit, lowest node names first", () => {
    const plan = planBatch({ now: NOW, nodes: cluster(4), running: [], pending: [pending(2, 1, min, 20), pending(1, 2, min, 10)] });
    expect(plan.starts).toEqual([
      { jobId: 1, nodes: ["node01", "node02"], reason: "fcfs" },
      { jobId: 2, nodes: ["node03"], reason: "fcfs" },
    ]);
    expect(plan.reservation).toBeUndefined();
  });

  test("ties on submit time break by job id", () => {
    const plan = planBatch({ now: NOW, nodes: cluster(1), running: [], pending: [pending(9, 1, min, 5), pending(3, 1, min, 5)] });
    expect(plan.starts.map((s) => s.jobId)).toEqual([3]);
  });

  test("node names sort numerically, not as text", () => {
    const nodes: ClusterNode[] = ["n10", "n9", "n1"].map((name) => ({ name, up: true }));
    const plan = planBatch({ now: NOW, nodes, running: [], pending: [pending(1, 2, min)] });
    expect(plan.starts[0]!.nodes).toEqual(["n1", "n9"]);
  });

  test("down and held nodes are never handed out", () => {
    const plan = planBatch({ now: NOW, nodes: cluster(4, { node01: 7 }, ["node02"]), running: [running(7, ["node01"], 100)], pending: [pending(1, 2, min)] });
    expect(plan.starts).toEqual([{ jobId: 1, nodes: ["node03", "node04"], reason: "fcfs" }]);
  });

  test("a job larger than the up nodes waits with a reason and does not block the queue", () => {
    const plan = planBatch({ now: NOW, nodes: cluster(4, {}, ["node04"]), running: [], pending: [pending(1, 4, min), pending(2, 1, min)] });
    expect(plan.starts.map((s) => s.jobId)).toEqual([2]);
    expect(plan.waiting.get(1)).toContain("3 are up");
  });
});

describe("EASY backfilling", () => {
  // 4 nodes; job 7 holds 3 of them for 100 s more; job 1 (head) wants 4 nodes -> shadow = now+100 s.
  const base = { now: NOW, nodes: cluster(4, { node01: 7, node02: 7, node03: 7 }), running: [running(7, ["node01", "node02", "node03"], 100)] };

  test("the head job that does not fit gets a reservation at the shadow time", () => {
    const plan = planBatch({ ...base, pending: [pending(1, 4, min)] });
    expect(plan.starts).toEqual([]);
    expect(plan.reservation).toEqual({ jobId: 1, start: NOW + 100_000, nodes: 4 });
  });

  test("a short job that ends before the shadow time backfills", () => {
    const plan = planBatch({ ...base, pending: [pending(1, 4, min), pending(2, 1, 50)] });
    expect(plan.starts).toEqual([{ jobId: 2, nodes: ["node04"], reason: "backfill" }]);
  });

  test("a job ending exactly at the shadow time backfills", () => {
    const plan = planBatch({ ...base, pending: [pending(1, 4, min), pending(2, 1, 100)] });
    expect(plan.starts.map((s) => s.jobId)).toEqual([2]);
  });

  test("a long job that would delay the reservation does not backfill", () => {
    const plan = planBatch({ ...base, pending: [pending(1, 4, min), pending(2, 1, 101)] });
    expect(plan.starts).toEqual([]);
    expect(plan.waiting.get(2)).toContain("would delay job 1");
  });

  test("a long job may use nodes the reservation leaves over", () => {
    // 6 nodes, 3 held until +100 s; head wants 4 -> at +100 s 6 are free, 2 extra.
    const nodes = cluster(6, { node01: 7, node02: 7, node03: 7 });
    const plan = planBatch({ now: NOW, nodes, running: [running(7, ["node01", "node02", "node03"], 100)], pending: [pending(1, 4, min), pending(2, 2, 10_000), pending(3, 1, 10_000)] });
    // job 2 takes the 2 extra nodes; job 3 would then eat into the reservation.
    expect(plan.starts).toEqual([{ jobId: 2, nodes: ["node04", "node05"], reason: "backfill" }]);
    expect(plan.waiting.get(3)).toContain("would delay job 1");
  });

  test("only the first blocked job is protected (EASY, not conservative)", () => {
    // head job 1 (4 nodes) reserved at +100 s; job 2 (3 nodes) also blocked, unprotected:
    // job 3 (1 node, long) may not start because no node is extra for job 1.
    const plan = planBatch({ ...base, pending: [pending(1, 4, min), pending(2, 3, min), pending(3, 1, 1000)] });
    expect(plan.starts).toEqual([]);
    expect(plan.reservation!.jobId).toBe(1);
  });

  test("backfilled jobs never delay the reservation: random cases against a replay", () => {
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 300; round++) {
      const total = 2 + rand(10);
      const held: Record<string, number> = {};
      const runs: RunningJob[] = [];
      const names = cluster(total).map((n) => n.name);
      let next = 100;
      for (const name of names) {
        if (rand(3) === 0) continue;
        held[name] = next;
        runs.push(running(next++, [name], 1 + rand(200)));
      }
      const queue = Array.from({ length: 1 + rand(8) }, (_, i) => pending(i + 1, 1 + rand(total), 1 + rand(300)));
      const plan = planBatch({ now: NOW, nodes: cluster(total, held), running: runs, pending: queue });
      if (!plan.reservation) continue;
      // Replay: after the starts, when are `reservation.nodes` nodes free? Never later than promised.
      const started = plan.starts.map((s) => ({ id: s.jobId, nodes: s.nodes, expectedEnd: NOW + queue.find((q) => q.id === s.jobId)!.timeLimit * 1000 }));
      const freeNow = total - Object.keys(held).length - started.reduce((a, s) => a + s.nodes.length, 0);
      const t = shadowTime([...runs, ...started], freeNow, plan.reservation.nodes, NOW).time;
      expect(t).toBeLessThanOrEqual(plan.reservation.start);
    }
  });
});

describe("time limits", () => {
  test("a running job past its limit counts as ending now", () => {
    const nodes = cluster(2, { node01: 7 });
    const plan = planBatch({ now: NOW, nodes, running: [running(7, ["node01"], -5)], pending: [pending(1, 2, min), pending(2, 1, 30)] });
    expect(plan.reservation!.start).toBe(NOW);
    // nothing may backfill: the reservation is due now and leaves no extra node.
    expect(plan.starts).toEqual([]);
  });

  test("the shadow time is the end of the job whose nodes complete the need", () => {
    const runs = [running(1, ["a"], 300), running(2, ["b", "c"], 100), running(3, ["d"], 200)];
    expect(shadowTime(runs, 0, 3, NOW)).toEqual({ time: NOW + 200_000, extra: 0 });
    expect(shadowTime(runs, 1, 3, NOW)).toEqual({ time: NOW + 100_000, extra: 0 });
    expect(shadowTime(runs, 0, 9, NOW).time).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("moldable starts", () => {
  test("a moldable job starts at the largest size that is free, within its range", () => {
    const job: PendingJob = { id: 1, minNodes: 2, maxNodes: 8, timeLimit: min, submitTime: 1 };
    const plan = planBatch({ now: NOW, nodes: cluster(5), running: [], pending: [job] });
    expect(plan.starts[0]!.nodes.length).toBe(5);
  });
});
