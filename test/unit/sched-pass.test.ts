import { describe, expect, test } from "bun:test";
import { nameStarts, nodeCounts } from "../../src/sched/batch.ts";
import { resolveConfig } from "../../src/sched/config.ts";
import { planPass } from "../../src/sched/policies/index.ts";
import type { ClusterNode, JobState } from "../../src/sched/types.ts";

const NOW = 50_000_000;

function elastic(id: number, nodes: number, mtct: number, extra: Partial<JobState> = {}): JobState {
  return {
    id,
    nodes,
    minNodes: 1,
    maxNodes: 32,
    elastic: true,
    submitTime: 1,
    startTime: NOW - 600_000,
    timeLimit: 7200,
    samples: [0, 1, 2].map((k) => ({ time: NOW - k * 60_000, mtct })),
    adapting: false,
    ...extra,
  };
}

describe("a whole ers pass (the dissertation's policy), as the controller calls it", () => {
  test("counts and names come from the node list; starts get names in name order", () => {
    const nodes: ClusterNode[] = [
      { name: "n10", up: true },
      { name: "n2", up: true, jobId: 4 },
      { name: "n9", up: true },
      { name: "n1", up: false },
    ];
    expect(nodeCounts(nodes)).toEqual({ upNodes: 3, idleNodes: 2 });
    expect(nameStarts(nodes, [{ jobId: 7, nodes: 2, reason: "fcfs" }])).toEqual([{ jobId: 7, nodes: ["n9", "n10"], reason: "fcfs" }]);
    expect(() => nameStarts(nodes, [{ jobId: 7, nodes: 3, reason: "fcfs" }])).toThrow(/2 are idle/);
  });

  test("moldable start, then the ERS: a waiting job is admitted by a balanced shrink", () => {
    const plan = planPass({
      now: NOW,
      upNodes: 16,
      idleNodes: 2,
      running: [elastic(1, 14, 0.05)],
      pending: [
        { id: 2, minNodes: 1, maxNodes: 4, preferredNodes: 4, elastic: true, timeLimit: 600, submitTime: 2 },
        { id: 3, minNodes: 6, maxNodes: 6, timeLimit: 600, submitTime: 3 },
      ],
      config: resolveConfig({ policy: "ers", settle: 60 }),
    });
    expect(plan.starts).toEqual([{ jobId: 2, nodes: 2, reason: "fcfs" }]);
    expect(plan.resizes).toEqual([expect.objectContaining({ jobId: 1, from: 14, to: 8, rule: "balance" })]);
    expect(plan.reservations.map((r) => r.jobId)).toEqual([3]);
  });

  test("per-job overrides are clamped to the admin limits and the clamp is noted", () => {
    const running = [elastic(1, 8, 0.3, { overrides: { upper: 0.9 } })];
    const base = { now: NOW, upNodes: 8, idleNodes: 0, running, pending: [], config: resolveConfig({ policy: "ers" }) };
    // Refused without a limit: the default upper (0.1) halves the job.
    const refused = planPass(base);
    expect(refused.resizes[0]).toMatchObject({ jobId: 1, to: 4, rule: "shrink" });
    expect(refused.notes[0]!.text).toContain("upper 0.9 refused");
    // Allowed up to 0.5: MTCT 0.3 is then inside the band and the job keeps its size.
    const allowed = planPass({ ...base, limits: { upper: [0.05, 0.5] } });
    expect(allowed.resizes).toEqual([]);
    expect(allowed.notes[0]!.text).toContain("clamped to 0.5");
  });
});
