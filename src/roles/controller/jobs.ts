/**
 * The job lifecycle: submit, start, steps, finish, cancel, time limits, node failures.
 * Every change is committed to SQLite first, then applied in memory, then acted on.
 */
import { basename, isAbsolute, join } from "node:path";
import { homedir } from "node:os";
import { badRequest, conflict, notFound } from "../../api/errors.ts";
import { isActive, type JobState, type JobSubmit, type StepCreate, type StepGrant } from "../../api/schemas.ts";

import type { ControllerToAgent, JobStart } from "../../proto/agent.ts";
import type { ControllerToLauncher } from "../../api/launcher.ts";
import { jobToken, signCredential } from "../../proto/credential.ts";
import { blockLayout, taskCount } from "../../sched/layout.ts";
import type { JobRow, JobStore } from "../../store/jobs.ts";
import { logger } from "../../util/log.ts";
import { compressHostlist } from "../../util/hostlist.ts";
import { refreshSchedView } from "./sched-view.ts";
import { fillLayout } from "./spawns.ts";
import type { ClusterState, JobRuntime, LauncherSession } from "./state.ts";

const log = logger("controller");

export interface JobsConfig {
  clusterKey: string;
  defaultTimeLimit: number;
  /** Seconds between timing samples of elastic jobs' ranks, unless a job sets its own. */
  sampleInterval: number;
  killWaitMs: number;
  /** How long an allocation may stay without its `ebb run` launcher before it is cancelled. */
  orphanGraceMs: number;
}

export interface Effects {
  toAgent(node: string, msg: ControllerToAgent): boolean;
  schedule(): void;
  /** A job has just ended (adaptations under way end with it). */
  ended(job: JobRuntime): void;
  /** Wait for idle nodes for `tasks` new processes of a running job; `grant` takes them. */
  requestNodes<T>(jobId: number, tasks: number, waitMs: number, grant: (nodes: string[]) => T): Promise<T>;
}

const CRED_LIFETIME_MS = 10 * 60_000;

export class Jobs {
  constructor(
    private readonly store: JobStore,
    private readonly state: ClusterState,
    private readonly config: JobsConfig,
    private readonly effects: Effects,
  ) {}

  /** Load active jobs and their allocations after a (re)start. */
  restore(): void {
    const active = this.store.activeJobs(["PENDING", "RUNNING", "ADAPTING"]);
    const allocs = this.store.openAllocations();
    for (const row of active) {
      const nodes = allocs.filter((a) => a.jobId === row.id).map((a) => a.node);
      const job: JobRuntime = { row, nodes, launchers: new Set(), sched: {}, spawnedSteps: this.spawnedStepsOf(row.id, nodes) };
      refreshSchedView(job);
      this.state.jobs.set(row.id, job);
      for (const n of nodes) {
        const node = this.state.nodes.get(n);
        if (node) node.jobId = row.id;
      }
      this.watchOrphan(this.state.jobs.get(row.id)!);
    }
    if (active.length > 0) log.info("restored active jobs", { count: active.length });
  }

  /**
   * Steps still running on nodes the job grew by for them (PMI spawn), read back from the "grown"
   * events, so that their nodes are still released when they end after a controller restart.
   */
  private spawnedStepsOf(jobId: number, held: readonly string[]): Map<number, string[]> {
    const running = new Set(this.store.stepsOf(jobId).filter((s) => s.state === "RUNNING").map((s) => s.stepId));
    const out = new Map<number, string[]>();
    if (running.size === 0) return out;
    for (const e of this.store.eventsOf(jobId)) {
      const stepId = e.data?.stepId;
      const nodes = e.data?.nodes;
      if (e.kind !== "grown" || typeof stepId !== "number" || !running.has(stepId) || !Array.isArray(nodes)) continue;
      const still = nodes.filter((n): n is string => typeof n === "string" && held.includes(n));
      if (still.length > 0) out.set(stepId, still);
    }
    return out;
  }

  submit(req: JobSubmit, now = Date.now()): { id: number } {
    const known = this.state.nodes.size;
    const cpus = Math.max(1, Math.min(...[...this.state.nodes.values()].filter((n) => n.row.status === "UP").map((n) => n.row.cpus), Number.MAX_SAFE_INTEGER));
    const fromTasks = req.tasks ? Math.ceil(req.tasks / (req.tasksPerNode ?? (cpus === Number.MAX_SAFE_INTEGER ? 1 : cpus))) : 1;
    const nodes = req.nodes ?? req.maxNodes ?? req.minNodes ?? fromTasks;
    const minNodes = req.minNodes ?? nodes;
    const maxNodes = req.maxNodes ?? nodes;
    if (nodes < minNodes || nodes > maxNodes) throw badRequest(`nodes ${nodes} is outside [minNodes ${minNodes}, maxNodes ${maxNodes}]`, "nodes");
    if (known > 0 && minNodes > known)
      throw badRequest(`${minNodes} nodes requested but the cluster has ${known}; see GET /v1/nodes`, req.minNodes ? "minNodes" : "nodes");
    if (req.tasks !== undefined && req.tasks < minNodes) throw badRequest(`${req.tasks} tasks cannot use ${minNodes} nodes`, "tasks");
    const kind = req.script !== undefined ? "batch" : req.argv !== undefined ? "command" : "alloc";
    const name = req.name ?? (req.argv ? basename(req.argv[0]!) : kind === "batch" ? "batch" : "interactive");
    const cwd = req.cwd ?? homedir();
    const values = {
      name,
      kind,
      argv: req.argv ?? null,
      script: req.script ?? null,
      nodes,
      minNodes,
      maxNodes,
      elastic: req.elastic ?? false,
      tasks: req.tasks ?? null,
      tasksPerNode: req.tasksPerNode ?? null,
      timeLimit: req.timeLimit ?? this.config.defaultTimeLimit,
      env: req.env ?? {},
      cwd,
      submitTime: now,
      sampleInterval: req.sampleInterval ?? null,
      elasticSettings: req.elasticSettings ?? null,
    } as const;
    const row: JobRow = this.store.tx(() => {
      const id = this.store.insertJob(values);
      const output = kind === "alloc" ? null : outputPath(req.output ?? "ebb-%j.out", id, name, cwd);
      this.store.setOutput(id, output);
      this.store.addEvent(id, now, "submitted", `submitted: ${kind} job, ${describeSize(minNodes, maxNodes)}`);
      return { ...values, id, state: "PENDING", output, startTime: null, endTime: null, exitCode: null, reason: null, nextStep: 0 };
    });
    const job: JobRuntime = { row, nodes: [], launchers: new Set(), sched: {}, spawnedSteps: new Map() };
    refreshSchedView(job);
    this.state.jobs.set(row.id, job);
    this.watchOrphan(job);
    this.effects.schedule();
    return { id: row.id };
  }

  /** Start a pending job on `nodes` (from a scheduling plan). */
  start(job: JobRuntime, nodes: string[], reason: string, now = Date.now()): void {
    const row = job.row;
    const nextStep = row.kind === "command" ? 1 : 0;
    this.store.tx(() => {
      this.store.markRunning(row.id, now, nodes.length, nextStep);
      this.store.openAllocation(row.id, nodes, now);
      this.store.addEvent(row.id, now, "started", `started on ${compressHostlist(nodes)} (${reason})`, { nodes, reason });
      if (row.kind === "command") this.store.insertStep(row.id, 0, row.argv ?? [], taskCount(nodes.length, row.tasks, row.tasksPerNode), nodes, now);
    });
    Object.assign(row, { state: "RUNNING", startTime: now, reason: null, nodes: nodes.length, nextStep });
    job.nodes = nodes;
    job.waitReason = undefined;
    refreshSchedView(job);
    for (const n of nodes) this.state.nodes.get(n)!.jobId = row.id;

    if (row.kind === "alloc") {
      this.notifyLaunchers(job);
      return;
    }
    const refs = nodes.map((name) => ({ name, addr: this.state.nodes.get(name)!.row.addr }));
    const tasks = blockLayout(nodes.length, taskCount(nodes.length, row.tasks, row.tasksPerNode));
    const start: JobStart = {
      id: row.id,
      kind: row.kind,
      name: row.name,
      argv: row.argv ?? undefined,
      script: row.script ?? undefined,
      env: row.env,
      cwd: row.cwd,
      output: row.output!,
      nodes: refs,
      tasks,
      jobEnv: this.jobEnv(job),
      cred: row.kind === "command" ? signCredential(this.config.clusterKey, { jobId: row.id, stepId: 0, nodes, expires: now + CRED_LIFETIME_MS }) : undefined,
      elastic: row.kind === "command" ? this.elasticGrant(job, 0, tasks) : undefined,
    };
    if (!this.effects.toAgent(nodes[0]!, { t: "job.start", job: start })) {
      this.finish(job, "NODE_FAIL", { reason: `could not reach node ${nodes[0]} to start the job` });
    }
  }

  /** Environment every process of the job gets. */
  jobEnv(job: JobRuntime): Record<string, string> {
    return {
      EBB_JOB_ID: String(job.row.id),
      EBB_JOB_NAME: job.row.name,
      EBB_JOB_NODELIST: job.nodes.join(","),
      EBB_JOB_NUM_NODES: String(job.nodes.length),
      EBB_SUBMIT_DIR: job.row.cwd,
      EBB_TOKEN: jobToken(this.config.clusterKey, job.row.id),
      ...(job.row.tasks ? { EBB_NTASKS: String(job.row.tasks) } : {}),
    };
  }

  /** An active job, or the API error for a missing or finished one. */
  activeJob(jobId: number): JobRuntime {
    const job = this.state.jobs.get(jobId);
    if (job) return job;
    const row = this.store.getJob(jobId);
    if (!row) throw notFound(`job ${jobId}`);
    throw conflict("job_finished", `job ${jobId} already ended (${row.state})`);
  }

  private runningJob(jobId: number): JobRuntime {
    const job = this.activeJob(jobId);
    if (job.row.state === "PENDING") throw conflict("job_not_running", `job ${jobId} is ${job.row.state}; steps need a RUNNING job`);
    return job;
  }

  elasticOf(job: JobRuntime): NonNullable<JobRuntime["elastic"]> {
    return (job.elastic ??= {});
  }

  /** What a launcher needs to run the job's elastic step, if `stepId` is (or becomes) it. */
  private elasticGrant(job: JobRuntime, stepId: number, tasks: number[]): StepGrant["elastic"] {
    if (!job.row.elastic) return undefined;
    const e = this.elasticOf(job);
    if (e.stepId !== undefined && e.stepId !== stepId) return undefined;
    e.stepId = stepId;
    e.tasks = tasks;
    e.samplesSince = Date.now();
    return { minNodes: job.row.minNodes, maxNodes: job.row.maxNodes, sampleInterval: job.row.sampleInterval ?? this.config.sampleInterval };
  }

  createStep(jobId: number, req: StepCreate, now = Date.now()): StepGrant | Promise<StepGrant> {
    const job = this.runningJob(jobId);
    if (req.newNodes) return this.createStepOnNewNodes(job, req);
    const have = job.nodes.length;
    // The elastic step of an elastic job runs on all of its nodes: that is what resizes change.
    const wholeJob = job.row.elastic && job.elastic?.stepId === undefined;
    const n = wholeJob ? have : req.nodes ?? (req.tasks ? Math.min(have, req.tasks) : have);
    if (n > have) throw badRequest(`the step asks for ${n} nodes but job ${jobId} has ${have}`, "nodes");
    const tasks = taskCount(n, req.tasks, req.tasksPerNode);
    if (tasks < n) throw badRequest(`${tasks} tasks cannot use ${n} nodes`, "tasks");
    if (req.tasksPerNode && tasks > n * req.tasksPerNode) throw badRequest(`${tasks} tasks do not fit on ${n} nodes at ${req.tasksPerNode} per node`, "tasks");
    const stepId = job.row.nextStep;
    const nodes = job.nodes.slice(0, n);
    this.store.tx(() => {
      this.store.setNextStep(jobId, stepId + 1);
      this.store.insertStep(jobId, stepId, req.argv, tasks, nodes, now);
    });
    job.row.nextStep = stepId + 1;
    const layout = blockLayout(n, tasks);
    return { ...this.grant(job, stepId, nodes, layout, now), elastic: wholeJob ? this.elasticGrant(job, stepId, layout) : undefined };
  }

  private grant(job: JobRuntime, stepId: number, nodes: string[], tasks: number[], now: number): StepGrant {
    const jobId = job.row.id;
    return {
      jobId,
      stepId,
      nodes: nodes.map((name) => ({ name, addr: this.state.nodes.get(name)?.row.addr ?? "" })),
      tasks,
      jobNodes: job.nodes,
      cred: signCredential(this.config.clusterKey, { jobId, stepId, nodes, expires: now + CRED_LIFETIME_MS }),
      jobEnv: this.jobEnv(job),
    };
  }

  /** A step on nodes the job does not hold yet (PMI spawn): the allocation grows for its lifetime. */
  private createStepOnNewNodes(job: JobRuntime, req: StepCreate): Promise<StepGrant> {
    return this.effects.requestNodes(job.row.id, req.tasks!, (req.wait ?? 30) * 1000, (nodes) => this.growForStep(job, req, nodes));
  }

  private growForStep(job: JobRuntime, req: StepCreate, nodes: string[], now = Date.now()): StepGrant {
    const tasks = req.tasks!;
    const jobId = job.row.id;
    const stepId = job.row.nextStep;
    const layout = fillLayout(nodes.map((n) => this.state.nodes.get(n)!.row.cpus), tasks);
    this.store.tx(() => {
      this.store.setNextStep(jobId, stepId + 1);
      this.store.openAllocation(jobId, nodes, now, job.nodes.length);
      this.store.setNodes(jobId, job.nodes.length + nodes.length);
      this.store.insertStep(jobId, stepId, req.argv, tasks, nodes, now);
      this.store.addEvent(jobId, now, "grown", `grew by ${compressHostlist(nodes)} for step ${stepId} (spawn of ${tasks} processes)`, { nodes, stepId });
    });
    job.row.nextStep = stepId + 1;
    job.nodes = [...job.nodes, ...nodes];
    job.row.nodes = job.nodes.length;
    for (const n of nodes) this.state.nodes.get(n)!.jobId = jobId;
    job.spawnedSteps.set(stepId, nodes);
    refreshSchedView(job);
    return this.grant(job, stepId, nodes, layout, now);
  }

  stepEnded(jobId: number, stepId: number, exitCode: number, now = Date.now()): void {
    this.store.finishStep(jobId, stepId, exitCode === 0 ? "COMPLETED" : "FAILED", now, exitCode);
    const job = this.state.jobs.get(jobId);
    const spawned = job?.spawnedSteps.get(stepId);
    if (job && spawned) {
      job.spawnedSteps.delete(stepId);
      this.release(job, spawned, `step ${stepId} (spawned) ended`, now);
    }
  }

  /** Nodes a running job no longer holds: whatever it left there is killed, and they are free. */
  freeNodes(job: JobRuntime, nodes: readonly string[], why: string): void {
    for (const name of nodes) {
      const node = this.state.nodes.get(name);
      if (node?.jobId === job.row.id) node.jobId = undefined;
      this.effects.toAgent(name, { t: "job.kill", jobId: job.row.id, signal: "SIGKILL", reason: why });
    }
  }

  /** Give nodes of a running job back: they are killed clean and become free. */
  private release(job: JobRuntime, nodes: string[], why: string, now: number): void {
    const jobId = job.row.id;
    const keep = job.nodes.filter((n) => !nodes.includes(n));
    this.store.tx(() => {
      this.store.closeAllocation(jobId, now, nodes);
      this.store.setNodes(jobId, keep.length);
      this.store.addEvent(jobId, now, "shrunk", `released ${compressHostlist(nodes)}: ${why}`, { nodes });
    });
    job.nodes = keep;
    job.row.nodes = keep.length;
    this.freeNodes(job, nodes, why);
    refreshSchedView(job);
    this.effects.schedule();
  }

  cancel(id: number): void {
    const job = this.state.jobs.get(id);
    if (!job) {
      const row = this.store.getJob(id);
      if (!row) throw notFound(`job ${id}`);
      throw conflict("job_finished", `job ${id} already ended (${row.state})`);
    }
    this.finish(job, "CANCELLED", { reason: "cancelled by user" });
  }

  /**
   * The batch script or command of a job ended on its first node, or an `ebb run` released it.
   * A step that lost a node whose agent the controller has lost too ended because the node failed.
   * Returns the nodes sent a job.kill for it (for them the kill also acknowledges the exit).
   */
  exited(id: number, exitCode: number, message?: string, lostNode?: string): string[] {
    const job = this.state.jobs.get(id);
    if (!job || job.row.state === "PENDING") return [];
    // A command job's step 0 is the job: its end is recorded in the job's final transaction.
    const step0 = job.row.kind === "command" ? exitCode : undefined;
    const node = lostNode ? this.state.nodes.get(lostNode) : undefined;
    if (node && (!node.session || node.row.status === "DOWN")) {
      return this.finish(job, "NODE_FAIL", { exitCode, step0, reason: `node ${lostNode} failed: ${message ?? "lost contact"}` });
    }
    return this.finish(job, exitCode === 0 ? "COMPLETED" : "FAILED", { exitCode, step0, reason: exitCode === 0 ? undefined : message ?? `exit code ${exitCode}`, cleanup: "now" });
  }

  /** End an active job: record it, free its nodes, kill what is left of it. Returns the nodes sent a job.kill. */
  finish(job: JobRuntime, state: JobState, opts: { exitCode?: number; reason?: string; cleanup?: "now" | "graceful"; step0?: number }, now = Date.now()): string[] {
    const row = job.row;
    if (!isActive(row.state)) return [];
    const wasRunning = row.state !== "PENDING";
    const message = `${state.toLowerCase()}${opts.reason ? `: ${opts.reason}` : ""}`;
    this.store.tx(() => {
      this.store.markEnded(row.id, state, now, opts.exitCode ?? null, opts.reason ?? null);
      if (opts.step0 !== undefined) this.store.finishStep(row.id, 0, opts.step0 === 0 ? "COMPLETED" : "FAILED", now, opts.step0);
      this.store.closeAllocation(row.id, now);
      this.store.closeSteps(row.id, state, now);
      this.store.addEvent(row.id, now, "ended", message, { state, exitCode: opts.exitCode ?? null });
    });
    Object.assign(row, { state, endTime: now, exitCode: opts.exitCode ?? null, reason: opts.reason ?? null });
    // The end is on disk: an `ebb run` waiting for it may go now, before the nodes are cleaned up.
    this.notifyLaunchers(job);
    this.state.jobs.delete(row.id);
    this.effects.ended(job);
    if (job.orphanTimer) clearTimeout(job.orphanTimer);
    const graceful = (opts.cleanup ?? "graceful") === "graceful";
    const killed: string[] = [];
    for (const name of job.nodes) {
      const node = this.state.nodes.get(name);
      if (!node) continue;
      if (node.jobId === row.id) node.jobId = undefined;
      if (!wasRunning || node.row.status === "DOWN") continue;
      if (graceful) node.completing = { jobId: row.id, until: now + this.config.killWaitMs + 5000 };
      if (this.effects.toAgent(name, { t: "job.kill", jobId: row.id, signal: graceful ? "SIGTERM" : "SIGKILL", reason: message, confirm: graceful || undefined })) killed.push(name);
    }
    if (wasRunning && graceful) {
      const nodes = [...job.nodes];
      setTimeout(() => {
        for (const name of nodes) this.effects.toAgent(name, { t: "job.kill", jobId: row.id, signal: "SIGKILL", reason: message, confirm: true });
      }, this.config.killWaitMs).unref();
    }
    log.info(`job ${row.id} ${message}`, { exitCode: opts.exitCode });
    this.effects.schedule();
    return killed;
  }

  /** An agent says a killed job has no processes left on its node. */
  cleaned(node: string, jobId: number): void {
    const n = this.state.nodes.get(node);
    if (n?.completing?.jobId === jobId) {
      n.completing = undefined;
      this.effects.schedule();
    }
  }

  enforceTimeLimits(now = Date.now()): void {
    for (const job of [...this.state.jobs.values()]) {
      const { startTime, timeLimit } = job.row;
      if (job.row.state === "PENDING" || startTime === null) continue;
      if (now >= startTime + timeLimit * 1000) this.finish(job, "TIMEOUT", { reason: `time limit of ${timeLimit} s reached` }, now);
    }
  }

  nodeFailed(name: string, reason: string): void {
    const node = this.state.nodes.get(name);
    if (!node || node.jobId === undefined) return;
    const job = this.state.jobs.get(node.jobId);
    if (job) this.finish(job, "NODE_FAIL", { reason: `node ${name} ${reason}` });
  }

  notifyLaunchers(job: JobRuntime): void {
    const msg: ControllerToLauncher = { t: "job.state", jobId: job.row.id, state: job.row.state, reason: job.row.reason ?? job.waitReason, nodes: job.nodes };
    for (const l of job.launchers) l.send(msg);
  }

  /** An allocation whose `ebb run` is gone (and does not come back) is cancelled. */
  watchOrphan(job: JobRuntime): void {
    if (job.row.kind !== "alloc" || job.launchers.size > 0 || job.orphanTimer) return;
    job.orphanTimer = setTimeout(() => {
      job.orphanTimer = undefined;
      if (job.launchers.size === 0 && this.state.jobs.has(job.row.id)) this.finish(job, "CANCELLED", { reason: "its ebb run launcher went away" });
    }, this.config.orphanGraceMs);
    job.orphanTimer.unref?.();
  }

  addLauncher(jobId: number, session: LauncherSession): boolean {
    const job = this.state.jobs.get(jobId);
    if (!job) return false;
    job.launchers.add(session);
    if (job.orphanTimer) {
      clearTimeout(job.orphanTimer);
      job.orphanTimer = undefined;
    }
    return true;
  }

  removeLauncher(jobId: number, session: LauncherSession): void {
    const job = this.state.jobs.get(jobId);
    if (!job) return;
    job.launchers.delete(session);
    if (job.elastic?.launcher === session) job.elastic.launcher = undefined;
    this.watchOrphan(job);
  }
}

function describeSize(min: number, max: number): string {
  return min === max ? `${min} node${min === 1 ? "" : "s"}` : `${min}-${max} nodes`;
}

/** Slurm-style output patterns: %j job id, %x job name, %% a percent sign; relative to cwd. */
export function outputPath(pattern: string, id: number, name: string, cwd: string): string {
  const p = pattern.replace(/%([jx%])/g, (_, c: string) => (c === "j" ? String(id) : c === "x" ? name : "%"));
  return isAbsolute(p) ? p : join(cwd, p);
}
