/**
 * `--check`: EASY's promise. The reservation each job gets when it becomes the first waiting job
 * (again, when a job of higher priority went before it: priority order) — the plan's reservation
 * for it; else the shadow time of the running jobs' estimates and of the jobs the plan starts (on
 * shared nodes, when its request fits once their shares are back) — and every such job that
 * starts later than that.
 */
import { demandOf, shadowOf } from "../sched/batch-vectors.ts";
import { shadowTime } from "../sched/batch.ts";
import type { Plan, Snapshot } from "../sched/plan.ts";
import { endings } from "../sched/policies/common.ts";
import { Pool } from "../sched/pool.ts";
import { endingsOf } from "../sched/resource-plan.ts";
import type { SimCluster } from "./cluster.ts";
import { startLimit } from "./job-run.ts";
import type { Violation } from "./tally.ts";

export class PromiseCheck {
  /** The reservation (s) each job got when it became first in line. */
  private readonly promised = new Map<number, number>();
  readonly violations: Violation[] = [];

  /** The job first in line after the last pass. */
  private head?: number;
  private firsts = 0;

  /** How many times a job became first in line (once per job in submit order). */
  get heads(): number {
    return this.firsts;
  }

  /**
   * The first job `plan` leaves waiting (before the plan is applied): if it just became first,
   * remember its reservation.
   */
  record(plan: Plan, snap: Snapshot, idleNodes: number, cluster: SimCluster): void {
    const starting = new Set(plan.starts.map((s) => s.jobId));
    // The snapshot's queue order: submit order, or priority order with `--priority`. A first job
    // that a job of higher priority now goes before (waiting or starting) lost its place and its
    // reservation with it, as in Slurm: it is promised anew when it is first again. In submit
    // order nothing ever goes before a first job.
    if (this.head !== undefined && snap.pending[0]?.id !== this.head) this.promised.delete(this.head);
    const first = snap.pending.find((p) => !starting.has(p.id));
    const head = first && cluster.jobs.get(first.id);
    this.head = head?.job.id;
    if (!head || this.promised.has(head.job.id)) return;
    this.firsts++;
    let at = Number.POSITIVE_INFINITY;
    for (const res of plan.reservations) if (res.jobId === head.job.id) at = Math.min(at, res.start / 1000);
    if (!Number.isFinite(at) && cluster.resources) {
      const pool = Pool.of(snap.nodes, snap.running);
      const ends = endingsOf(snap, pool);
      for (const s of plan.starts) {
        const j = cluster.jobs.get(s.jobId)?.job;
        const shares = s.shares ?? pool.wholeShares(s.nodes);
        pool.take(shares);
        if (j) ends.push({ shares, end: snap.now + startLimit(j, s.nodes.length) * 1000 });
      }
      // The shrinks and grows of the plan are left out: a grow's nodes come back no later than the job's end.
      // For the size it asked for, as on whole nodes.
      const asked = { ...head.pend, minNodes: head.job.nodes, maxNodes: head.job.nodes };
      at = (shadowOf(pool, ends, asked, demandOf(asked), snap.now)?.time ?? Number.POSITIVE_INFINITY) / 1000;
    } else if (!Number.isFinite(at)) {
      const input = { now: snap.now, upNodes: cluster.up, idleNodes, running: snap.running, pending: [], config: snap.config };
      // The policy gave it none: hold it to the shadow time for the size it asked for, by the
      // running jobs' estimates and those of the jobs this plan starts (start + requested time).
      const left = plan.starts.reduce((n, s) => n - s.nodes.length, input.idleNodes);
      const ends = endings(input);
      for (const s of plan.starts) {
        const j = cluster.jobs.get(s.jobId)?.job;
        if (j) ends.push({ nodes: s.nodes.length, expectedEnd: input.now + startLimit(j, s.nodes.length) * 1000 });
      }
      at = shadowTime(ends, left, head.job.nodes, input.now).time / 1000;
    }
    this.promised.set(head.job.id, at);
  }

  /**
   * The availability took a node away from the head's reservation: a free node stopped taking new
   * work, or a job gave back a node that is not free (the policies' reservations count on every
   * running job's nodes coming back). It is promised anew at the next pass, as after a job of
   * higher priority went first.
   */
  voidPromise(): void {
    if (this.head !== undefined) this.promised.delete(this.head);
  }

  /** A job starts at `now` (s): later than it was promised is a violation. */
  started(jobId: number, now: number): void {
    const p = this.promised.get(jobId);
    if (p !== undefined && now > p + 1e-6) this.violations.push({ job: jobId, reservation: p, start: now });
  }
}
