/**
 * The controller's plan applier (sched/README.md, "One plan"; Nomad's `nomad/plan_apply.go` is
 * the model): every item of a plan is re-checked against the cluster as it is now (`checkPlan`),
 * the plan — what still fits, what was rejected and why — is committed to SQLite as one row, then
 * the accepted items are carried out in order: spawn grants (the waiting request takes its
 * nodes), starts (`Jobs.start`), resizes (`Elastic.resize` with the plan's added nodes and limit
 * ratio). A rejected item, a resize the protocol refuses, and the plan's notes become events of
 * their jobs when their words change. This is the only place the scheduler's decisions act.
 */
import { ApiError } from "../../api/errors.ts";
import { checkPlan, type Plan, type PlanJobState, type PlanState } from "../../sched/plan.ts";
import type { JobStore } from "../../store/jobs.ts";
import type { PlanStore } from "../../store/plans.ts";
import { logger } from "../../util/log.ts";
import type { Elastic } from "./elastic.ts";
import type { Jobs } from "./jobs.ts";
import type { SpawnQueue } from "./spawns.ts";
import type { ClusterState, JobRuntime } from "./state.ts";

const log = logger("controller");

export class PlanApplier {
  private readonly lastNote = new Map<number, string>();

  constructor(
    private readonly state: ClusterState,
    private readonly store: JobStore,
    private readonly plans: PlanStore,
    private readonly jobs: Jobs,
    private readonly elastic: () => Elastic,
    private readonly spawns: SpawnQueue,
  ) {}

  /** The cluster as `checkPlan` sees it at `now`. */
  current(now: number): PlanState {
    return {
      node: (name) => {
        const n = this.state.nodes.get(name);
        return n && { up: this.state.isSchedulable(n, now), jobId: n.jobId };
      },
      job: (id) => {
        const job = this.state.jobs.get(id);
        return job && jobState(job);
      },
    };
  }

  apply(plan: Plan, now = Date.now()): void {
    const { accepted: p, rejected } = checkPlan(plan, this.current(now));
    if (p.spawns.length + p.starts.length + p.resizes.length + rejected.length > 0) {
      this.plans.insert({ time: now, policy: plan.policy, spawns: p.spawns, starts: p.starts, resizes: p.resizes, reservations: p.reservations, rejected });
    }
    for (const g of p.spawns) this.spawns.grant(g.id, g.nodes);
    for (const s of p.starts) this.jobs.start(this.state.jobs.get(s.jobId)!, s.nodes, s.reason, now);
    for (const r of p.resizes) {
      try {
        this.elastic().resize(r.jobId, r.to, `scheduler, ${r.rule}: ${r.reason}`, now, r.limit, r.added);
      } catch (e) {
        const why = e instanceof ApiError ? e.message : (e as Error).message;
        this.note(r.jobId, `wanted ${r.rule} ${r.from} -> ${r.to} nodes but could not: ${why}`, now);
      }
    }
    for (const x of rejected) this.note(x.jobId, `plan item rejected: ${x.reason}`, now);
    const byJob = new Map<number, string[]>();
    for (const n of plan.notes) byJob.set(n.jobId, [...(byJob.get(n.jobId) ?? []), n.text]);
    for (const [jobId, texts] of byJob) this.note(jobId, texts.join("; "), now);
    for (const [id, why] of plan.waiting) {
      const job = this.state.jobs.get(id);
      if (job && job.row.state === "PENDING" && job.waitReason !== why) {
        job.waitReason = why;
        this.jobs.notifyLaunchers(job);
      }
    }
    for (const id of this.lastNote.keys()) if (!this.state.jobs.has(id)) this.lastNote.delete(id);
  }

  /** A note becomes an event when it says something new: the same words with new numbers do not. */
  private note(jobId: number, text: string, now: number): void {
    const gist = text.replace(/\d+(\.\d+)?/g, "#");
    if (this.lastNote.get(jobId) === gist || !this.state.jobs.has(jobId)) return;
    this.lastNote.set(jobId, gist);
    this.store.addEvent(jobId, now, "scheduler", text);
    log.debug(`job ${jobId}: ${text}`);
  }
}

function jobState(job: JobRuntime): PlanJobState {
  const r = job.row;
  const e = job.elastic;
  const state = r.state === "PENDING" ? (job.blocked ? `held back (${job.blocked.reason})` : "pending") : r.state.toLowerCase();
  return {
    state,
    nodes: job.nodes,
    minNodes: r.minNodes,
    maxNodes: r.maxNodes,
    ...(r.sizes ? { sizes: r.sizes } : {}),
    resizable: r.elastic && e?.launcher !== undefined && e.tasks !== undefined && e.stepId !== undefined,
    ...(r.exclude ? { exclude: r.exclude } : {}),
    ...(r.nodelist ? { nodelist: r.nodelist } : {}),
  };
}
