import { describe, expect, test } from "bun:test";
import { applyPlan } from "../../src/sim/apply.ts";
import { SimCluster } from "../../src/sim/cluster.ts";
import { amdahlWork, type SimJob } from "../../src/sim/job.ts";
import { measure } from "../../src/sim/job-run.ts";
import type { Replay } from "../../src/sim/replay.ts";
import { Tally } from "../../src/sim/tally.ts";
import { Timeline } from "../../src/sim/timeline.ts";
import { runningView } from "../../src/sim/view.ts";
import type { Plan, PlanResize } from "../../src/sched/plan.ts";

// A running job's view is worked out once per instant (view.ts): a second pass at the same instant
// reads it as is, unless the job changed since (a plan item bumps its version) or took a sample.
function replayWith(job: SimJob): { x: Replay; plan: (p: Partial<Plan>) => void } {
  const cluster = new SimCluster(4);
  const timeline = new Timeline();
  cluster.arrive(cluster.add(job));
  const x: Replay = { cluster, timeline, tally: new Tally(), noisy: (m) => m, now: 10 };
  const plan = (p: Partial<Plan>) => applyPlan({ now: x.now * 1000, policy: "ebb", spawns: [], starts: [], resizes: [], reservations: [], notes: [], waiting: [], ...p }, x);
  return { x, plan };
}

const malleable: SimJob = { id: 1, submit: 0, nodes: 2, minNodes: 1, maxNodes: 4, malleable: true, estimate: 400, work: amdahlWork(800, 0.1), resizeCost: () => 5 };

describe("a running job's view at one instant", () => {
  test("reads the same in a second pass, and follows the clock at the next instant", () => {
    const { x, plan } = replayWith(malleable);
    plan({ starts: [{ jobId: 1, nodes: ["n1", "n2"], reason: "test" }] });
    const r = x.cluster.jobs.get(1)!;
    const first = { ...runningView(r, 10) };
    expect(first.remaining).toBe(400);
    expect({ ...runningView(r, 10) }).toEqual(first);
    // The next instant: the clock part is worked out again (a view kept across instants would still say 400).
    expect(runningView(r, 30).remaining).toBe(380);
  });

  test("a resize the first pass began shows in the second pass at the same instant", () => {
    const { x, plan } = replayWith(malleable);
    plan({ starts: [{ jobId: 1, nodes: ["n1", "n2"], reason: "test" }] });
    const r = x.cluster.jobs.get(1)!;
    expect(runningView(r, 10).adapting).toBe(false);
    const grow: PlanResize = { jobId: 1, from: 2, to: 4, rule: "grow", reason: "test", added: ["n3", "n4"], removed: [], remap: { staying: 2, leaving: 0, joining: 2, tasks: [1, 1, 1, 1] }, limit: { ratio: 1, source: "test" } };
    plan({ resizes: [grow] });
    const v = runningView(r, 10);
    expect(v.adapting).toBe(true);
    expect(v.resizingTo).toBe(4);
    // Its remaining time now counts the adaptation and the larger size (not the 400 s of before).
    expect(v.remaining).not.toBe(400);
  });

  test("a sample taken at the same instant shows in the view's MTCT", () => {
    const { x, plan } = replayWith(malleable);
    plan({ starts: [{ jobId: 1, nodes: ["n1", "n2"], reason: "test" }] });
    const r = x.cluster.jobs.get(1)!;
    expect(runningView(r, 10).mtct).toBeUndefined();
    measure(r, 10, (m) => m);
    expect(runningView(r, 10).mtct).toEqual({ average: malleable.work.mtct(2), count: 1 });
  });
});
