/**
 * Resizing running elastic jobs (step 1 and step 6 of the adaptation protocol) and their timing
 * samples. A resize is refused unless the job is elastic, RUNNING, has its elastic step's launcher
 * attached, and the new size is in its range and (to grow) idle nodes exist. Then: SQLite first
 * (ADAPTING, the adaptation record, the added nodes), then the realloc order to the launcher. The
 * launcher's report commits it: leaving nodes are freed, the job is RUNNING again. The protocol:
 * docs/adaptation.md.
 */
import { mark } from "../../util/trace.ts";
import { isValidSize } from "../../sched/sizes.ts";
import { badRequest, conflict } from "../../domain/refusal.ts";
import { CRED_LIFETIME_MS, signCredential, verifyCredential } from "../../proto/credential.ts";
import type { PlanResize } from "../../sched/plan.ts";
import type { AdoptCredential, NodeRef, StepCredential } from "../../proto/common.ts";
import type { ControllerToLauncher } from "../../proto/launcher.ts";
import { KEPT_LIMIT, limitRatio, rescaleLimit } from "../../sched/limits.ts";
import { measuredProfile, type Configuration, type MeasuredPoint } from "../../sched/profile.ts";
import { formatDuration } from "../../util/time.ts";
import type { ElasticStore, PerfRow } from "../../store/elastic.ts";
import type { JobStore } from "../../store/jobs.ts";
import { StoreUnavailable } from "../../store/db.ts";
import { compressHostlist } from "../../util/hostlist.ts";
import { logger } from "../../util/log.ts";
import { JobCfgs, type CfgPersistence } from "./cfg.ts";
import type { Jobs } from "./jobs.ts";
import type { Ledger } from "./ledger.ts";
import type { ClusterState, JobRuntime, LauncherSession } from "./state.ts";

type Adapting = NonNullable<NonNullable<JobRuntime["elastic"]>["adapting"]>;

const log = logger("controller");

/** How long an adaptation may take unless the controller is told otherwise (--adapt-timeout). */
export const DEFAULT_ADAPT_TIMEOUT_MS = 600_000;
/**
 * How long after an adaptation's deadline the controller waits for its launcher's report before it
 * fails it itself, unless told otherwise (--adapt-report-grace): the launcher fails it at the
 * deadline and says so (docs/adaptation.md §9).
 */
export const ADAPT_REPORT_GRACE_MS = 10_000;

/** An adaptation that ended: its direction, outcome, and the times of its protocol steps (ms since the epoch). */
export interface AdaptationEnd {
  from: number;
  to: number;
  ok: boolean;
  requestedAt: number;
  times: Record<string, number>;
}

export interface ElasticEffects {
  schedule(): void;
  /** An adaptation committed or failed (metrics count it). */
  adapted?(a: AdaptationEnd): void;
  /** Nodes just added to a job: their agents hear of it before the joining ranks' launch reaches them. */
  allocated?(nodes: readonly string[]): void;
}

export interface Mtct {
  /** Communication over computation time of the job's ranks in the latest sampling window. */
  mtct: number | null;
  /** Per-window values, oldest first (what the elastic scheduler reads). */
  samples: Array<{ time: number; mtct: number; iterations: number }>;
}


export class Elastic {
  /** Jobs' CFGs (every monitored job, elastic or not), kept in SQLite too. */
  readonly cfgs: JobCfgs;

  constructor(
    private readonly store: JobStore,
    private readonly estore: ElasticStore,
    private readonly state: ClusterState,
    private readonly jobs: Jobs,
    private readonly ledger: Ledger,
    private readonly clusterKey: string,
    /** How long an adaptation may take: the launcher fails one that has not committed by then. */
    private readonly adaptTimeoutMs: number,
    private readonly effects: ElasticEffects,
    cfgStore?: CfgPersistence,
    private readonly reportGraceMs = ADAPT_REPORT_GRACE_MS,
  ) {
    this.cfgs = new JobCfgs(cfgStore);
  }

  /** After a restart: adaptations left open are continued by their launchers, which re-attach. */
  restore(): void {
    this.cfgs.restore();
    for (const a of this.estore.openAdaptations()) {
      const job = this.state.jobs.get(a.jobId);
      if (!job) {
        try {
          this.estore.endAdaptation(a.id, { state: "FAILED", endedAt: Date.now(), message: "the job ended", times: a.times });
        } catch (e) {
          // The store takes no writes (a full disk): the next start ends it.
          if (!(e instanceof StoreUnavailable)) throw e;
        }
        continue;
      }
      const e = this.jobs.elasticOf(job);
      const limit = a.limitRatio === null ? undefined : { ratio: a.limitRatio, source: a.limitSource ?? "" };
      // A fault adaptation dropped its failed nodes from the job when it began.
      const fault = a.removed.some((n) => !job.nodes.includes(n));
      e.adapting = { id: a.id, from: a.fromNodes, to: a.toNodes, added: a.added, removed: a.removed, requestedAt: a.requestedAt, times: a.times, fault, limit, restartStep: a.restartStep ?? undefined };
    }
  }

  /**
   * The launcher running the job's elastic step takes its resize orders. `known`: the last
   * adaptation whose order it received, said on every (re)attach.
   */
  attach(jobId: number, stepId: number, session: LauncherSession, tasks?: number[], cred?: StepCredential, known?: number): void {
    const job = this.state.jobs.get(jobId);
    if (!job?.row.elastic) return;
    const e = this.jobs.elasticOf(job);
    // A new connection: what was sent on the old one may never have arrived. (A re-attach on the
    // same connection can cross an order on its way, so it proves nothing.)
    const reconnected = e.launcher !== session;
    e.launcher = session;
    e.stepId ??= stepId;
    // After a restart, what joining ranks' credentials must cover comes from the elastic step's own
    // credential: this controller's key signed it (its age does not matter here), for this step.
    if (e.covers === undefined && cred && cred.jobId === jobId && cred.stepId === e.stepId && verifyCredential(this.clusterKey, cred, Date.now(), { signatureOnly: true }) === undefined)
      e.covers = { argv: cred.argv, env: cred.env, jobEnv: cred.jobEnv, cwd: cred.cwd, output: cred.output };
    // After a controller restart only the launcher knows the world's layout. A grow under way
    // holds its added nodes already; the layout is the world before it.
    if (e.tasks === undefined && tasks !== undefined && e.stepId === stepId) {
      const before = job.nodes.filter((n) => !e.adapting?.added.includes(n)).length;
      if (tasks.length === before) e.tasks = tasks;
      else log.warn("launcher's layout does not match the job's nodes; resizes stay refused", { jobId, nodes: before, layout: tasks.length });
    }
    if (reconnected && known !== undefined && e.adapting && known < e.adapting.id) this.orderLost(job, e.adapting);
  }

  /**
   * An open adaptation whose order never reached the launcher (a connection, or the controller
   * before a restart, lost it): no rank has acted on it. A resize fails now, not at its adapt
   * timeout, and the job goes on at its size; a fault's survivors get their order again, since
   * they cannot go on without it.
   */
  private orderLost(job: JobRuntime, a: Adapting): void {
    const r = job.row;
    const e = job.elastic!;
    if (a.fault) {
      log.warn(`job ${r.id}: fault adaptation ${a.id}'s order did not reach the re-attached launcher; sent again`, { job: r.id });
      const reason = a.removed.length > 0 ? `${compressHostlist(a.removed)} failed` : "a node a resize added failed";
      e.launcher!.send(this.faultOrder(r.id, a, job.nodes, reason));
      return;
    }
    const message = `its order never reached the job's launcher (the connection to it was lost first); the job goes on with its ${a.from} node${a.from === 1 ? "" : "s"}`;
    log.warn(`job ${r.id}: adaptation ${a.id} failed: ${message}`, { job: r.id });
    this.done(r.id, a.id, false, {}, message);
  }

  private readonly ref = (name: string): NodeRef => ({ name, addr: this.state.nodes.get(name)?.row.addr ?? "" });

  /** A fault adaptation's order: the survivors `nodes` go on without `a.removed`, by its deadline. */
  private faultOrder(jobId: number, a: Adapting, nodes: readonly string[], reason: string): ControllerToLauncher {
    return { t: "realloc", jobId, adaptId: a.id, nodes: nodes.map(this.ref), added: [], removed: a.removed, deadline: a.requestedAt + this.adaptTimeoutMs, fault: { reason } };
  }

  /**
   * Refuses (throws) a resize of job `jobId` to `nodes` that cannot be made now, whatever nodes are
   * idle. `swap`: a move at the same size (its last nodes for others, docs/adaptation.md §7.10).
   */
  checkResize(jobId: number, nodes: number, swap = false): void {
    const job = this.jobs.activeJob(jobId);
    const r = job.row;
    if (!r.elastic) throw conflict("not_elastic", `job ${jobId} is not elastic; submit elastic jobs with --elastic --min-nodes A --max-nodes B`);
    const e = this.jobs.elasticOf(job);
    if (r.state === "ADAPTING" && e.adapting)
      throw conflict("job_adapting", `job ${jobId} is already adapting (${e.adapting.from} -> ${e.adapting.to} nodes); wait until it commits`);
    if (r.state !== "RUNNING") throw conflict("job_not_running", `job ${jobId} is ${r.state}; only a RUNNING job can be resized`);
    if (nodes < r.minNodes || nodes > r.maxNodes) throw badRequest(`nodes ${nodes} is outside job ${jobId}'s range [${r.minNodes}, ${r.maxNodes}]`, "nodes");
    if (!isValidSize(r.sizes ?? undefined, nodes)) throw badRequest(`nodes ${nodes} is not one of job ${jobId}'s sizes (${r.sizes!.join(",")})`, "nodes");
    if (nodes === job.nodes.length && !swap) throw conflict("no_change", `job ${jobId} already has ${job.nodes.length} nodes`);
    if (!e.launcher || !e.tasks || e.stepId === undefined || !e.covers)
      throw conflict("no_elastic_step", `job ${jobId} has no elastic step to resize yet: its ranks start with ebb run and call initAdapt()`);
  }

  /**
   * Before a planned resize that adds nodes is recorded: its launcher hears their addresses
   * (`links`, docs/adaptation.md §7.1), so that its connections to their agents open while the
   * records are written and the order travels. It carries no credential and changes nothing: a
   * resize refused after it leaves only connections the launcher closes unused. It is written at
   * once: batched with the run's other sends it went out with the order, after the records were
   * written (5-40 ms at load 20), and the launcher opened the connections no earlier than without it.
   */
  announceAdded(p: PlanResize): void {
    if (p.added.length === 0) return;
    const launcher = this.state.jobs.get(p.jobId)?.elastic?.launcher;
    launcher?.send({ t: "links", jobId: p.jobId, nodes: p.added.map(this.ref) });
    launcher?.flush?.();
  }

  /**
   * Step 1: a planned resize (sched/plan.ts: a pass's, or a user's through `requestedResize`) is
   * recorded and ordered. Its nodes are checked against the cluster as it is; its rank remap, made
   * by the plan, goes to the launcher as it is and comes back with the commit. `within` runs inside
   * the transaction that records the adaptation (the plan applier marks its item carried out there);
   * `then` when it ends, committed or not (a move's grow back follows its shrink).
   */
  resize(p: PlanResize, reason: string, now = Date.now(), within?: () => void, then?: (ok: boolean) => void): { adaptationId: number } {
    const { jobId, to: nodes, added, remap: m } = p;
    const swap = nodes === p.from && added.length > 0;
    this.checkResize(jobId, nodes, swap);
    const job = this.jobs.activeJob(jobId);
    const r = job.row;
    const e = this.jobs.elasticOf(job);
    const have = job.nodes.length;
    if (p.from !== have || m.tasks.length !== nodes) throw conflict("plan_stale", `job ${jobId} has ${have} nodes, not the ${p.from} its resize was planned for`);
    // The plan's re-check (checkPlan) has found its added shares free; a grow without shares takes whole nodes.
    const shares = p.shares ?? added.map((n) => this.state.wholeShare(n));
    const removed = p.removed;
    const after = swap ? [...job.nodes.slice(0, have - removed.length), ...added] : nodes > have ? [...job.nodes, ...added] : job.nodes.slice(0, nodes);
    const lim = p.limit;
    const joinStep = m.joining > 0 ? r.nextStep : undefined;
    const id = this.ledger.commit((tx) => {
      tx.state(job, "ADAPTING");
      const aid = this.estore.insertAdaptation({
        jobId,
        stepId: e.stepId ?? null,
        fromNodes: have,
        toNodes: nodes,
        fromRanks: m.staying + m.leaving,
        toRanks: m.staying + m.joining,
        added,
        removed,
        state: "ADAPTING",
        reason,
        requestedAt: now,
        times: { requested: now },
        limitRatio: lim.ratio,
        limitSource: lim.source,
      });
      if (joinStep !== undefined) {
        tx.allocated(job, shares, now);
        tx.steps(job, joinStep + 1);
        // The joining ranks run the elastic step's command (an `ebb run` job's row has none).
        this.store.insertStep(jobId, joinStep, (e.stepId !== undefined ? this.store.stepArgv(jobId, e.stepId) : undefined) ?? r.argv ?? [], m.joining, added, now);
      }
      this.store.addEvent(jobId, now, "adapting", `adapting from ${have} to ${nodes} nodes (${reason})`, { adaptationId: aid, from: have, to: nodes, added, removed });
      within?.();
      return aid;
    });
    mark("ctl.adaptation-recorded");
    e.adapting = { id, from: have, to: nodes, added, removed, requestedAt: now, times: { requested: now }, limit: { ratio: lim.ratio, source: lim.source }, remap: m, joinStep, after: then };
    if (joinStep !== undefined) this.effects.allocated?.(added);
    mark("ctl.shares-sent");
    e.launcher!.send({
      t: "realloc",
      jobId,
      adaptId: id,
      nodes: after.map(this.ref),
      added: added.map(this.ref),
      removed,
      remap: m,
      deadline: now + this.adaptTimeoutMs,
      join:
        joinStep === undefined
          ? undefined
          : { stepId: joinStep, tasks: m.tasks.slice(m.tasks.length - added.length), cred: signCredential(this.clusterKey, { jobId, stepId: joinStep, nodes: added, expires: now + CRED_LIFETIME_MS, ...e.covers! }) },
    });
    mark("ctl.realloc-sent");
    this.jobs.notifyLaunchers(job);
    log.info(`job ${jobId} adapting ${have} -> ${nodes} nodes`, { job: jobId, reason });
    return { adaptationId: id };
  }

  /**
   * A node of a running elastic job failed (its agent is gone, it went DOWN, or the launcher lost
   * it). If the job's elastic step can go on without it — the job is RUNNING (not adapting), its
   * launcher is attached, the node is not the one running its batch script, and the survivors are
   * within its range — the node leaves the job at once and the launcher gets a fault realloc: the
   * survivors open a fault window (dissertation §6.1.2) and go on. Returns false when the job
   * cannot go on (the caller ends it NODE_FAIL); true also when the node is no longer the job's.
   */
  fault(jobId: number, node: string, reason: string, now = Date.now(), fromLauncher = false): boolean {
    const job = this.state.jobs.get(jobId);
    if (!job) return true;
    if (!job.nodes.includes(node)) return true;
    const r = job.row;
    const e = job.elastic;
    // Another node lost while a fault adaptation is open, reported by the launcher or gone DOWN:
    // the fault adaptation under way loses it too.
    if (r.elastic && e?.adapting?.fault && r.state === "ADAPTING" && e.tasks) return this.extendFault(job, node, reason, now, !fromLauncher);
    // A resize under way (grow or shrink, not committed) and a node failed: the resize is aborted (a
    // grow's added nodes go back), and the fault adaptation below starts from the world before it.
    // The launcher aborts its side when it loses the node. A node the resize added is not part of
    // that world: the fault adaptation then removes nothing, and its window voids the resize's.
    if (r.elastic && e?.adapting && !e.adapting.fault && r.state === "ADAPTING" && e.launcher && e.tasks) {
      // Every rank committed: the resize stands, the node is a fault of the world it made (§7.8).
      // Once per node (it is the job's): a launcher repeating a fault grows nothing.
      if (e.adapting.committed) {
        const lost = (e.adapting.lostAfterCommit ??= []);
        if (lost.some((l) => l.node === node)) return true;
        lost.push({ node, reason });
        const id = e.adapting.id;
        this.ledger.commit(() => this.store.addEvent(jobId, now, "lost-after-commit", `node ${node} failed (${reason}) after every rank of adaptation ${id} committed: a fault of the world it made, adapted past once it ends`, { adaptationId: id, node }));
        return true;
      }
      const added = e.adapting.added.includes(node);
      if (e.tasks.length !== job.nodes.length - e.adapting.added.length) return false;
      if (!added && job.nodes.length - e.adapting.added.length - 1 < r.minNodes) return false;
      this.done(jobId, e.adapting.id, false, {}, `aborted: node ${node} failed (${reason})`, now);
    }
    if (!r.elastic || !e || r.state !== "RUNNING" || e.adapting || !e.launcher || !e.tasks || e.stepId === undefined) return false;
    if (this.jobs.driverNode(job) === node) return false; // its batch script or command's step root ran there
    if (e.tasks.length !== job.nodes.length) return false;
    // Empty when the node was one a resize added (it went back with the resize above).
    const gone = job.nodes.includes(node) ? [node] : [];
    const survivors = job.nodes.filter((n) => n !== node);
    if (survivors.length < r.minNodes) return false;
    const have = job.nodes.length;
    const tasks = e.tasks.filter((_, i) => job.nodes[i] !== node);
    const lostRanks = e.tasks.reduce((a, b) => a + b, 0) - tasks.reduce((a, b) => a + b, 0);
    const why = `node ${node} failed: ${reason}`;
    const id = this.ledger.commit((tx) => {
      tx.state(job, "ADAPTING");
      const aid = this.estore.insertAdaptation({
        jobId,
        stepId: e.stepId ?? null,
        fromNodes: have,
        toNodes: survivors.length,
        fromRanks: e.tasks!.reduce((a, b) => a + b, 0),
        toRanks: tasks.reduce((a, b) => a + b, 0),
        added: [],
        removed: gone,
        state: "ADAPTING",
        reason: why,
        requestedAt: now,
        times: { requested: now },
      });
      if (gone.length > 0) tx.released(job, gone, now);
      this.store.addEvent(jobId, now, "fault", `${why}; ${lostRanks} rank${lostRanks === 1 ? "" : "s"} lost, the survivors go on with ${survivors.length} node${survivors.length === 1 ? "" : "s"}`, { adaptationId: aid, node, lostRanks });
      return aid;
    });
    e.adapting = { id, from: have, to: survivors.length, added: [], removed: gone, requestedAt: now, times: { requested: now }, fault: true };
    e.tasks = tasks;
    if (gone.length > 0) this.jobs.killOn(job, gone, why);
    e.launcher.send(this.faultOrder(jobId, e.adapting, survivors, why));
    this.jobs.notifyLaunchers(job);
    log.warn(`job ${jobId} lost node ${node}; fault adaptation ${have} -> ${survivors.length} nodes`, { job: jobId, node });
    return true;
  }

  /**
   * One more node of an open fault adaptation (two nodes lost at once, or one more while the window
   * is open): it leaves the job as the first did; the launcher's window names both nodes' ranks.
   * `tell`: the launcher did not report it (the node went DOWN): the fault realloc is sent again,
   * naming every node removed so far (docs/adaptation.md §7.6).
   */
  private extendFault(job: JobRuntime, node: string, reason: string, now: number, tell: boolean): boolean {
    const r = job.row;
    const e = job.elastic!;
    const a = e.adapting!;
    if (this.jobs.driverNode(job) === node) return false;
    const index = job.nodes.indexOf(node);
    if (e.tasks!.length !== job.nodes.length) return false;
    const survivors = job.nodes.filter((n) => n !== node);
    if (survivors.length < r.minNodes) return false;
    const tasks = e.tasks!.filter((_, i) => i !== index);
    const lostRanks = e.tasks![index]!;
    const removed = [...a.removed, node];
    const why = `node ${node} failed: ${reason}`;
    this.ledger.commit((tx) => {
      this.estore.extendFault(a.id, { toNodes: survivors.length, toRanks: tasks.reduce((x, y) => x + y, 0), removed });
      tx.released(job, [node], now);
      this.store.addEvent(r.id, now, "fault", `${why}; ${lostRanks} more rank${lostRanks === 1 ? "" : "s"} lost in fault adaptation ${a.id}, the survivors go on with ${survivors.length} node${survivors.length === 1 ? "" : "s"}`, { adaptationId: a.id, node, lostRanks });
    });
    a.removed = removed;
    a.to = survivors.length;
    e.tasks = tasks;
    this.jobs.killOn(job, [node], why);
    if (tell && e.launcher) e.launcher.send(this.faultOrder(r.id, a, survivors, why));
    this.jobs.notifyLaunchers(job);
    log.warn(`job ${r.id} lost node ${node} too; fault adaptation ${a.id} now ${a.from} -> ${survivors.length} nodes`, { job: r.id, node });
    return true;
  }

  /**
   * A credential that lets the launcher re-attach `nodes` of step `stepId` (the children of a lost
   * inner node of its launch tree) as its own children: only for nodes the elastic job still holds.
   */
  adoptCredential(jobId: number, stepId: number, nodes: string[], now = Date.now()): AdoptCredential {
    const job = this.jobs.activeJob(jobId);
    if (!job.row.elastic) throw conflict("not_elastic", `job ${jobId} is not elastic: only an elastic step's nodes are re-attached after a fault`);
    if (stepId >= job.row.nextStep) throw badRequest(`job ${jobId} has no step ${stepId}`, "stepId");
    const gone = nodes.find((n) => !job.nodes.includes(n));
    if (gone !== undefined) throw conflict("not_allocated", `node ${gone} is not allocated to job ${jobId}`);
    return signCredential(this.clusterKey, { jobId, stepId, nodes, expires: now + CRED_LIFETIME_MS, use: "adopt" });
  }

  /**
   * A checkpoint-restart adaptation's new step (docs/adaptation.md §12): the old world's ranks wrote
   * their parts and ended; the world restarts on the adaptation's new nodes (a fault's survivors)
   * with its new layout. A grow's joining step is that step, over every node; otherwise a new one.
   * Its credential covers what the elastic step's covered. The step is the elastic step once the
   * adaptation commits.
   */
  restartGrant(jobId: number, adaptId: number, now = Date.now()): { stepId: number; nodes: NodeRef[]; tasks: number[]; cred: StepCredential } {
    const job = this.jobs.activeJob(jobId);
    const e = this.jobs.elasticOf(job);
    const a = e.adapting;
    if (!job.row.elastic || !a || a.id !== adaptId) throw conflict("not_adapting", `job ${jobId} has no open adaptation ${adaptId} to restart in`);
    if (!e.covers) throw conflict("no_elastic_step", `job ${jobId}: its elastic step's credential is not known yet (the launcher re-attaches)`);
    const nodes = job.nodes.filter((n) => !a.removed.includes(n));
    const tasks = a.fault ? e.tasks : a.remap?.tasks;
    if (!tasks || tasks.length !== nodes.length) throw conflict("layout_unknown", `job ${jobId}: the new world's layout is not known (${tasks?.length ?? 0} entries for ${nodes.length} nodes)`);
    const total = tasks.reduce((x, y) => x + y, 0);
    const stepId = a.restartStep ?? a.joinStep ?? job.row.nextStep;
    if (a.restartStep === undefined) {
      const argv = (e.stepId !== undefined ? this.store.stepArgv(jobId, e.stepId) : undefined) ?? job.row.argv ?? [];
      this.ledger.commit((tx) => {
        if (stepId === a.joinStep) this.store.setStepLayout(jobId, stepId, total, nodes);
        else {
          tx.steps(job, stepId + 1);
          this.store.insertStep(jobId, stepId, argv, total, nodes, now);
        }
        this.estore.setRestartStep(a.id, stepId);
        this.store.addEvent(jobId, now, "restarting", `adaptation ${a.id}: the checkpoint is written; restarting ${total} ranks on ${compressHostlist(nodes)} as step ${stepId}`, { adaptationId: a.id, stepId });
      });
      a.restartStep = stepId;
    }
    return { stepId, nodes: nodes.map(this.ref), tasks, cred: signCredential(this.clusterKey, { jobId, stepId, nodes, expires: now + CRED_LIFETIME_MS, ...e.covers }) };
  }

  /**
   * Step 6: the launcher reports the adaptation's end; with a commit, the world's ranks per node
   * (`tasks`, the plan's remap it was sent: kept here too, for a launcher that does not say).
   */
  done(jobId: number, adaptId: number, ok: boolean, times: Record<string, number>, message: string | undefined, now = Date.now(), tasks?: number[]): void {
    const job = this.state.jobs.get(jobId);
    const a = job?.elastic?.adapting;
    if (!job || !a || a.id !== adaptId) return;
    const e = job.elastic!;
    const all: Record<string, number> = { ...a.times, ...times, ended: now };
    // The survivors of a fault could not go on: the job ends as a node failure would have ended it.
    if (a.fault && !ok) {
      this.jobs.finish(job, "NODE_FAIL", { reason: `${a.removed.length > 0 ? a.removed.join(",") : "a node a resize added"} failed and the survivors could not adapt: ${message ?? "unknown reason"}` }, now);
      return;
    }
    // A commit lets the nodes a shrink removed go; a failure, the nodes a grow added. (A fault's
    // failed nodes left the job when it began.)
    const dropped = (ok ? a.removed : a.added).filter((n) => job.nodes.includes(n));
    const took = (all.committed ?? now) - (all.realloc ?? a.requestedAt);
    const elasticStep = ok && a.restartStep !== undefined ? a.restartStep : e.stepId;
    this.ledger.commit((tx) => {
      this.estore.endAdaptation(a.id, ok ? { state: "COMMITTED", endedAt: now, times: all } : { state: "FAILED", endedAt: now, times: all, message: message ?? null });
      if (dropped.length > 0) tx.released(job, dropped, now);
      // The elastic step is the world as committed: its ranks over the nodes the job keeps (a
      // checkpoint-restart world's is the step it restarted in).
      const layout = tasks ?? a.remap?.tasks;
      if (ok && elasticStep !== undefined && layout) this.store.setStepLayout(jobId, elasticStep, layout.reduce((sum, n) => sum + n, 0), job.nodes.filter((n) => !dropped.includes(n)));
      tx.state(job, "RUNNING");
      const limit = ok ? this.rescaleLimit(job, a, now) : undefined;
      if (limit !== undefined && limit !== job.row.timeLimit) tx.limit(job, limit);
      if (ok && a.fault) this.store.addEvent(jobId, now, "resized", `fault adaptation from ${a.from} to ${a.to} nodes committed in ${took} ms`, { adaptationId: a.id, times: all });
      else if (ok) this.store.addEvent(jobId, now, "resized", `resized from ${a.from} to ${a.to} nodes, committed in ${took} ms${dropped.length ? `; released ${compressHostlist(dropped)}` : ""}`, { adaptationId: a.id, times: all });
      else this.store.addEvent(jobId, now, "resize-failed", `resize from ${a.from} to ${a.to} nodes failed: ${message ?? "unknown reason"}`, { adaptationId: a.id });
    });
    this.effects.adapted?.({ from: a.from, to: a.to, ok, requestedAt: a.requestedAt, times: all });
    e.stepId = elasticStep;
    if (ok && a.restartStep !== undefined) this.cfgs.restarted(jobId, a.restartStep);
    if (ok && !a.fault) {
      // Unknown (a launcher that does not say, after a controller restart lost the plan's): resizes wait for its next attach.
      e.tasks = tasks ?? a.remap?.tasks;
      e.adaptCostMs = took;
    }
    this.jobs.killOn(job, dropped, ok ? "released by a shrink" : "a failed grow");
    e.adapting = undefined;
    e.lastAdaptEnd = now;
    e.samplesSince = now;
    this.jobs.notifyLaunchers(job);
    // Nodes lost after the commit, as faults of the world that resulted (the launcher's own report of one finds it gone).
    for (const lost of a.lostAfterCommit ?? []) if (!this.fault(jobId, lost.node, lost.reason, now)) this.jobs.nodeFailed(jobId, lost.node, lost.reason);
    // Before any pass: a move's grow back takes the nodes its shrink just gave back.
    a.after?.(ok);
    this.effects.schedule();
  }

  /**
   * The time limit follows the committed size (sched/limits.ts): what is left of it scaled by the
   * ratio chosen when the resize was asked for, plus the adaptation's duration. In the caller's
   * transaction; returns the new limit (seconds from the job's start).
   */
  private rescaleLimit(job: JobRuntime, a: Adapting, now: number): number {
    const r = job.row;
    const lim = a.limit ?? limitRatio({ nodes: a.from }, a.to);
    const original = this.store.limitChangesOf(r.id)[0]?.fromLimit ?? r.timeLimit;
    const adaptation = (now - a.requestedAt) / 1000;
    const next = rescaleLimit({ startTime: r.startTime ?? now, limit: r.timeLimit, original, at: now, ratio: lim.ratio, grow: a.to > a.from, adaptation, rise: lim.source !== KEPT_LIMIT });
    if (next === r.timeLimit) return next;
    const left = Math.max(0, Math.round(r.timeLimit - (now - (r.startTime ?? now)) / 1000));
    const why = `resized ${a.from} -> ${a.to} nodes: ${left} s left x ${lim.ratio.toFixed(3)} (${lim.source}) + ${adaptation.toFixed(1)} s adaptation${a.to > a.from ? `, not below the ${original} s asked for nor above ${r.timeLimit} s` : ""}`;
    this.store.recordLimitChange(r.id, now, r.timeLimit, next, why);
    this.store.addEvent(r.id, now, "limit", `time limit ${formatDuration(r.timeLimit)} -> ${formatDuration(next)}: ${why}`, { from: r.timeLimit, to: next, ratio: lim.ratio });
    return next;
  }

  /** The launcher of `jobId` says every rank of resize `adaptId` committed (adapt.commit). */
  committed(jobId: number, adaptId: number): void {
    const a = this.state.jobs.get(jobId)?.elastic?.adapting;
    if (a && a.id === adaptId && !a.fault) a.committed = true;
  }

  /**
   * Adaptations whose launcher has not reported their end by their deadline and the grace after it
   * (a launcher that hangs, or is stopped, or never came back after a restart) fail here, as the
   * launcher's failure report would fail them: a resize leaves the job RUNNING at its old size, a
   * fault adaptation ends the job NODE_FAIL. A report that comes after is ignored.
   */
  enforceAdaptTimeouts(now = Date.now()): void {
    for (const job of [...this.state.jobs.values()]) {
      const a = job.elastic?.adapting;
      if (!a || now <= a.requestedAt + this.adaptTimeoutMs + this.reportGraceMs) continue;
      const message = `its launcher did not report its end within ${(this.adaptTimeoutMs + this.reportGraceMs) / 1000} s (ebb controller --adapt-timeout ${this.adaptTimeoutMs / 1000}, and ${this.reportGraceMs / 1000} s for the report)`;
      log.warn(`job ${job.row.id}: adaptation ${a.id} failed: ${message}`, { job: job.row.id });
      this.done(job.row.id, a.id, false, {}, message, now);
    }
  }

  /** The job ended while adapting: the adaptation ends with it. */
  jobEnded(job: JobRuntime, now = Date.now()): void {
    const a = job.elastic?.adapting;
    if (!a) return;
    try {
      this.estore.endAdaptation(a.id, { state: "FAILED", endedAt: now, times: { ...a.times, ended: now }, message: `the job ended (${job.row.state})` });
    } catch (e) {
      // The job's end is committed and is being carried out: the record stays open (the next start ends it).
      if (!(e instanceof StoreUnavailable)) throw e;
    }
    this.effects.adapted?.({ from: a.from, to: a.to, ok: false, requestedAt: a.requestedAt, times: { ...a.times, ended: now } });
  }

  perf(jobId: number, node: string, s: { ranks: number; iterations: number; loopNs: number; commNs: number; stateBytes?: number }, now = Date.now()): void {
    const job = this.state.jobs.get(jobId);
    if (!job?.row.elastic) return;
    if (s.stateBytes !== undefined) {
      const e = this.jobs.elasticOf(job);
      // The first registration comes once the program has started: how long a start takes it.
      e.checkpoint ??= { nodeBytes: new Map(), coldStartMs: Math.max(0, now - (job.row.startTime ?? now)) };
      e.checkpoint.nodeBytes.set(node, s.stateBytes);
    }
    // A registration alone is no timing sample.
    if (s.iterations === 0 && s.loopNs === 0) return;
    this.estore.insertPerf({ jobId, time: now, node, ranks: s.ranks, iterations: s.iterations, loopNs: s.loopNs, commNs: s.commNs });
  }

  /**
   * MTCT per sampling window (communication over computation time, summed over ranks), from
   * `since` (default: the job's last adaptation, as the SPMD-phase model wants): what the
   * scheduler reads, the API's `samples` and `mtct` (the newest, if from the last two windows).
   */
  mtct(jobId: number, sampleInterval: number, since?: number, now = Date.now()): Mtct {
    const windowMs = Math.max(1, sampleInterval * 1000);
    // The current distributed loop's MTCT (CFG monitoring, any job), from its first window on; before
    // it, the probe-to-probe timing (elastic jobs only). Both measure the same loop: a job whose CFG
    // samples begin keeps the windows it had, where switching sources dropped them and the job was
    // taken for one without a model (no candidate for rule 1 until the CFG had enough).
    const from = since ?? this.state.jobs.get(jobId)?.elastic?.samplesSince ?? 0;
    const cfg = this.cfgs.samples(jobId, from);
    const probe = this.state.jobs.get(jobId)?.row.elastic === false ? [] : this.probeSamples(jobId, windowMs, from, cfg[0]?.time);
    const samples = probe.length === 0 ? cfg : [...probe, ...cfg];
    const recent = samples.filter((s) => s.time >= now - 2 * windowMs);
    return { mtct: recent.length > 0 ? recent[recent.length - 1]!.mtct : null, samples };
  }

  /** Probe-to-probe timing per window since `from`, of windows that end before `until`. */
  private probeSamples(jobId: number, windowMs: number, from: number, until = Number.POSITIVE_INFINITY): Mtct["samples"] {
    const buckets = new Map<number, PerfRow[]>();
    // Once the CFG's samples begin, only the rows before them are read (a fixed set), not the whole run's.
    for (const r of this.estore.perfSince(jobId, from, Number.isFinite(until) ? until : undefined)) {
      const b = Math.floor(r.time / windowMs);
      if ((b + 1) * windowMs >= until) break;
      const list = buckets.get(b) ?? [];
      list.push(r);
      buckets.set(b, list);
    }
    return [...buckets.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([b, list]) => {
        const comm = list.reduce((a, r) => a + r.commNs, 0);
        const loop = list.reduce((a, r) => a + r.loopNs, 0);
        const iterations = list.reduce((a, r) => a + r.iterations, 0);
        // A window without a whole iteration (start-up, a long window) has no ratio to give; an
        // all-communication one is capped at 1000.
        return iterations === 0 || loop === 0 ? undefined : { time: (b + 1) * windowMs, mtct: comm / Math.max(loop - comm, loop / 1000), iterations };
      })
      .filter((s) => s !== undefined);
  }

  /**
   * What the job measured in each configuration it ran in (ReSHAPE's profile, APM's inputs), from
   * its stored timing samples; the first `warmupMs` of each configuration are left out.
   */
  measured(jobId: number, warmupMs: number): MeasuredPoint[] {
    const job = this.state.jobs.get(jobId);
    if (!job?.row.elastic || job.row.startTime === null) return [];
    const adaptations = this.estore.adaptationsOf(jobId);
    const configs: Configuration[] = [{ since: job.row.startTime, nodes: adaptations[0]?.fromNodes ?? job.nodes.length }];
    for (const a of adaptations) {
      configs.push({ since: a.requestedAt, nodes: 0 });
      if (a.endedAt !== null) configs.push({ since: a.endedAt, nodes: a.state === "COMMITTED" ? a.toNodes : a.fromNodes });
    }
    return measuredProfile(this.estore.perfSince(jobId, job.row.startTime), configs, warmupMs);
  }

  adaptations(jobId: number) {
    return this.estore.adaptationsOf(jobId);
  }

  /** The nodes a grow was planned to take are idle now and not excluded by the job (sbatch --exclude). */

}
