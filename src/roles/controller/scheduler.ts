/**
 * Runs scheduling passes: coalesces requests into one pass per event-loop turn, builds the pure
 * scheduler's input from the in-memory state and carries out the plan it returns.
 */
import { planBatch } from "../../sched/batch.ts";
import type { BatchInput } from "../../sched/types.ts";
import type { Jobs } from "./jobs.ts";
import type { ClusterState } from "./state.ts";

export class SchedulerLoop {
  private pending = false;
  passes = 0;

  constructor(
    private readonly state: ClusterState,
    private readonly jobs: Jobs,
  ) {}

  request(): void {
    if (this.pending) return;
    this.pending = true;
    setImmediate(() => {
      this.pending = false;
      this.pass();
    });
  }

  snapshot(now: number): BatchInput {
    const input: BatchInput = { now, nodes: [], running: [], pending: [] };
    for (const n of this.state.nodes.values()) {
      input.nodes.push({ name: n.row.name, up: this.state.isSchedulable(n, now), jobId: n.jobId });
    }
    for (const j of this.state.jobs.values()) {
      const r = j.row;
      if (r.state === "PENDING") input.pending.push({ id: r.id, minNodes: r.minNodes, maxNodes: r.elastic ? r.nodes : r.maxNodes, timeLimit: r.timeLimit, submitTime: r.submitTime });
      else input.running.push({ id: r.id, nodes: j.nodes, expectedEnd: (r.startTime ?? now) + r.timeLimit * 1000 });
    }
    return input;
  }

  pass(now = Date.now()): void {
    this.passes++;
    const plan = planBatch(this.snapshot(now));
    for (const s of plan.starts) {
      const job = this.state.jobs.get(s.jobId);
      if (job && job.row.state === "PENDING") this.jobs.start(job, s.nodes, s.reason, now);
    }
    for (const [id, why] of plan.waiting) {
      const job = this.state.jobs.get(id);
      if (job && job.waitReason !== why) {
        job.waitReason = why;
        this.jobs.notifyLaunchers(job);
      }
    }
  }
}
