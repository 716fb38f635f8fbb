/**
 * Runs scheduling passes: coalesces requests into one pass per event-loop turn, hands the pure
 * scheduler the jobs' cached views and carries out the plan it returns. A pass with no idle node
 * cannot start anything, so it is skipped unless it is the periodic full pass (which refreshes
 * why jobs wait). Starts come from FCFS + EASY with moldable starts, or, for the seeds' policies,
 * from the policy's own pass (`policyStarts`); why jobs wait is always FCFS + EASY's account.
 */
import { nameStarts, planBatch } from "../../sched/batch.ts";
import type { BatchInput, CountStart } from "../../sched/types.ts";
import type { Jobs } from "./jobs.ts";
import type { SpawnQueue } from "./spawns.ts";
import type { ClusterState } from "./state.ts";

export class SchedulerLoop {
  private queued: { full: boolean } | undefined;

  constructor(
    private readonly state: ClusterState,
    private readonly jobs: Jobs,
    private readonly spawns: SpawnQueue,
    private readonly opts: { backfill?: boolean; policyStarts?: (now: number) => CountStart[]; beforePass?: (now: number) => void; passTook?: (ms: number) => void } = {},
  ) {}

  request(opts: { full?: boolean } = {}): void {
    if (this.queued) {
      this.queued.full ||= opts.full === true;
      return;
    }
    this.queued = { full: opts.full === true };
    setImmediate(() => {
      const { full } = this.queued!;
      this.queued = undefined;
      if (full || this.state.hasIdleNode(Date.now())) this.pass(Date.now(), full);
    });
  }

  snapshot(now: number, reasons = true): BatchInput {
    const input: BatchInput = { now, nodes: [], running: [], pending: [], reasons, backfill: this.opts.backfill };
    for (const n of this.state.nodes.values()) input.nodes.push({ name: n.row.name, up: this.state.isSchedulable(n, now), jobId: n.jobId });
    for (const j of this.state.jobs.values()) {
      if (j.sched.pending) input.pending.push(j.sched.pending);
      else if (j.sched.running) input.running.push(j.sched.running);
    }
    return input;
  }

  /** One pass; `reasons` also refreshes why each pending job waits (the periodic pass does). */
  pass(now = Date.now(), reasons = true): void {
    const t0 = performance.now();
    try {
      this.passOnce(now, reasons);
    } finally {
      this.opts.passTook?.(performance.now() - t0);
    }
  }

  private passOnce(now: number, reasons: boolean): void {
    // Which pending jobs may be scheduled at all (holds, dependencies, begin times...) is settled first.
    this.opts.beforePass?.(now);
    // Running jobs asking for nodes (PMI spawn) come before the queue.
    if (this.spawns.waiting > 0) this.spawns.serve(now);
    const input = this.snapshot(now, reasons);
    const policyStarts = this.opts.policyStarts;
    const plan = policyStarts && !reasons ? undefined : planBatch(input);
    const starts = policyStarts ? nameStarts(input.nodes, policyStarts(now), input.pending) : plan!.starts;
    for (const s of starts) {
      const job = this.state.jobs.get(s.jobId);
      if (job && job.row.state === "PENDING") this.jobs.start(job, s.nodes, s.reason, now);
    }
    for (const [id, why] of plan?.waiting ?? []) {
      const job = this.state.jobs.get(id);
      if (job && job.row.state === "PENDING" && job.waitReason !== why) {
        job.waitReason = why;
        this.jobs.notifyLaunchers(job);
      }
    }
  }
}
