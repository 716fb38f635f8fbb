/**
 * The controller's plan applier (sched/README.md, "One plan"; Nomad's `nomad/plan_apply.go` is
 * the model): every item of a plan is re-checked against the cluster as it is now (`checkPlan`),
 * the plan — its reservations, and every item with its status: accepted, or rejected and why — is
 * committed to SQLite in one transaction together with its starts (`Jobs.startAll`: one
 * transaction a pass, not one a job), then the other accepted items are carried out: spawn grants
 * (the waiting request takes its nodes), resizes (`Elastic.resize` with the plan's added nodes and
 * limit ratio). Each item is marked `done` in the transaction of
 * its own state change (the job's start, the adaptation, the spawned step), so a crash between the
 * plan's commit and an item leaves the item `accepted`, never `done`; the next controller marks such
 * items `abandoned` when it starts (`reconcile`) and plans again from the stored state. An item
 * whose carrying out is refused is `failed` with the reason. A rejected item, a refused one, and
 * the plan's notes become events of their jobs when their words change. This is the only place
 * the scheduler's decisions act.
 */
import { mark } from "../../util/trace.ts";
import { conflict } from "../../domain/refusal.ts";
import { checkPlan, requestedResize, type Plan, type PlanJobState, type PlanResize, type PlanStart, type PlanState, type SpawnGrant } from "../../sched/plan.ts";
import type { JobStore } from "../../store/jobs.ts";
import type { NewPlanItem, PlanStore } from "../../store/plans.ts";
import { logger } from "../../util/log.ts";
import type { Elastic } from "./elastic.ts";
import type { Jobs } from "./jobs.ts";
import type { Snapshots } from "./snapshot.ts";
import type { SpawnQueue } from "./spawns.ts";
import { hostOf, type ClusterState, type JobRuntime } from "./state.ts";
import { takesNewWork } from "../../domain/host-state.ts";

const log = logger("controller");

export class PlanApplier {
  private readonly lastNote = new Map<number, string>();
  /** The last declined move recorded for each job (its words without the numbers). */
  private readonly lastDeclined = new Map<number, string>();

  constructor(
    private readonly state: ClusterState,
    private readonly store: JobStore,
    private readonly plans: PlanStore,
    private readonly jobs: Jobs,
    private readonly elastic: () => Elastic,
    private readonly spawns: SpawnQueue,
    private readonly snapshots: Snapshots,
  ) {}

  /**
   * A user's resize (POST /v1/jobs/:id/resize): planned by the pure planner against the cluster as
   * it is now (sched/plan.ts requestedResize: the same node choice and remap as a pass's), re-checked
   * as a pass's items are, recorded as a plan of one item and carried out at once. `by` says who
   * asked (in its reason); with `keepLimit` it does not raise the job's time limit. What refuses it
   * is thrown to the caller.
   */
  resizeNow(jobId: number, to: number, opts: { by?: string; keepLimit?: boolean } = {}, now = Date.now()): { adaptationId: number } {
    mark("ctl.decide", jobId);
    this.elastic().checkResize(jobId, to);
    const snap = this.snapshots.take(now, false, false);
    mark("ctl.snapshot");
    const planned = requestedResize(snap, jobId, to, `requested by ${opts.by ?? "user"}`, opts.keepLimit);
    mark("ctl.planned");
    if (typeof planned === "string") throw conflict("no_idle_nodes", planned);
    const plan: Plan = { now, policy: this.snapshots.config.policy, spawns: [], starts: [], resizes: [planned], reservations: [], notes: [], waiting: [] };
    const refused = checkPlan(plan, this.current(now)).rejected[0];
    if (refused) throw conflict("no_idle_nodes", refused.reason);
    mark("ctl.checked");
    this.elastic().announceAdded(planned);
    const [id] = this.store.tx(() => this.plans.insert({ time: now, policy: this.snapshots.config.policy, reservations: [] }, [resizeItem(planned, "accepted")]).itemIds);
    mark("ctl.plan-recorded");
    try {
      return this.elastic().resize(planned, planned.reason, now, () => this.plans.settle(id!, "done"));
    } catch (e) {
      this.store.tx(() => this.plans.settle(id!, "failed", (e as Error).message));
      throw e;
    }
  }

  /** At start: items a stopped controller committed but never carried out are `abandoned`. */
  reconcile(): void {
    const n = this.store.tx(() => this.plans.abandonUnsettled("the controller stopped before carrying it out; later plans start from the stored state"));
    if (n > 0) log.warn(`${n} plan item${n === 1 ? " was" : "s were"} committed but not carried out before the controller stopped: marked abandoned`);
  }

  /** The cluster as `checkPlan` sees it at `now`. */
  current(now: number): PlanState {
    return {
      node: (name) => {
        const n = this.state.nodes.get(name);
        return n && { up: this.state.isSchedulable(n, now), takesWork: takesNewWork(hostOf(n)), resources: this.state.resources(n), shares: n.shares };
      },
      job: (id) => {
        const job = this.state.jobs.get(id);
        return job && jobState(job);
      },
    };
  }

  apply(plan: Plan, now = Date.now()): void {
    const { accepted: p, rejected } = checkPlan(plan, this.current(now));
    for (const r of p.resizes) this.elastic().announceAdded(r);
    const items: NewPlanItem[] = [
      ...p.spawns.map((g) => spawnItem(g, "accepted")),
      ...p.starts.map((st) => startItem(st, "accepted")),
      ...p.resizes.map((r) => resizeItem(r, "accepted")),
      ...rejected.map((x) => ({ ...(x.kind === "spawn" ? spawnItem(x.item, "rejected") : x.kind === "start" ? startItem(x.item, "rejected") : resizeItem(x.item, "rejected")), outcome: x.reason })),
      ...this.newlyDeclined(plan),
    ];
    // The plan and its starts are one transaction (a start's item is done or failed there); its
    // spawn grants and resizes follow, each in its own.
    let ids: number[] = [];
    // A start without shares (whole-node mode) takes its nodes whole.
    const starts = p.starts.map((st) => ({ job: this.state.jobs.get(st.jobId)!, placed: { shares: st.shares ?? st.nodes.map((n) => this.state.wholeShare(n)), tasks: st.tasks }, reason: st.reason }));
    if (items.length > 0)
      this.jobs.startAll(
        starts,
        (started) => {
          // A start's item is written settled: inserted accepted and settled in the same
          // transaction, its row and the index of accepted items were written twice for nothing.
          const settled = items.map((item, k): NewPlanItem => {
            const job = starts[k - p.spawns.length]?.job;
            if (!job) return item;
            return started.has(job) ? { ...item, status: "done" } : { ...item, status: "failed", outcome: job.row.reason ?? `the job is ${job.row.state}` };
          });
          ids = this.plans.insert({ time: now, policy: plan.policy, reservations: p.reservations }, settled).itemIds;
        },
        now,
      );
    let k = 0;
    for (const g of p.spawns) {
      const id = ids[k++]!;
      this.store.tx(() => {
        const taken = this.spawns.grant(g.id, g.nodes) && g.nodes.every((n) => this.state.nodes.get(n)?.shares.has(g.jobId));
        this.plans.settle(id, taken ? "done" : "failed", taken ? null : "the request was gone or could not take the nodes");
      });
    }
    k += p.starts.length;
    for (const r of p.resizes) {
      const id = ids[k++]!;
      try {
        const swap = r.rule === "move" && r.to === r.from;
        this.elastic().resize(r, `scheduler, ${r.rule}: ${r.reason}`, now, () => this.plans.settle(id, "done"), r.then ? (ok) => this.moveBack(r, now, ok) : swap ? (ok) => ok && this.moved(r.jobId, r.removed, r.added, r.to, now) : undefined);
      } catch (e) {
        const why = (e as Error).message;
        this.store.tx(() => this.plans.settle(id, "failed", why));
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
    for (const id of this.lastDeclined.keys()) if (!this.state.jobs.has(id)) this.lastDeclined.delete(id);
  }

  /**
   * The moves the plan weighed and did not make, as `declined` items (and job events) when their
   * words change: every decision is in `ebb plans`, without a row per pass. A job that moves, or
   * leaves no loaded node, is forgotten.
   */
  private newlyDeclined(plan: Plan): NewPlanItem[] {
    const now = new Map((plan.declined ?? []).map((d) => [d.jobId, d]));
    for (const id of this.lastDeclined.keys()) if (!now.has(id)) this.lastDeclined.delete(id);
    const items: NewPlanItem[] = [];
    for (const d of now.values()) {
      const gist = d.reason.replace(/\d+(\.\d+)?/g, "#");
      if (this.lastDeclined.get(d.jobId) === gist || !this.state.jobs.has(d.jobId)) continue;
      this.lastDeclined.set(d.jobId, gist);
      items.push({ jobId: d.jobId, kind: "resize", status: "declined", reason: d.reason, detail: { from: d.nodes, to: d.nodes, rule: "move", added: [], removed: d.stays } });
      this.note(d.jobId, d.reason, plan.now);
    }
    return items;
  }

  /**
   * A move's shrink ended (sched/moves.ts): committed, its grow back onto the destinations is
   * re-checked against the cluster as it is now and carried out as a plan of one item; refused,
   * the job stays at the smaller size until the scheduler grows it. When the grow commits, the
   * move's cost (its request to that commit) is the event `moved`.
   */
  private moveBack(first: PlanResize, requestedAt: number, ok: boolean): void {
    const then = first.then!;
    const now = Date.now();
    if (!ok) {
      this.note(then.jobId, `move off ${first.removed.join(",")}: its shrink failed; the job stays where it is`, now);
      return;
    }
    const plan: Plan = { now, policy: this.snapshots.config.policy, spawns: [], starts: [], resizes: [then], reservations: [], notes: [], waiting: [] };
    const refused = checkPlan(plan, this.current(now)).rejected[0];
    if (!refused) this.elastic().announceAdded(then);
    const [id] = this.store.tx(() => this.plans.insert({ time: now, policy: plan.policy, reservations: [] }, [refused ? { ...resizeItem(then, "rejected"), outcome: refused.reason } : resizeItem(then, "accepted")]).itemIds);
    if (refused) {
      this.note(then.jobId, `move: the grow back was refused (${refused.reason}); the job stays at ${then.from} nodes until the scheduler grows it`, now);
      return;
    }
    const landed = (done: boolean) => done && this.moved(then.jobId, first.removed.filter((n) => !then.added.includes(n)), then.added.filter((n) => !first.removed.includes(n)), then.to, requestedAt);
    try {
      this.elastic().resize(then, `scheduler, move: ${then.reason}`, now, () => this.plans.settle(id!, "done"), landed);
    } catch (e) {
      const why = (e as Error).message;
      this.store.tx(() => this.plans.settle(id!, "failed", why));
      this.note(then.jobId, `move: the grow back could not start: ${why}`, now);
    }
  }

  /** A move committed: the job's `moved` event, with its cost from the request to the commit. */
  private moved(jobId: number, from: readonly string[], to: readonly string[], size: number, requestedAt: number): void {
    if (!this.state.jobs.has(jobId)) return;
    const at = Date.now();
    this.store.addEvent(jobId, at, "moved", `moved off ${from.join(",")} onto ${to.join(",")} at ${size} nodes in ${at - requestedAt} ms (request to commit)`, { from, to, ms: at - requestedAt });
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
  const held = job.blocked ?? job.limited;
  const state = r.state === "PENDING" ? (held ? `held back (${held.reason})` : "pending") : r.state.toLowerCase();
  return {
    state,
    nodes: job.nodes,
    minNodes: r.minNodes,
    maxNodes: r.maxNodes,
    ...(r.sizes ? { sizes: r.sizes } : {}),
    resizable: r.elastic && e?.launcher !== undefined && e.tasks !== undefined && e.stepId !== undefined,
    ...(r.exclude ? { exclude: r.exclude } : {}),
    ...(r.nodelist ? { nodelist: r.nodelist } : {}),
    ...(r.resources ? { resources: r.resources } : {}),
  };
}

type Status = "accepted" | "rejected";

function spawnItem(g: SpawnGrant, status: Status): NewPlanItem {
  return { jobId: g.jobId, kind: "spawn", status, reason: g.reason, detail: { request: g.id, tasks: g.tasks, nodes: g.nodes } };
}

function startItem(st: PlanStart, status: Status): NewPlanItem {
  return { jobId: st.jobId, kind: "start", status, reason: st.reason, detail: { nodes: st.nodes } };
}

function resizeItem(r: PlanResize, status: Status): NewPlanItem {
  // A move's grow back is its own item when it is carried out; here only where it goes.
  const then = r.then && { from: r.then.from, to: r.then.to, added: r.then.added };
  return { jobId: r.jobId, kind: "resize", status, reason: r.reason, detail: { from: r.from, to: r.to, rule: r.rule, added: r.added, removed: r.removed, remap: r.remap, limit: r.limit, ...(then ? { then } : {}) } };
}
