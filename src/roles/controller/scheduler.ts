/**
 * The controller's one scheduling loop: coalesces requests into one pass per event-loop turn,
 * hands the pure scheduler the jobs' cached views and carries out the plan it returns. A pass with
 * no idle node cannot start anything, so it is skipped unless it is the periodic full pass (which
 * refreshes why jobs wait). Starts come from FCFS + EASY with moldable starts, or, for the seeds'
 * policies, from the policy's own plan; why jobs wait is always FCFS + EASY's account. Every
 * `elastic.intervalMs` a pass also carries out the policy's resizes (the plan's, for the seeds'
 * policies the same plan their starts came from; else one made after this pass's starts).
 */
import { nameStarts, planBatch } from "../../sched/batch.ts";
import type { BatchInput, PassInput, PassPlan } from "../../sched/types.ts";
import type { Jobs } from "./jobs.ts";
import type { SpawnQueue } from "./spawns.ts";
import type { ClusterState } from "./state.ts";

export class SchedulerLoop {
  private queued: { full: boolean } | undefined;
  private nextElastic = 0;

  constructor(
    private readonly state: ClusterState,
    private readonly jobs: Jobs,
    private readonly spawns: SpawnQueue,
    private readonly opts: {
      backfill?: boolean;
      /** The resizing policies' pass: `ownStarts` when its plan's starts replace FCFS + EASY's. */
      elastic?: { ownStarts: boolean; resizes: boolean; intervalMs: number; plan(now: number): Planned; carryOut(p: Planned, now: number): void };
      beforePass?: (now: number) => void;
      passTook?: (ms: number) => void;
    } = {},
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
    const el = this.opts.elastic;
    const due = el !== undefined && el.resizes && now >= this.nextElastic;
    if (due) this.nextElastic = now + el.intervalMs;
    const own = el?.ownStarts ? el.plan(now) : undefined;
    const plan = own && !reasons ? undefined : planBatch(input);
    const starts = own ? nameStarts(input.nodes, own.plan.starts, input.pending) : plan!.starts;
    for (const s of starts) {
      const job = this.state.jobs.get(s.jobId);
      if (job && job.row.state === "PENDING") this.jobs.start(job, s.nodes, s.reason, now);
    }
    if (due) el.carryOut(own ?? el.plan(now), now);
    for (const [id, why] of plan?.waiting ?? []) {
      const job = this.state.jobs.get(id);
      if (job && job.row.state === "PENDING" && job.waitReason !== why) {
        job.waitReason = why;
        this.jobs.notifyLaunchers(job);
      }
    }
  }
}

/** A plan with the input it was made from. */
export interface Planned {
  input: PassInput;
  plan: PassPlan;
}
