/**
 * The controller's one scheduling loop: coalesces requests into one pass per event-loop turn,
 * which first records the turn's queued reports and submissions (`gather`); each pass takes a
 * snapshot of the cluster, makes one plan with the pure scheduler (sched/plan.ts `makePlan`: spawn
 * grants, starts and resizes of the configured policy, with node names) and hands it to the plan
 * applier, which re-checks every item and carries out what still fits (plan-apply.ts). The
 * simulator runs the same `makePlan` and `checkPlan`, with the same rule for resizes: every pass
 * plans them (sched/README.md, "One cadence"). A pass with no free core on any node is skipped
 * unless it is the periodic full pass (which also refreshes why jobs wait, and is where a shrink
 * to admit a waiting job is planned when nothing is idle). No pass runs while the store takes no
 * writes (a full or read-only disk: storage.ts); one that meets it stops there.
 */
import { makePlan, type Snapshot } from "../../sched/plan.ts";
import { StoreUnavailable } from "../../store/db.ts";
import type { PlanApplier } from "./plan-apply.ts";
import type { Snapshots } from "./snapshot.ts";
import type { ClusterState } from "./state.ts";

export class SchedulerLoop {
  private queued: { full: boolean } | undefined;

  constructor(
    private readonly state: ClusterState,
    private readonly snapshots: Snapshots,
    private readonly applier: PlanApplier,
    private readonly opts: {
      /**
       * Records what this turn read and queued for its own transaction (agents' reports,
       * submissions) before the pass: the pass sees those ends and jobs, and the passes they ask
       * for join it, where each asked for one more pass in the next turn.
       */
      gather?: () => void;
      beforePass?: (now: number) => void;
      passTook?: (ms: number) => void;
      /** Whether a pass may run now (its plan can be committed). */
      mayPass?: () => boolean;
      /** A pass stopped half-way: the store refused a write. */
      unavailable?: () => void;
    } = {},
  ) {}

  request(opts: { full?: boolean } = {}): void {
    if (this.queued) {
      this.queued.full ||= opts.full === true;
      return;
    }
    this.queued = { full: opts.full === true };
    setImmediate(() => {
      const asked = this.queued!;
      try {
        this.opts.gather?.();
      } finally {
        // The passes asked for meanwhile are this one (`asked.full` included); cleared even if gather
        // threw, so that a later request still gets its pass.
        this.queued = undefined;
      }
      const { full } = asked;
      if (this.opts.mayPass?.() === false) return;
      if (!full && !this.state.hasRoom(Date.now())) return;
      try {
        this.pass(Date.now(), full);
      } catch (e) {
        if (!(e instanceof StoreUnavailable)) throw e;
        this.opts.unavailable?.();
      }
    });
  }

  /** The cluster as a pass sees it now, without resizes (what `--test-only` replays). */
  snapshot(now: number): Snapshot {
    return this.snapshots.take(now, false, false);
  }

  /** One pass; `reasons` also refreshes why each pending job waits (the periodic pass does). */
  pass(now = Date.now(), reasons = true): void {
    const t0 = performance.now();
    try {
      // Which pending jobs may be scheduled at all (holds, dependencies, begin times...) is settled first.
      this.opts.beforePass?.(now);
      this.applier.apply(makePlan(this.snapshots.take(now, reasons)), now);
    } finally {
      this.opts.passTook?.(performance.now() - t0);
    }
  }
}
