/** API views built from store rows and the in-memory state. */
import type { PlanStore } from "../../store/plans.ts";
import { jobPlanItem } from "./plan-views.ts";
import { cfgView } from "./cfg.ts";
import type { JobDetail, JobView, NodeView, ShareView } from "../../api/schemas.ts";
import { compressIndices } from "../../domain/array.ts";
import type { NodeShare } from "../../domain/resources.ts";
import { shareOf, type AllocationRow, type JobListRow, type JobRow, type JobStore } from "../../store/jobs.ts";
import type { Elastic } from "./elastic.ts";
import type { ClusterState, JobRuntime, NodeRuntime } from "./state.ts";
import { expandPattern, patternVars } from "../output-patterns.ts";
import { remainingMs, type ProgramRuntime } from "./program.ts";

const iso = (t: number | null | undefined) => (t == null ? null : new Date(t).toISOString());

/** What a job that is over held when it ended, in rank order (a row from before shares: the whole node). */
function sharesAtEnd(state: ClusterState, rows: readonly AllocationRow[], job: JobListRow): NodeShare[] {
  const held = rows.filter((r) => r.until === null || (job.endTime !== null && r.until === job.endTime));
  return held.sort((a, b) => a.position - b.position).map((r) => shareOf(r) ?? state.wholeShare(r.node));
}

/** GPU-seconds a job held: each stretch on a node, its GPUs times its length (one still open: up to `now`; a row from before shares: the node's GPUs). */
export function gpuSeconds(state: ClusterState, rows: readonly AllocationRow[], now: number): number {
  let ms = 0;
  for (const r of rows) ms += (shareOf(r) ?? state.wholeShare(r.node)).gpus.length * Math.max(0, (r.until ?? now) - r.since);
  return ms / 1000;
}

/** What views need beyond job rows: jobs' MTCT, elastic jobs' adaptations, and the default sampling interval. */
export interface ViewContext {
  store: JobStore;
  plans: PlanStore;
  state: ClusterState;
  elastic: Elastic;
  sampleInterval: number;
}

/** A running job's MTCT now: the newest of the samples `jobDetail` lists, if it is recent. */
function latestMtct(ctx: ViewContext, job: JobListRow): number | null {
  if (!ctx.state.jobs.has(job.id)) return null;
  return ctx.elastic.mtct(job.id, job.sampleInterval ?? ctx.sampleInterval).mtct;
}

/** Slurm's word for why a pending job waits, from the scheduler's account of it. */
export function pendingReason(why: string | undefined): string {
  if (why === undefined) return "None";
  const word = /^([A-Za-z]+)/.exec(why)?.[1]?.toLowerCase();
  return word === "priority" ? "Priority" : word === "reqnodenotavail" ? "ReqNodeNotAvail" : "Resources";
}

/** A share as the API shows it: cores as a range list ("0-3,8") and their count. */
export function shareView(s: NodeShare): ShareView {
  const cores = [...s.cores].sort((a, b) => a - b);
  return { node: s.node, cores: compressIndices(cores), cpus: cores.length, memMiB: s.memMiB, gpus: [...s.gpus] };
}

/** A job with what it holds (or held at its end) on each node, in rank order. */
export function jobView(job: JobListRow, shares: readonly NodeShare[], live?: JobRuntime, mtct: number | null = null, resizes = 0, gpuSec = 0): JobView {
  const pending = job.state === "PENDING";
  const blocked = pending ? (live?.blocked ?? live?.limited) : undefined;
  return {
    id: job.id,
    name: job.name,
    kind: job.kind,
    state: job.state as JobView["state"],
    reason: blocked ? blocked.reason : pending ? pendingReason(live?.waitReason) : (live?.waitReason ?? job.reason),
    reasonDetail: blocked ? blocked.detail : pending ? (live?.waitReason ?? null) : null,
    nodes: job.nodes,
    minNodes: job.minNodes,
    maxNodes: job.maxNodes,
    elastic: job.elastic,
    tasks: job.tasks,
    tasksPerNode: job.tasksPerNode,
    overcommit: job.overcommit,
    timeLimit: job.timeLimit,
    argv: job.argv ?? null,
    cwd: job.cwd,
    private: false,
    // A pending job's files are still patterns: shown as far as they are known.
    output: pending && job.output !== null ? expandPattern(job.output, patternVars(job), job.cwd) : job.output,
    submitTime: iso(job.submitTime)!,
    startTime: iso(job.startTime),
    endTime: iso(job.endTime),
    exitCode: job.exitCode,
    allocation: shares.map((s) => s.node),
    mtct,
    arrayJobId: job.arrayJobId,
    arrayTaskId: job.arrayTaskId,
    arrayLimit: job.arrayLimit,
    held: job.held,
    dependency: job.dependency?.text ?? null,
    beginTime: iso(job.beginTime),
    exclude: job.exclude ?? [],
    nodelist: job.nodelist ?? [],
    sizes: job.sizes ?? null,
    error: pending && job.error !== null ? expandPattern(job.error, patternVars(job), job.cwd) : job.error,
    user: job.user,
    submittedBy: job.submittedBy,
    resizes,
    resources: job.resources && { ...job.resources, constraint: job.resources.constraint && [...job.resources.constraint] },
    shares: shares.map(shareView),
    usage: job.usage,
    gpuSeconds: gpuSec,
    partition: job.partition,
  };
}

export function jobViews(ctx: ViewContext, rows: JobListRow[]): JobView[] {
  const { store, state } = ctx;
  // Every job that started: a finished one's shares at its end, and any one's GPU time, are in its rows.
  const started = rows.filter((r) => r.startTime !== null).map((r) => r.id);
  const allocs = new Map<number, AllocationRow[]>();
  if (started.length > 0) {
    for (const a of store.allocationsOf(started)) {
      const list = allocs.get(a.jobId) ?? [];
      list.push(a);
      allocs.set(a.jobId, list);
    }
  }
  const resizes = store.resizeCounts(rows.filter((r) => r.elastic).map((r) => r.id));
  const now = Date.now();
  return rows.map((r) => {
    const live = state.jobs.get(r.id);
    const held = allocs.get(r.id) ?? [];
    const gpuSec = gpuSeconds(state, held, now);
    return live ? jobView(live.row, live.shares, live, latestMtct(ctx, live.row), resizes.get(r.id), gpuSec) : jobView(r, sharesAtEnd(state, held, r), undefined, null, resizes.get(r.id), gpuSec);
  });
}

export function jobDetail(ctx: ViewContext, row: JobRow): JobDetail {
  const { store, state } = ctx;
  const live = state.jobs.get(row.id);
  const history = store.allocationsOf(row.id);
  const resizes = row.elastic ? (store.resizeCounts([row.id]).get(row.id) ?? 0) : 0;
  const gpuSec = gpuSeconds(state, history, Date.now());
  const base = live ? jobView(live.row, live.shares, live, latestMtct(ctx, live.row), resizes, gpuSec) : jobView(row, sharesAtEnd(state, history, row), undefined, null, resizes, gpuSec);
  const interval = row.sampleInterval ?? ctx.sampleInterval;
  return {
    ...base,
    script: row.script,
    args: row.args,
    requeue: row.requeue,
    restarts: row.restarts,
    env: row.env,
    events: store.eventsOf(row.id).map((e) => ({ time: iso(e.time)!, kind: e.kind, message: e.message, data: e.data ?? null })),
    allocationHistory: history.map((a) => {
      const share = shareOf(a);
      return { node: a.node, position: a.position, since: iso(a.since)!, until: iso(a.until), cores: a.cores, memMiB: share?.memMiB ?? null, gpus: share ? [...share.gpus] : null };
    }),
    steps: store.stepsOf(row.id).map((s) => ({
      stepId: s.stepId,
      argv: s.argv,
      tasks: s.tasks,
      nodes: s.nodes,
      state: s.state,
      startTime: iso(s.startTime)!,
      endTime: iso(s.endTime),
      exitCode: s.exitCode,
      name: s.name,
    })),
    adaptations: row.elastic
      ? ctx.elastic.adaptations(row.id).map((a) => ({
          id: a.id,
          state: a.state as "ADAPTING" | "COMMITTED" | "FAILED",
          fromNodes: a.fromNodes,
          toNodes: a.toNodes,
          fromRanks: a.fromRanks,
          toRanks: a.toRanks,
          added: a.added,
          removed: a.removed,
          reason: a.reason,
          message: a.message,
          requestedAt: iso(a.requestedAt)!,
          endedAt: iso(a.endedAt),
          times: a.times,
        }))
      : [],
    limitHistory: store.limitChangesOf(row.id).map((c) => ({ time: iso(c.time)!, from: c.fromLimit, to: c.toLimit, reason: c.reason })),
    plans: ctx.plans.ofJob(row.id, 100).map(jobPlanItem),
    samples: ctx.elastic.mtct(row.id, interval, 0).samples.map((s) => ({ time: iso(s.time)!, mtct: s.mtct, iterations: s.iterations })),
    sampleInterval: interval,
    elasticSettings: row.elasticSettings ?? null,
    cfg: cfgView(ctx.elastic.cfgs.get(row.id), ctx.elastic.cfgs.monitor(row.id), { ended: row.endTime !== null, elastic: row.elastic, nodes: row.nodes }, live?.program?.structure?.phases),
    program: programView(live?.program),
  };
}

/** Orders node names as people do (node2 before node10); one collator (localeCompare with options builds one per call). */
export const byNodeName = new Intl.Collator("en", { numeric: true }).compare;

export function nodeView(n: NodeRuntime, now = Date.now()): NodeView {
  const completingJob = [...n.completing].find(([, until]) => until > now)?.[0];
  const completing = completingJob !== undefined;
  const jobs = [...n.shares.keys()];
  const busy = jobs.length > 0 || completing;
  const state =
    n.row.status === "DOWN" ? "DOWN" : !n.session ? "UNKNOWN" : n.row.drain !== null ? (busy ? "DRAINING" : "DRAINED") : jobs.length > 0 ? "ALLOCATED" : completing ? "COMPLETING" : "IDLE";
  let cpus = 0;
  let memMiB = 0;
  const gpus: number[] = [];
  for (const s of n.shares.values()) {
    cpus += s.cores.length;
    memMiB += s.memMiB;
    gpus.push(...s.gpus);
  }
  gpus.sort((a, b) => a - b);
  return {
    name: n.row.name,
    state,
    cpus: n.row.cpus,
    memoryMb: n.row.memoryMb,
    gpus: [...n.row.gpus],
    features: [...n.row.features],
    allocated: { cpus, memMiB, gpus },
    free: { cpus: Math.max(0, n.row.cpus - cpus), memMiB: Math.max(0, n.row.memoryMb - memMiB), gpus: n.row.gpus.map((_, i) => i).filter((i) => !gpus.includes(i)) },
    addr: n.row.addr,
    jobs,
    jobId: jobs[0] ?? completingJob ?? null,
    reason: n.row.reason ?? (state === "UNKNOWN" ? "agent not connected since the controller started" : (n.row.drain ?? (n.row.ownerSince !== null ? "its owner wants it back (ebb drain --owner): no new work, its jobs move off" : null))),
    drain: n.row.drain,
    runAs: n.runAs === undefined ? null : n.runAs === "job-user" ? "job's user" : `agent's user (${n.runAs})`,
    host: n.host ? { state: n.host.state, rule: n.host.rule, inputs: { ...n.host.inputs }, since: iso(n.host.since) } : { state: "free", rule: "", inputs: {}, since: null },
  };
}

/** An EPOP program's structure and progress, while its job runs. */
function programView(p: ProgramRuntime | undefined): JobDetail["program"] {
  if (!p?.structure) return null;
  const left = remainingMs(p);
  return {
    name: p.structure.name,
    phases: p.structure.phases,
    pc: p.pc ?? null,
    iteration: p.iteration ?? null,
    bound: p.bound ?? null,
    remainingSeconds: left === undefined ? null : Math.round(left / 100) / 10,
  };
}
