/**
 * The job lifecycle: submit, start, steps, finish, cancel, time limits, node failures.
 * Every change is committed to SQLite first, then applied in memory, then acted on.
 */
import { resolveSizes } from "../../sched/sizes.ts";
import { restoreProgram } from "./program.ts";
import { basename } from "node:path";
import { homedir } from "node:os";
import { badRequest, conflict, notFound, Refusal } from "../../domain/refusal.ts";
import { MAX_TIME_LIMIT, type JobSubmit, type JobUpdate, type StepCreate, type StepGrant } from "../../proto/requests.ts";
import { mayBecome, NOBODY, ownerOf, type FinalState } from "../../domain/job.ts";

import type { ControllerToAgent, JobStart } from "../../proto/agent.ts";
import type { ControllerToLauncher } from "../../proto/launcher.ts";
import { argvDigest, CRED_LIFETIME_MS, envDigest, jobToken, outputDigest, signCredential, type StepCovers } from "../../proto/credential.ts";
import { blockLayout, blockWithin, planeLayout, taskCount } from "../../sched/layout.ts";
import { limitRatio, rescaleLimit } from "../../sched/limits.ts";
import { jobCountLimit } from "../../sched/quota.ts";
import { formatDuration } from "../../util/time.ts";
import type { JobRow, JobStore } from "../../store/jobs.ts";
import { StoreUnavailable } from "../../store/db.ts";
import { compressIndices, parseArraySpec } from "../../domain/array.ts";
import { dependencyJobs, parseDependency, type DependencySpec } from "../../domain/dependency.ts";
import { parseSignalSpec, type JobSignal } from "../../domain/job-options.ts";
import type { Dependency } from "../../sched/eligibility.ts";
import { logger } from "../../util/log.ts";
import { compressHostlist } from "../../util/hostlist.ts";
import { DEFAULT_PARTITION, inheritedJobVars, slurmJobVars } from "../slurm-env.ts";
import type { Ledger, LedgerTx, NodeUsageReport } from "./ledger.ts";
import { expandPattern, patternVars } from "../output-patterns.ts";
import { fillLayout } from "./spawns.ts";
import { StepCpus } from "./step-cpus.ts";
import { placeExact, type ExactAsk } from "../../sched/step-place.ts";
import type { ClusterState, JobRuntime, LauncherSession, NodeRuntime } from "./state.ts";
import type { QueuePolicy } from "./queue.ts";
import { defaultTimeOf, inPartition, type Partition } from "../../sched/partitions.ts";
import { groupsOf } from "../../util/user.ts";
import { neverFits, type NodeShare, type ResourceRequest } from "../../domain/resources.ts";
import { requestFrom } from "../../domain/request.ts";
import { MAX_RANKS_PER_NODE, ranksPerNodeRefusal } from "../../domain/ranks-per-node.ts";

const log = logger("controller");

/** Why `minNodes` cannot be had where `known` nodes are registered in `partition` (none: the cluster): the job would wait forever. */
function tooFewNodes(minNodes: number, known: number, partition: Partition | undefined): string | undefined {
  if (known === 0 || minNodes <= known) return undefined;
  return `${minNodes} nodes requested but ${partition ? `partition ${partition.name}` : "the cluster"} has ${known}; see GET /v1/nodes`;
}

export interface JobsConfig {
  clusterKey: string;
  defaultTimeLimit: number;
  /** Seconds between the ranks' timing and CFG samples of every job, unless a job sets its own. */
  sampleInterval: number;
  killWaitMs: number;
  /** How long a silent node takes at most to be judged DOWN (3 heartbeats and an eighth): elastic grants say it. */
  nodeDownMs?: number;
  /** How long an allocation may stay without its `ebb run` launcher before it is cancelled. */
  orphanGraceMs: number;
  /** The most tasks one array may have (--max-array-tasks). */
  maxArrayTasks: number;
  /** The most jobs pending or running, an array's tasks each (--max-job-count, Slurm's MaxJobCount); one user at most half. */
  maxJobCount: number;
  /** SLURM_CLUSTER_NAME of every job (the config file's clusterName). */
  clusterName: string;
  /** MiB per core of a request that names no memory (--def-mem-per-cpu); else each node's memory / cores. */
  defMemPerCpu?: number;
  /** Partitions, limits and priorities (absent: none, one pool of nodes). */
  queue?: QueuePolicy;
}

export interface Effects {
  toAgent(node: string, msg: ControllerToAgent): boolean;
  schedule(): void;
  /** A job has just ended (adaptations under way end with it). */
  ended(job: JobRuntime): void;
  /** A job has just started (metrics count it). */
  started?(job: JobRuntime): void;
  /** Nodes just given to a job: their agents hear of it now, since a launch there waits for that news. */
  allocated?(nodes: readonly string[]): void;
  /** A submission (through the API or a launcher's WebSocket) took `ms`, accepted or refused. */
  submitted?(ms: number): void;
  /** Pending jobs' holds, dependencies, begin times or array limits (re)evaluated now. */
  watch(jobs: readonly JobRuntime[], now: number): void;
  /** Wait for idle nodes for `tasks` new processes of a running job; `grant` takes them. */
  requestNodes<T>(jobId: number, tasks: number, waitMs: number, grant: (nodes: string[]) => T): Promise<T>;
  /**
   * Start the step root of an elastic command job on the controller's host (step-roots.ts); an
   * error message if it could not. Without it, such roots run in the first node's agent.
   */
  startStepRoot?(start: JobStart): string | undefined;
}

/** The most jobs one dependency may name, an array's tasks each counted (eligibility checks them all on every pass). */
export const MAX_DEPENDENCY_JOBS = 10_000;

/** Who submits: the user it is recorded for, and the job whose token submitted it, if any. */
export interface Submitter {
  user: string | null;
  job?: number;
}

/** How a job ends: its exit code, why, how its processes are cleaned up, step 0's exit code. */
export interface EndOptions {
  exitCode?: number;
  reason?: string;
  cleanup?: "now" | "graceful";
  step0?: number;
  /** The node whose exit report said the job has nothing left on it (job.exit's `gone`): it is sent no job.kill. */
  spared?: string;
}

/** How an active job ends. */
interface JobEnd {
  job: JobRuntime;
  state: FinalState;
  opts: EndOptions;
}

const endMessage = (state: FinalState, opts: EndOptions) => `${state.toLowerCase()}${opts.reason ? `: ${opts.reason}` : ""}`;

export interface PreparedJob {
  values: Omit<JobRow, "id" | "state" | "startTime" | "endTime" | "exitCode" | "reason" | "nextStep" | "arrayJobId" | "arrayTaskId" | "usage">;
  /** Array task ids, for an array, and its spec's step (SLURM_ARRAY_TASK_STEP). */
  indices?: number[];
  step?: number;
}

/** Who asks for a step over /v1/launcher: an exact step that must wait is answered later, after `waiting`. */
export interface StepCaller {
  owner: LauncherSession;
  waiting(message: string): void;
}

export class Jobs {
  private readonly waiters = new Map<number, Set<() => void>>();
  /** CPUs held by exact steps (srun --exact), and the exact steps waiting for them. */
  readonly stepCpus = new StepCpus();

  constructor(
    private readonly store: JobStore,
    private readonly state: ClusterState,
    private readonly config: JobsConfig,
    private readonly effects: Effects,
    private readonly ledger: Ledger,
  ) {}

  /** Stores an EPOP program's state with the job (program.ts restores it after a restart). */
  saveProgram(job: JobRuntime): void {
    const program = job.program ? { ...job.program } : null;
    this.ledger.commit((tx) => tx.program(job, program));
  }

  /** Load active jobs and their allocations after a (re)start. */
  restore(): void {
    const active = this.ledger.restore();
    for (const job of active) {
      job.spawnedSteps = this.spawnedStepsOf(job.row.id, job.nodes);
      if (job.row.program) restoreProgram(job, job.row.program);
      this.watchOrphan(job);
    }
    this.effects.watch(
      active.filter((j) => j.row.state === "PENDING"),
      Date.now(),
    );
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

  /** How many of `user`'s jobs are pending or running. */
  private activeOf(user: string): number {
    let n = 0;
    for (const j of this.state.jobs.values()) if (ownerOf(j.row) === user) n++;
    return n;
  }

  /** A submission checked against the cluster and turned into the job's row (without id and state). */
  prepare(req: JobSubmit, by: Submitter, now = Date.now()): PreparedJob {
    const partition = this.partitionFor(req, by);
    // A partition's nodes are the job's whole cluster (those registered so far).
    const inPart = (name: string) => !partition || inPartition(partition, name);
    const partNodes = [...this.state.nodes.values()].filter((n) => inPart(n.row.name));
    const known = partNodes.length;
    const cpus = Math.max(1, Math.min(...[...this.state.nodes.values()].filter((n) => n.row.status === "UP").map((n) => n.row.cpus), Number.MAX_SAFE_INTEGER));
    // Overcommitted tasks do not ask for nodes (as Slurm: the job is allocated as if it ran one task a node).
    const fromTasks = req.tasks && !req.overcommit ? Math.ceil(req.tasks / (req.tasksPerNode ?? (cpus === Number.MAX_SAFE_INTEGER ? 1 : cpus))) : 1;
    const asked = req.nodes ?? req.maxNodes ?? req.minNodes ?? fromTasks;
    // A nodelist longer than the size asked for makes the job that large, as in Slurm.
    const nodes = Math.max(asked, req.nodelist?.length ?? 0);
    const minNodes = Math.max(req.minNodes ?? nodes, req.nodelist?.length ?? 0);
    const maxNodes = Math.max(req.maxNodes ?? nodes, minNodes);
    if (nodes < minNodes || nodes > maxNodes) throw badRequest(`nodes ${nodes} is outside [minNodes ${minNodes}, maxNodes ${maxNodes}]`, "nodes");
    const byTasks = req.nodes === undefined && req.minNodes === undefined && req.maxNodes === undefined && !req.nodelist?.length;
    if (known > 0 && minNodes > known && byTasks)
      throw badRequest(`${req.tasks} tasks at ${req.tasksPerNode ? `${req.tasksPerNode} a node need ${minNodes} nodes` : `a CPU each need ${minNodes} nodes of ${cpus} CPUs`}, more than ${partition ? `partition ${partition.name}` : "the cluster"} has (${known}); ask for fewer tasks, or --overcommit (API overcommit) to run more tasks than CPUs`, "tasks");
    const short = tooFewNodes(minNodes, known, partition);
    if (short) throw badRequest(short, req.minNodes ? "minNodes" : "nodes");
    if (req.tasks !== undefined && req.tasks < minNodes) throw badRequest(`${req.tasks} tasks cannot use ${minNodes} nodes`, "tasks");
    // Checked again on each node at launch; here the job is refused before it waits for nodes.
    const crowded = ranksPerNodeRefusal(Math.max(req.tasksPerNode ?? 0, req.tasks === undefined ? 0 : Math.ceil(req.tasks / maxNodes)));
    if (crowded) throw badRequest(`${crowded}; ask for more nodes or fewer tasks`, (req.tasksPerNode ?? 0) > MAX_RANKS_PER_NODE ? "tasksPerNode" : "tasks");
    if (known > 0 && !req.overcommit) this.checkCpus(req, maxNodes);
    if (known > 0 && (req.nodelist || req.exclude)) {
      const missing = req.nodelist?.find((n) => !this.state.nodes.has(n));
      if (missing) throw badRequest(`nodelist: node ${missing} does not exist; see GET /v1/nodes`, "nodelist");
      const elsewhere = req.nodelist?.find((n) => !inPart(n));
      if (elsewhere) throw badRequest(`nodelist: node ${elsewhere} is not in partition ${partition!.name}; see ebb partitions`, "nodelist");
      const usable = partNodes.filter((n) => !req.exclude?.includes(n.row.name)).length;
      if (usable < minNodes) throw badRequest(`exclude: with ${req.exclude!.length} nodes excluded, ${usable} are left and the job needs ${minNodes}`, "exclude");
    }
    const resources = requestFrom(req);
    this.checkFits(req, resources, partNodes, partition?.name);
    const sizes = req.sizes === undefined ? null : resolveSizes(req.sizes, minNodes, maxNodes);
    if (sizes && "error" in sizes) throw badRequest(`sizes: ${sizes.error}`, "sizes");
    if (sizes && !sizes.includes(nodes)) throw badRequest(`sizes: the job asks for ${nodes} nodes, which is not one of its sizes (${sizes.join(",")})`, "sizes");
    const kind: JobRow["kind"] = req.script !== undefined ? "batch" : req.argv !== undefined ? "command" : "alloc";
    // sbatch's (and salloc's) layout, whatever the job's -m (Slurm 22.05 side by side); ebb run's own allocations keep an even spread.
    if (kind === "batch" && resources.nodes !== undefined && resources.tasksPerNode === undefined && !resources.exclusive) resources.fill = true;
    const name = req.name ?? (req.argv ? basename(req.argv[0]!) : kind === "batch" ? "batch" : "interactive");
    const cwd = req.cwd ?? homedir();
    const array = req.array === undefined ? undefined : parseArraySpec(req.array, this.config.maxArrayTasks);
    // Each task is a row and a job to schedule: one request makes at most maxArrayTasks of them.
    if (array && "error" in array)
      throw badRequest(`array: ${array.error}, the most this controller takes in one array (its --max-array-tasks, ${this.config.maxArrayTasks}); submit it as several arrays`, "array");
    const adding = array?.indices.length ?? 1;
    const who = by.user ?? NOBODY;
    const full = jobCountLimit(this.state.jobs.size, () => this.activeOf(who), adding, this.config.maxJobCount, who);
    if (full) throw conflict("max_job_count", full);
    const limit = this.config.queue?.submitLimit(by.user, partition, adding);
    if (limit) throw conflict("max_submit_jobs", limit);
    const dependency = req.dependency === undefined ? null : { ...this.resolveDependency(parseDependency(req.dependency) as DependencySpec), text: req.dependency, ...(req.killOnInvalidDep ? { kill: true as const } : {}) };
    const values: PreparedJob["values"] = {
      name,
      kind,
      argv: req.argv ?? null,
      script: req.script ?? null,
      args: req.args && req.args.length > 0 ? req.args : null,
      nodes,
      minNodes,
      maxNodes,
      elastic: req.elastic ?? false,
      tasks: req.tasks ?? null,
      tasksPerNode: req.tasksPerNode ?? null,
      overcommit: req.overcommit ?? false,
      timeLimit: req.timeLimit === "UNLIMITED" ? (partition?.maxTime ?? MAX_TIME_LIMIT) : (req.timeLimit ?? defaultTimeOf(partition, this.config.defaultTimeLimit)),
      // The job gets a token of its own: the submitter's is never stored with it.
      env: withoutKeys(req.env ?? {}, ["EBB_TOKEN"]),
      cwd,
      // A pattern until the job starts (%N is its first node).
      output: kind === "alloc" ? null : (req.output ?? (array ? "ebb-%A_%a.out" : "ebb-%j.out")),
      error: kind === "alloc" ? null : (req.error ?? null),
      submitTime: now,
      sampleInterval: req.sampleInterval ?? null,
      elasticSettings: req.elasticSettings ?? null,
      arrayLimit: array?.limit ?? null,
      held: req.hold ?? false,
      dependency,
      beginTime: req.begin === undefined ? null : Date.parse(req.begin),
      exclude: req.exclude ?? null,
      nodelist: req.nodelist ?? null,
      sizes,
      program: null,
      user: by.user,
      submittedBy: by.job ?? null,
      signal: req.signal === undefined ? null : (parseSignalSpec(req.signal) as JobSignal),
      requeue: req.requeue ?? false,
      restarts: 0,
      appendOutput: req.openMode === "append",
      resources,
      partition: partition?.name ?? null,
    };
    return { values, indices: array?.indices, step: array?.step };
  }

  /**
   * Tasks against CPUs, without --overcommit: no more tasks per node than the largest node has CPUs,
   * and no more tasks than the job's largest size offers on the nodes with the most.
   */
  private checkCpus(req: JobSubmit, maxNodes: number): void {
    const cpus = [...this.state.nodes.values()].map((n) => n.row.cpus).sort((a, b) => b - a);
    const most = cpus[0] ?? 0;
    if (req.tasksPerNode !== undefined && req.tasksPerNode > most)
      throw badRequest(`${req.tasksPerNode} tasks per node, but no node has more than ${most} CPUs; ask for fewer, or allow it with --overcommit (overcommit: true)`, "tasksPerNode");
    const offered = cpus.slice(0, maxNodes).reduce((a, b) => a + b, 0);
    if (req.tasks !== undefined && req.tasks > offered)
      throw badRequest(`${req.tasks} tasks, but ${Math.min(maxNodes, cpus.length)} nodes offer at most ${offered} CPUs; ask for fewer tasks or more nodes, or allow it with --overcommit (overcommit: true)`, "tasks");
  }

  /**
   * A request no node could ever hold (cores, memory or GPUs per node, features) is refused, as
   * Slurm refuses it, with what no node has and the field that asks for it.
   */
  private checkFits(req: JobSubmit, resources: ResourceRequest, among: readonly NodeRuntime[], partition?: string): void {
    const nodes = among.map((n) => ({ name: n.row.name, total: this.state.resources(n) }));
    const why = neverFits(resources, nodes, this.config.defMemPerCpu);
    if (why === null) return;
    const first = <K extends keyof JobSubmit>(...keys: K[]) => keys.find((k) => req[k] !== undefined);
    const field = why.startsWith("only")
      ? first("nodes", "minNodes", "nodelist", "tasksPerNode") ?? "nodes"
      : why.includes("features")
        ? "constraint"
        : why.includes("cores")
          ? first("cpusPerTask", "cpusPerGpu", "minCpus", "tasksPerNode", "tasks") ?? "cpusPerTask"
          : why.includes("memory")
            ? first("mem", "memPerCpu", "memPerGpu", "cpusPerTask", "cpusPerGpu") ?? "mem"
            : first("gpusPerNode", "gpusPerTask", "gpus", "gpuType") ?? "gpus";
    throw badRequest(`${field}: ${why}${partition ? ` in partition ${partition}` : ""}, so the job could never run; see what the nodes have with ebb nodes (GET /v1/nodes)`, field);
  }

  /** The partition the job goes to (absent: none are configured), or a refusal naming the field. */
  private partitionFor(req: JobSubmit, by: Submitter): Partition | undefined {
    const partitions = this.config.queue?.partitions;
    if (!partitions?.configured) {
      if (req.partition !== undefined) throw badRequest(`partition ${req.partition} does not exist: this controller has no partitions (leave --partition out, or an admin defines them: partitions in the controller's config file)`, "partition");
      return undefined;
    }
    const r = partitions.resolve(req.partition, by.user, () => (by.user ? groupsOf(by.user) : []));
    if (r.error) throw r.error.includes("may not use") ? new Refusal("forbidden", "partition_not_allowed", r.error, "partition") : badRequest(r.error, "partition");
    return r.partition;
  }

  /** Every job a dependency names, by id: an array's id stands for all of its tasks. */
  private resolveDependency(spec: DependencySpec): Dependency {
    const terms = dependencyJobs(
      spec,
      (ref) => {
        const arrayJobId = this.state.jobs.get(ref.job)?.row.arrayJobId ?? this.store.arrayIdOf(ref.job);
        if (ref.task !== undefined) {
          const task = arrayJobId === undefined ? undefined : this.store.arrayTaskId(ref.job, ref.task);
          if (task === undefined) throw badRequest(`dependency: job ${ref.job}_${ref.task} does not exist`, "dependency");
          return [task];
        }
        if (arrayJobId === undefined) throw badRequest(`dependency: job ${ref.job} does not exist`, "dependency");
        return arrayJobId === ref.job ? this.store.arrayTaskIds(ref.job) : [ref.job];
      },
      MAX_DEPENDENCY_JOBS,
    );
    if (!terms) throw badRequest(`dependency: names more than ${MAX_DEPENDENCY_JOBS} jobs (an array counts each of its tasks); depend on fewer jobs, or on a job that waits for the others`, "dependency");
    return { any: spec.any, terms };
  }

  submit(req: JobSubmit, by: Submitter, now = Date.now()): { id: number } {
    if (!this.effects.submitted) return this.accept(req, by, now);
    const t0 = performance.now();
    try {
      return this.accept(req, by, now);
    } finally {
      this.effects.submitted(performance.now() - t0);
    }
  }

  /** Submissions of this event-loop turn, waiting for their common transaction. */
  private submissions: { req: JobSubmit; by: Submitter; t0: number; resolve: (r: { id: number }) => void; reject: (e: unknown) => void }[] = [];

  /**
   * `submit` for the HTTP API: the submissions of one event-loop turn are checked and recorded in
   * one transaction once the turn's requests are read, each in a savepoint of its own (one refused
   * leaves the others), and each is answered once all have committed: a commit appends every page
   * it changed to the WAL, and a turn's submissions change the same few pages.
   */
  submitSoon(req: JobSubmit, by: Submitter): Promise<{ id: number }> {
    return new Promise((resolve, reject) => {
      if (this.submissions.length === 0) setImmediate(() => this.acceptQueued());
      this.submissions.push({ req, by, t0: performance.now(), resolve, reject });
    });
  }

  /** Records the submissions waiting for their turn's transaction now (also at a stop, before the store closes). */
  acceptQueued(): void {
    const queued = this.submissions;
    if (queued.length === 0) return;
    this.submissions = [];
    const now = Date.now();
    let results: ({ ok: true; value: JobRow[] } | { ok: false; error: unknown })[];
    try {
      results = this.ledger.commitEach(queued.map((s) => (tx: LedgerTx) => this.record(tx, this.prepare(s.req, s.by, now), s.by, now)));
    } catch (e) {
      for (const s of queued) s.reject(e);
      return;
    }
    results.forEach((r, i) => {
      const s = queued[i]!;
      if (!r.ok) return s.reject(r.error);
      s.resolve(this.afterSubmit(r.value, now));
      this.effects.submitted?.(performance.now() - s.t0);
    });
  }

  private accept(req: JobSubmit, by: Submitter, now: number): { id: number } {
    const prepared = this.prepare(req, by, now);
    return this.afterSubmit(
      this.ledger.commit((tx) => this.record(tx, prepared, by, now)),
      now,
    );
  }

  /** A prepared submission's rows and events, in the transaction `tx`. */
  private record(tx: LedgerTx, { values, indices, step }: PreparedJob, by: Submitter, now: number): JobRow[] {
    const spec = indices && `${compressIndices(indices)}${values.arrayLimit ? `%${values.arrayLimit}` : ""}`;
    const made = tx.submitted(values, indices, spec, step);
    const ids = made.map((r) => r.id);
    const arrayJobId = made[0]!.arrayJobId;
    const size = describeSize(values.minNodes, values.maxNodes);
    const extra = [values.held ? "held" : "", values.dependency ? `dependency ${values.dependency.text}` : "", values.beginTime ? `begin ${new Date(values.beginTime).toISOString()}` : "", by.job ? `by job ${by.job}` : ""].filter(Boolean);
    const tail = `${size}${extra.length ? `; ${extra.join(", ")}` : ""}`;
    if (!indices) this.store.addEvent(ids[0]!, now, "submitted", `submitted: ${values.kind} job, ${tail}`);
    else {
      // The array's task list is kept once, with the array (job_arrays.spec); each task's event names the array.
      const rest = ` of an array of ${indices.length} ${values.kind} jobs (${arrayJobId}_[${indices.length <= 8 ? spec : "..."}]), ${tail}`;
      this.store.addEvent(ids[0]!, now, "submitted", `submitted: task ${arrayJobId}_${indices[0]}${rest}`);
      this.store.addTaskEvents(arrayJobId!, now, "submitted", `submitted: task {task}${rest}`);
    }
    return made;
  }

  /** A submission committed: its jobs are watched, and the scheduler asked for a pass. */
  private afterSubmit(rows: readonly JobRow[], now: number): { id: number } {
    const made = rows.map((row) => this.state.jobs.get(row.id)!);
    this.effects.watch(made, now);
    for (const job of made) this.watchOrphan(job);
    this.effects.schedule();
    return { id: rows[0]!.id };
  }

  /**
   * Why step 0 of a command job does not fit the CPUs of the nodes it got (the check at submit
   * could only use the cluster's largest nodes), unless it may overcommit.
   */
  private step0Overfills(row: JobRow, shares: readonly NodeShare[], layout: readonly number[]): string | undefined {
    if (row.kind !== "command" || row.overcommit) return undefined;
    const tasks = layout.reduce((a, b) => a + b, 0);
    const nodes = shares.map((s) => s.node);
    const over = this.overfilled(row, shares, layout);
    if (over) return `${tasks} tasks on ${nodes.length} node${nodes.length === 1 ? "" : "s"} (${compressHostlist(nodes)}) put ${over}; submit it with fewer tasks, or with --overcommit`;
    return undefined;
  }

  /** How many tasks of a job each of its shares holds: its cores, by the job's cores per task. */
  private capacities(row: JobRow, shares: readonly NodeShare[]): number[] {
    const perTask = row.resources?.cpusPerTask ?? 1;
    return shares.map((s) => Math.floor(s.cores.length / perTask));
  }

  /**
   * Tasks per node of a job's step over its first shares: a job with a request fills what each
   * share holds, `perNode` at most (Slurm's layout: sched/layout.ts blockWithin); a job without one
   * has its nodes whole and a block layout, as before resources.
   */
  private layoutOn(row: JobRow, shares: readonly NodeShare[], tasks: number, perNode?: number): number[] {
    if (!row.resources) return blockLayout(shares.length, tasks);
    // As Slurm's: a count per node caps what each share holds (slurm_step_layout.c, its plane_size).
    return blockWithin(this.capacities(row, shares).map((c) => (perNode ? Math.min(c, perNode) : c)), tasks);
  }

  /** "N on NODE, which has C CPUs" for the first node `layout` puts more tasks on than the job's share there holds; undefined if none. */
  private overfilled(row: JobRow, shares: readonly NodeShare[], layout: readonly number[], perNode?: number): string | undefined {
    const caps = this.capacities(row, shares);
    // A count per node the shares cannot all hold over-subscribes some, as Slurm's step does
    // (-N 4 -n 8 --ntasks-per-node=2 on 4,2,1,1 CPUs runs 3,3,1,1): allowed while the step's tasks
    // are not more than its nodes' CPUs hold in all.
    if (perNode && row.resources && layout.reduce((a, b) => a + b, 0) <= caps.reduce((a, b) => a + b, 0)) return undefined;
    for (const [i, s] of shares.entries()) {
      if (layout[i]! <= caps[i]!) continue;
      const perTask = row.resources?.cpusPerTask ?? 1;
      const whole = s.cores.length === this.state.nodes.get(s.node)?.row.cpus;
      return `${layout[i]} on ${s.node}, ${whole && perTask === 1 ? `which has ${caps[i]} CPUs` : `where the job holds ${s.cores.length} core${s.cores.length === 1 ? "" : "s"}${perTask > 1 ? ` (${caps[i]} tasks of ${perTask})` : ""}`}`;
    }
    return undefined;
  }

  /**
   * Start pending jobs, each on its shares of nodes in rank order (a scheduling pass's starts): a
   * job whose step 0 would overfill its shares ends FAILED first; the others' starts are recorded
   * in one transaction, with `within` (the plan applier records the plan there and marks each item
   * carried out or not: `started` holds the jobs that start), and then each is launched.
   */
  startAll(orders: readonly StartOrder[], within: (started: ReadonlySet<JobRuntime>) => void, now = Date.now()): void {
    const ready = orders.flatMap((o) => this.startable(o, now) ?? []);
    this.ledger.commit((tx) => {
      for (const r of ready) this.recordStart(tx, r, now);
      within(new Set(ready.map((r) => r.job)));
    });
    for (const r of ready) this.launch(r, now);
  }

  /** A start's records and launch, worked out; undefined (the job ended FAILED) if its step 0 overfills its shares. */
  private startable({ job, placed, reason }: StartOrder, now: number): ReadyStart | undefined {
    const row = job.row;
    const shares = placed.shares;
    const nodes = shares.map((s) => s.node);
    // Tasks per node: where the placement put them, else (whole-node mode, or an overcommitted job
    // placed as one task per node) spread over the shares.
    const count = taskCount(nodes.length, row.tasks, row.tasksPerNode);
    const layout = placed.tasks && placed.tasks.reduce((a, b) => a + b, 0) === count ? [...placed.tasks] : this.layoutOn(row, shares, count);
    const overfills = this.step0Overfills(row, shares, layout);
    if (overfills) {
      // Ends it pending: nothing was started, the nodes stay free.
      this.finish(job, "FAILED", { reason: overfills }, now);
      return undefined;
    }
    // A requeued job's steps go on from the numbers its earlier runs used.
    const nextStep = Math.max(row.nextStep, row.kind === "command" ? 1 : 0);
    const vars = patternVars(row, nodes[0]!);
    const output = row.output === null ? null : expandPattern(row.output, vars, row.cwd);
    const error = row.error === null ? null : expandPattern(row.error, vars, row.cwd);
    // An elastic job started below the size it asked for gets a limit that follows its size.
    const below = row.elastic && nodes.length < row.nodes;
    const limit = below ? rescaleLimit({ startTime: now, limit: row.timeLimit, original: row.timeLimit, at: now, ratio: limitRatio({ nodes: row.nodes }, nodes.length).ratio, grow: false }) : row.timeLimit;
    return { job, shares, nodes, layout, reason, nextStep, output, error, limit };
  }

  private recordStart(tx: LedgerTx, { job, shares, nodes, layout, reason, nextStep, output, error, limit }: ReadyStart, now: number): void {
    const row = job.row;
    if (limit !== row.timeLimit) {
      const why = `started on ${nodes.length} of the ${row.nodes} nodes asked for: ${limitRatio({ nodes: row.nodes }, nodes.length).source}`;
      this.store.recordLimitChange(row.id, now, row.timeLimit, limit, why);
      this.store.addEvent(row.id, now, "limit", `time limit ${formatDuration(row.timeLimit)} -> ${formatDuration(limit)}: ${why}`, { from: row.timeLimit, to: limit });
    }
    tx.started(job, shares, now, { nextStep, output, error, timeLimit: limit });
    this.store.addEvent(row.id, now, "started", `started on ${compressHostlist(nodes)} (${reason})`, { nodes, reason });
    if (row.kind === "command") this.store.insertStep(row.id, 0, row.argv ?? [], layout.reduce((a, b) => a + b, 0), nodes, now);
  }

  /** A recorded start, carried out: its nodes' agents (or its step root, or its `ebb alloc`) are told. */
  private launch({ job, nodes, layout }: ReadyStart, now: number): void {
    const row = job.row;
    this.effects.allocated?.(nodes);
    this.effects.started?.(job);

    if (row.kind === "alloc") {
      this.notifyLaunchers(job);
      return;
    }
    const refs = nodes.map((name) => ({ name, addr: this.state.nodes.get(name)!.row.addr }));
    const tasks = layout;
    const jobEnv = this.jobEnv(job);
    const start: JobStart = {
      id: row.id,
      user: row.user ?? undefined,
      kind: row.kind,
      name: row.name,
      argv: row.argv ?? undefined,
      script: row.script ?? undefined,
      args: row.args ?? undefined,
      env: row.env,
      cwd: row.cwd,
      output: row.output!,
      error: row.error ?? undefined,
      nodes: refs,
      tasks,
      jobEnv,
      sampleInterval: row.sampleInterval ?? this.config.sampleInterval,
      cred:
        row.kind === "command"
          ? signCredential(this.config.clusterKey, { jobId: row.id, stepId: 0, nodes, expires: now + CRED_LIFETIME_MS, ...this.step0Covers(job, jobEnv) })
          : undefined,
      elastic: row.kind === "command" ? this.elasticGrant(job, 0, tasks) : undefined,
      append: row.appendOutput || undefined,
      run: row.restarts,
    };
    if (this.hostsRoot(row)) {
      const error = this.effects.startStepRoot!(start);
      if (error) this.finish(job, "FAILED", { reason: error });
      return;
    }
    if (!this.effects.toAgent(nodes[0]!, { t: "job.start", job: start })) {
      this.finish(job, "NODE_FAIL", { reason: `could not reach node ${nodes[0]} to start the job` });
    }
  }

  /**
   * Whether the job's step root runs on the controller's host (an elastic command job, when this
   * controller hosts step roots) rather than in its first node's agent.
   */
  hostsRoot(row: JobRow): boolean {
    return row.kind === "command" && !!row.elastic && this.effects.startStepRoot !== undefined;
  }

  /**
   * The node whose loss ends the job whatever its kind (its batch script or its command's step
   * root runs there), if there is one: the first node of a batch job, and of a command job whose
   * root is not on the controller's host.
   */
  driverNode(job: JobRuntime): string | undefined {
    return job.row.kind === "alloc" || this.hostsRoot(job.row) ? undefined : job.nodes[0];
  }

  /** A step root process on the controller's host ended: a job it did not report the end of ends with it. */
  rootExited(jobId: number, code: number, signal: string | null): void {
    const job = this.state.jobs.get(jobId);
    if (!job || !this.hostsRoot(job.row) || job.row.state === "PENDING") return;
    this.exited(jobId, code === 0 ? 1 : code, `its step root on the controller's host ${signal ? `was killed by ${signal}` : `exited with code ${code}`} before it reported the job's end (see the controller's log)`);
  }

  /**
   * What step 0 of a command job is: its credential covers it, and an elastic one's joiners' too.
   * A root in the first node's agent has that node write the output file itself (roles/agent/jobs.ts),
   * so the file is covered too; a root on the controller's host writes it there, and no node does.
   */
  private step0Covers(job: JobRuntime, jobEnv: Record<string, string>): StepCovers {
    const r = job.row;
    const output = this.hostsRoot(r) ? undefined : outputDigest({ node: job.nodes[0]!, path: r.output!, error: r.error ?? undefined });
    const covers = { argv: argvDigest(r.argv!), env: envDigest(r.env), jobEnv: envDigest(jobEnv), cwd: r.cwd, output };
    if (r.elastic) this.elasticOf(job).covers = covers;
    return covers;
  }

  /** Environment every process of the job gets: ebb's variables and Slurm's names for them (../slurm-env.ts). */
  jobEnv(job: JobRuntime): Record<string, string> {
    const r = job.row;
    const array = r.arrayJobId !== null ? { jobId: r.arrayJobId, taskId: r.arrayTaskId!, ...this.store.arrayShape(r.arrayJobId) } : undefined;
    // Where it was submitted from, as sbatch said (a job submitted with --chdir runs elsewhere); else its directory.
    const submitDir = r.env.SLURM_SUBMIT_DIR ?? r.cwd;
    return {
      ...inheritedJobVars(r.env),
      ...(array
        ? {
            EBB_ARRAY_JOB_ID: String(array.jobId),
            EBB_ARRAY_TASK_ID: String(array.taskId),
            EBB_ARRAY_TASK_COUNT: String(array.count),
            EBB_ARRAY_TASK_MIN: String(array.min),
            EBB_ARRAY_TASK_MAX: String(array.max),
          }
        : {}),
      EBB_JOB_ID: String(r.id),
      EBB_JOB_NAME: r.name,
      EBB_JOB_NODELIST: job.nodes.join(","),
      EBB_JOB_NUM_NODES: String(job.nodes.length),
      EBB_SUBMIT_DIR: submitDir,
      EBB_TOKEN: jobToken(this.config.clusterKey, r.id),
      ...(r.tasks ? { EBB_NTASKS: String(r.tasks) } : {}),
      ...slurmJobVars({
        id: r.id,
        name: r.name,
        nodes: job.nodes,
        tasks: this.layoutOn(r, job.shares, taskCount(job.nodes.length, r.tasks, r.tasksPerNode)),
        tasksGiven: !!(r.tasks || r.tasksPerNode),
        tasksPerNode: r.tasksPerNode,
        cpus: job.shares.map((s) => s.cores.length),
        request: r.resources,
        submitDir,
        cluster: this.config.clusterName,
        partition: r.partition ?? DEFAULT_PARTITION,
        restarts: r.restarts,
        array,
        dependency: r.dependency?.text,
      }),
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
    return { minNodes: job.row.minNodes, maxNodes: job.row.maxNodes, sampleInterval: job.row.sampleInterval ?? this.config.sampleInterval, downAfterMs: this.config.nodeDownMs };
  }

  createStep(jobId: number, req: StepCreate, now = Date.now(), caller?: StepCaller): StepGrant | Promise<StepGrant> {
    const job = this.runningJob(jobId);
    if (req.newNodes) return this.createStepOnNewNodes(job, req);
    const have = job.nodes.length;
    // The elastic step of an elastic job runs on all of its nodes: that is what resizes change.
    const wholeJob = job.row.elastic && job.elastic?.stepId === undefined;
    const named = new Set(req.nodelist ?? []);
    const held = new Set(job.nodes);
    const strangers = [...named].filter((name) => !held.has(name));
    if (strangers.length > 0) throw badRequest(`${strangers.join(", ")} ${strangers.length === 1 ? "is" : "are"} not among job ${jobId}'s nodes (${compressHostlist(job.nodes)})`, "nodelist");
    if (wholeJob && named.size > 0 && named.size < have) throw badRequest(`the elastic step of job ${jobId} runs on all of its nodes; it cannot be limited to ${compressHostlist([...named])}`, "nodelist");
    let n = wholeJob ? have : req.nodes ?? Math.max(named.size, req.tasks ? Math.min(have, req.tasks) : named.size > 0 ? named.size : have);
    if (n > have) throw badRequest(`the step asks for ${n} nodes but job ${jobId} has ${have}`, "nodes");
    const tasks = taskCount(n, req.tasks, req.tasksPerNode);
    // plane=N: the nodes its blocks of N reach, as Slurm's step layout; a node count that leaves some without a block is refused.
    const plane = req.plane && !req.tasksPerNode && !wholeJob ? req.plane : undefined;
    if (plane && Math.ceil(tasks / plane) < n) {
      if (req.nodes !== undefined || named.size > Math.ceil(tasks / plane)) throw badRequest(`plane=${plane} puts ${tasks} tasks on ${Math.ceil(tasks / plane)} nodes, not the ${n} asked for`, "plane");
      n = Math.ceil(tasks / plane);
    }
    if (tasks < n) throw badRequest(`${tasks} tasks cannot use ${n} nodes`, "tasks");
    if (req.tasksPerNode && tasks > n * req.tasksPerNode) throw badRequest(`${tasks} tasks do not fit on ${n} nodes at ${req.tasksPerNode} per node`, "tasks");
    if (req.exact && !wholeJob) {
      const ask = { nodes: n, tasks, tasksPerNode: req.tasksPerNode, plane, cpusPerTask: req.cpusPerTask ?? job.row.resources?.cpusPerTask ?? 1, named: job.nodes.flatMap((name, i) => (named.has(name) ? [i] : [])) };
      return this.createExactStep(job, req, ask, caller);
    }
    // The nodes it names, then the job's first others, in the job's order (as srun -w takes them).
    const picked = job.nodes.flatMap((name, i) => (named.has(name) ? [i] : []));
    for (let i = 0; picked.length < n; i++) if (!named.has(job.nodes[i]!)) picked.push(i);
    picked.sort((a, b) => a - b);
    const nodes = picked.map((i) => job.nodes[i]!);
    // A step has only the job's share of each node: its tasks fit the job's cores there (unless overcommitted).
    const shares = picked.map((i) => job.shares[i]!);
    const layout = plane && !req.tasksPerNode ? planeLayout(n, tasks, plane) : this.layoutOn(job.row, shares, tasks, req.tasksPerNode);
    const over = req.overcommit ? undefined : this.overfilled(job.row, shares, layout, req.tasksPerNode);
    if (over) throw badRequest(`${tasks} tasks on ${n} nodes put ${over}; ask for fewer tasks, or allow it with --overcommit (overcommit: true)`, "tasks");
    return this.recordStep(job, req, nodes, layout, wholeJob, now);
  }

  /** A step of `job` on `nodes` with `layout` tasks per node: its row, its id, its grant. */
  private recordStep(job: JobRuntime, req: StepCreate, nodes: string[], layout: number[], wholeJob: boolean, now: number): StepGrant {
    const stepId = job.row.nextStep;
    const tasks = layout.reduce((a, b) => a + b, 0);
    const crowded = ranksPerNodeRefusal(layout.reduce((a, b) => Math.max(a, b), 0));
    if (crowded) throw badRequest(`${crowded}; ask for more nodes or fewer tasks`, "tasks");
    this.ledger.commit((tx) => {
      tx.steps(job, stepId + 1);
      this.store.insertStep(job.row.id, stepId, req.argv, tasks, nodes, now, req.name);
    });
    const grant = this.grant(job, stepId, nodes, layout, now, { argv: argvDigest(req.argv), env: req.envDigest, cwd: req.cwd });
    if (wholeJob) this.elasticOf(job).covers = grant.covers;
    return { ...grant.grant, elastic: wholeJob ? this.elasticGrant(job, stepId, layout) : undefined };
  }

  /**
   * An exact step (srun --exact): it holds its tasks' CPUs on the job's nodes with that many free
   * (sched/step-place.ts), or waits for them (a launcher: `caller` hears why, the grant comes when
   * a hold is released); over HTTP it is refused, 409 step_busy. One that could never fit the
   * job's CPUs is refused at once.
   */
  private createExactStep(job: JobRuntime, req: StepCreate, ask: ExactAsk, caller?: StepCaller): StepGrant | Promise<StepGrant> {
    const jobId = job.row.id;
    const cpus = job.shares.map((s) => s.cores.length);
    const perTask = ask.cpusPerTask > 1 ? ` of ${ask.cpusPerTask} CPUs` : "";
    if (!placeExact(cpus, ask))
      throw badRequest(`${ask.tasks} tasks${perTask} on ${ask.nodes} node${ask.nodes === 1 ? "" : "s"} never fit job ${jobId}'s CPUs (${job.shares.map((s) => `${s.cores.length} on ${s.node}`).join(", ")}), even with no other step running`, "tasks");
    const attempt = (): StepGrant | undefined => {
      const taken = job.shares.map((s) => this.stepCpus.heldCores(jobId, s.node));
      const place = placeExact(job.shares.map((s, i) => s.cores.length - taken[i]!.size), ask);
      if (!place) return undefined;
      const nodes = place.picked.map((i) => job.nodes[i]!);
      // Its own cores: the first of the job's there that no other exact step holds.
      const cores = place.picked.map((i, k) => job.shares[i]!.cores.filter((c) => !taken[i]!.has(c)).slice(0, place.cpus[k]));
      const grant = this.recordStep(job, req, nodes, place.layout, false, Date.now());
      this.stepCpus.hold(jobId, grant.stepId, caller?.owner, nodes, cores);
      return { ...grant, cores };
    };
    const now = attempt();
    if (now) return now;
    const held = job.shares.reduce((a, s) => a + this.stepCpus.held(jobId, s.node), 0);
    const { running, waiting } = this.stepCpus.counts(jobId);
    const busy = `job ${jobId}'s exact steps hold ${held} of its ${cpus.reduce((a, b) => a + b, 0)} CPUs (${running} running${waiting > 0 ? `, ${waiting} waiting before this one` : ""}); this step needs ${ask.tasks}${perTask ? ` tasks${perTask}` : ` CPU${ask.tasks === 1 ? "" : "s"}`}`;
    if (!caller) throw conflict("step_busy", `${busy}; retry when one of them ends`);
    return new Promise<StepGrant>((resolve, reject) => {
      if (!this.stepCpus.wait(jobId, { owner: caller.owner, tryGrant: attempt, resolve, reject }))
        return reject(new Refusal("too_many", "too_many_steps_waiting", `this connection has a step of job ${jobId} waiting for CPUs already; one at a time`));
      caller.waiting(`${busy}; it starts when one of them ends`);
    });
  }

  /** A step's grant, whose credential covers `partial` and the job environment the grant carries; and what it covers. */
  private grant(job: JobRuntime, stepId: number, nodes: string[], tasks: number[], now: number, partial: Omit<StepCovers, "jobEnv">): { grant: StepGrant; covers: StepCovers } {
    const jobId = job.row.id;
    const jobEnv = this.jobEnv(job);
    const covers = { ...partial, jobEnv: envDigest(jobEnv) };
    const grant: StepGrant = {
      jobId,
      stepId,
      nodes: nodes.map((name) => ({ name, addr: this.state.nodes.get(name)?.row.addr ?? "" })),
      tasks,
      jobNodes: job.nodes,
      cred: signCredential(this.config.clusterKey, { jobId, stepId, nodes, expires: now + CRED_LIFETIME_MS, ...covers }),
      jobEnv,
      sampleInterval: job.row.sampleInterval ?? this.config.sampleInterval,
    };
    return { grant, covers };
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
    this.ledger.commit((tx) => {
      tx.steps(job, stepId + 1);
      tx.allocated(job, nodes.map((n) => this.state.wholeShare(n)), now);
      this.store.insertStep(jobId, stepId, req.argv, tasks, nodes, now, req.name);
      this.store.addEvent(jobId, now, "grown", `grew by ${compressHostlist(nodes)} for step ${stepId} (spawn of ${tasks} processes)`, { nodes, stepId });
    });
    this.effects.allocated?.(nodes);
    job.spawnedSteps.set(stepId, nodes);
    // A spawn's processes run in the launch's environment and directory (its argv may be several
    // programs, MPMD, so only env and cwd are covered).
    return this.grant(job, stepId, nodes, layout, now, { env: req.envDigest, cwd: req.cwd }).grant;
  }

  stepEnded(jobId: number, stepId: number, exitCode: number, interrupted = false, now = Date.now()): void {
    this.store.finishStep(jobId, stepId, interrupted ? "CANCELLED" : exitCode === 0 ? "COMPLETED" : "FAILED", now, exitCode);
    this.stepCpus.release(jobId, stepId);
    const job = this.state.jobs.get(jobId);
    const spawned = job?.spawnedSteps.get(stepId);
    if (job && spawned) {
      job.spawnedSteps.delete(stepId);
      this.release(job, spawned, `step ${stepId} (spawned) ended`, now);
    }
  }

  /** Nodes a running job no longer holds (the ledger released them): whatever it left there is killed. */
  killOn(job: JobRuntime, nodes: readonly string[], why: string): void {
    for (const name of nodes) this.effects.toAgent(name, { t: "job.kill", jobId: job.row.id, signal: "SIGKILL", reason: why });
  }

  /** Give nodes of a running job back: they are killed clean and become free. */
  private release(job: JobRuntime, nodes: string[], why: string, now: number): void {
    this.ledger.commit((tx) => {
      tx.released(job, nodes, now);
      this.store.addEvent(job.row.id, now, "shrunk", `released ${compressHostlist(nodes)}: ${why}`, { nodes });
    });
    this.killOn(job, nodes, why);
    this.effects.schedule();
  }

  /** A job's row, active or not; undefined if it never existed or was purged. */
  row(id: number): JobRow | undefined {
    return this.state.jobs.get(id)?.row ?? this.store.getJob(id);
  }

  /** The jobs an id stands for: an array's id stands for all of its tasks, unless `task` says it names the one. */
  private targets(id: number, task = false): JobRow[] {
    const row = this.row(id);
    if (!row) throw notFound(`job ${id}`);
    return row.arrayJobId === id && !task ? this.store.arrayTasks(id) : [row];
  }

  /** Cancel a job, or every active task of an array; the ids cancelled. */
  cancel(id: number, opts: { task?: boolean; reason?: string } = {}): number[] {
    const targets = this.targets(id, opts.task);
    const active = targets.flatMap((r) => this.state.jobs.get(r.id) ?? []);
    if (active.length === 0) throw conflict("job_finished", `job ${id} already ended (${targets.at(-1)!.state})`);
    this.finishAll(active, "CANCELLED", { reason: opts.reason ?? "cancelled by user" });
    return active.map((j) => j.row.id);
  }

  /** scancel --signal: `signal` to the steps of a running job (or every running task of an array), its batch shell, or both; the ids signalled. */
  signal(id: number, signal: string, to: "steps" | "batch" | "full", opts: { task?: boolean } = {}, now = Date.now()): number[] {
    const running = this.targets(id, opts.task).flatMap((r) => {
      const job = this.state.jobs.get(r.id);
      return job && job.row.state !== "PENDING" && job.nodes.length > 0 ? [job] : [];
    });
    if (running.length === 0) throw conflict("job_not_running", `job ${id} is ${this.targets(id, opts.task).at(-1)!.state}; only a running job can be signalled`);
    // Recorded first, all in one write: a store that takes no writes (a full disk) refuses the request before any signal is sent.
    const what = `${signal} sent to ${to === "steps" ? "its steps" : to === "batch" ? "the batch shell" : "the batch shell and its steps"} (scancel --signal)`;
    this.ledger.commit(() => {
      for (const job of running) this.store.addEvent(job.row.id, now, "signal", what);
    });
    for (const job of running) {
      if (to !== "steps" && job.row.kind === "batch") this.effects.toAgent(job.nodes[0]!, { t: "job.signal", jobId: job.row.id, signal, batchOnly: true });
      if (to !== "batch") for (const node of job.nodes) this.effects.toAgent(node, { t: "job.signal", jobId: job.row.id, signal, batchOnly: false });
    }
    return running.map((j) => j.row.id);
  }

  /**
   * scontrol requeue: a running batch job (or every running batch task of an array) goes back to the
   * queue, what is left of its run killed, and starts again from its beginning
   * (SLURM_RESTART_COUNT one more), as a node failure does with --requeue; the ids requeued.
   */
  requeueByUser(id: number, opts: { task?: boolean } = {}, now = Date.now()): number[] {
    const targets = this.targets(id, opts.task);
    const running = targets.flatMap((r) => {
      const job = this.state.jobs.get(r.id);
      return job && job.row.kind === "batch" && job.row.state !== "PENDING" && job.nodes.length > 0 ? [job] : [];
    });
    if (running.length === 0) {
      const last = targets.at(-1)!;
      throw conflict("job_not_running", last.kind !== "batch" ? `job ${id} is not a batch job; only a batch job starts again from its script` : `job ${id} is ${last.state}; only a running batch job can be requeued`);
    }
    for (const job of running) this.requeue(job, "scontrol requeue", now);
    return running.map((j) => j.row.id);
  }

  /** Hold (or release) a pending job, or every pending task of an array; the ids changed. */
  setHeld(id: number, held: boolean, opts: { task?: boolean } = {}, now = Date.now()): number[] {
    const pending = this.targets(id, opts.task).flatMap((r) => {
      const job = this.state.jobs.get(r.id);
      return job && job.row.state === "PENDING" ? [job] : [];
    });
    if (pending.length === 0) {
      const row = this.targets(id, opts.task)[0]!;
      throw conflict("job_not_pending", `job ${id} is ${row.state}; only pending jobs can be ${held ? "held" : "released"}`);
    }
    const changed = pending.filter((j) => j.row.held !== held);
    this.ledger.commit((tx) => {
      tx.held(changed, held);
      for (const j of changed) this.store.addEvent(j.row.id, now, held ? "held" : "released", held ? "held by user" : "released by user");
    });
    this.effects.watch(changed, now);
    this.effects.schedule();
    return changed.map((j) => j.row.id);
  }

  /** salloc's end (POST /v1/jobs/:id/complete): a running batch job ends now with `exitCode`, as its command did; the ids ended. */
  complete(id: number, exitCode: number, now = Date.now()): number[] {
    if (!this.row(id)) throw notFound(`job ${id}`);
    const job = this.state.jobs.get(id);
    if (!job || job.row.kind !== "batch" || job.row.state === "PENDING" || job.nodes.length === 0)
      throw conflict("job_not_running", `job ${id} is ${job?.row.state ?? this.row(id)!.state}${job && job.row.kind !== "batch" ? ` (a ${job.row.kind} job)` : ""}; only a running batch job is completed`);
    this.finish(job, exitCode === 0 ? "COMPLETED" : "FAILED", { exitCode, reason: exitCode === 0 ? undefined : `exit code ${exitCode}`, cleanup: "now" }, now);
    return [id];
  }

  /**
   * scontrol update (PATCH /v1/jobs/:id): a pending job's name, time limit, dependency, node count
   * and partition, a running one's name and time limit, and a running batch job's smaller node count. Only an admin raises a limit, as only
   * Slurm's operators do; an array's tasks share their name and dependency, so they are refused
   * here. The fields changed.
   */
  update(id: number, req: JobUpdate, admin: boolean, now = Date.now()): string[] {
    if (!this.row(id)) throw notFound(`job ${id}`);
    const job = this.state.jobs.get(id);
    if (!job) throw conflict("job_finished", `job ${id} has ended; only a pending or running job can be updated`);
    const row = job.row;
    if (row.arrayJobId !== null) throw conflict("array_task", `job ${id} is a task of array ${row.arrayJobId}, whose tasks share their name, limit and dependency: ebb does not update one task`);
    const pending = row.state === "PENDING";
    const shrink = this.shrinkOf(job, req);
    const pendingOnly = (["dependency", "minNodes", "maxNodes", "partition"] as const).find((k) => req[k] !== undefined && !(shrink && (k === "minNodes" || k === "maxNodes")));
    if (pendingOnly && !pending) {
      const nodeCount = pendingOnly === "minNodes" || pendingOnly === "maxNodes";
      const why = nodeCount && row.elastic ? ": a running elastic job is resized within its --min-nodes/--max-nodes (POST /v1/jobs/ID/resize: ebb resize, or scontrol update NumNodes=N)" : "";
      throw conflict("job_not_pending", `job ${id} is ${row.state}; only a pending job's ${nodeCount ? "node count" : pendingOnly} can be changed${why}`);
    }
    const asks = { ...this.partitionUpdate(row, req.partition), ...(shrink ? shrink.fields : this.sizeUpdate(row, req)) };
    if (asks.minNodes !== undefined) this.checkNodesExist(row, asks.minNodes, asks.partition ?? row.partition);
    const limit = req.timeLimit === "UNLIMITED" ? MAX_TIME_LIMIT : req.timeLimit;
    if (limit !== undefined && limit > row.timeLimit && !admin)
      throw new Refusal("forbidden", "time_limit_raise", `only an admin raises a job's time limit (${formatDuration(row.timeLimit)} to ${formatDuration(limit)}); a user may lower it, as under Slurm`, "timeLimit");
    let dependency: JobRow["dependency"] | undefined;
    if (req.dependency !== undefined) {
      const spec = req.dependency === "" ? undefined : parseDependency(req.dependency);
      if (spec && "error" in spec) throw badRequest(`dependency: ${spec.error}`, "dependency");
      dependency = spec ? { ...this.resolveDependency(spec as DependencySpec), text: req.dependency, ...(row.dependency?.kill ? { kill: true as const } : {}) } : null;
    }
    const fields = { ...(req.name !== undefined ? { name: req.name } : {}), ...(dependency !== undefined ? { dependency } : {}), ...asks };
    const changed = [...Object.keys(fields), ...(limit !== undefined && limit !== row.timeLimit ? ["timeLimit"] : [])];
    const why = shrink && `scontrol update NumNodes=${shrink.fields.minNodes}`;
    this.ledger.commit((tx) => {
      if (Object.keys(fields).length > 0) tx.updated(job, fields);
      if (shrink) {
        tx.released(job, shrink.nodes, now);
        this.store.addEvent(id, now, "shrunk", `released ${compressHostlist(shrink.nodes)}: ${why}`, { nodes: shrink.nodes });
      }
      if (limit !== undefined && limit !== row.timeLimit) {
        this.store.recordLimitChange(id, now, row.timeLimit, limit, "scontrol update");
        tx.limit(job, limit);
      }
      const size = asks.minNodes === undefined ? "" : `nodes ${asks.minNodes}${asks.maxNodes! > asks.minNodes ? `-${asks.maxNodes}` : ""}`;
      this.store.addEvent(id, now, "updated", `updated: ${[req.name !== undefined ? `name ${req.name}` : "", limit !== undefined ? `time limit ${formatDuration(limit)}` : "", req.dependency !== undefined ? `dependency ${req.dependency || "none"}` : "", size, req.partition !== undefined ? `partition ${req.partition}` : ""].filter(Boolean).join(", ")}`);
    });
    if (shrink) this.killOn(job, shrink.nodes, why!);
    else if (Object.keys(asks).length > 0) this.state.asksAgain(job);
    this.effects.watch([job], now);
    this.effects.schedule();
    return changed;
  }

  /** scontrol update Partition=: the partition, which its owner must be allowed and which must hold the job's nodes. */
  private partitionUpdate(row: JobRow, name: string | undefined): Pick<JobRow, "partition"> | undefined {
    if (name === undefined) return undefined;
    const partition = this.partitionFor({ partition: name } as JobSubmit, { user: row.user });
    const held = this.nodesIn(partition);
    if (held < row.minNodes) throw badRequest(`partition ${name} has ${held} nodes, and job ${row.id} needs ${row.minNodes}`, "partition");
    return { partition: partition?.name ?? null };
  }

  /** How many nodes `partition` (none: the cluster) has, registered so far. */
  private nodesIn(partition: Partition | undefined): number {
    return [...this.state.nodes.values()].filter((n) => !partition || inPartition(partition, n.row.name)).length;
  }

  /** An updated node count the job's partition (or the cluster) cannot hold is refused, as at submission: it would wait forever. */
  private checkNodesExist(row: JobRow, minNodes: number, partitionName: string | null): void {
    const partition = partitionName === null ? undefined : this.partitionFor({ partition: partitionName } as JobSubmit, { user: row.user });
    const short = tooFewNodes(minNodes, this.nodesIn(partition), partition);
    if (short) throw badRequest(short, "minNodes");
  }

  /**
   * scontrol update NumNodes=N of a running batch job that is not elastic, N below its node count:
   * as Slurm's, it gives back its last nodes (what it runs there is killed), keeping its first,
   * where its script runs; its time limit and task count stay. Slurm's never grows a running job,
   * nor does ebb. Undefined when `req` changes no running rigid job's nodes.
   */
  private shrinkOf(job: JobRuntime, req: JobUpdate): { nodes: string[]; fields: Pick<JobRow, "minNodes" | "maxNodes" | "resources"> } | undefined {
    const row = job.row;
    if (row.state !== "RUNNING" || row.elastic || (req.minNodes === undefined && req.maxNodes === undefined)) return undefined;
    const to = req.minNodes ?? req.maxNodes!;
    const have = job.nodes.length;
    if ((req.maxNodes ?? to) !== to || to >= have)
      throw conflict("job_not_pending", `job ${row.id} is RUNNING on ${have} node${have === 1 ? "" : "s"}; a running job's NumNodes= only shrinks it (to fewer than ${have}), as Slurm's`);
    if (row.kind !== "batch") throw conflict("job_not_pending", `job ${row.id} runs one program on all of its nodes (${row.kind === "alloc" ? "an ebb run allocation" : "a command job"}); only a batch job gives nodes back while it runs`);
    // Nodes an MPI spawn added come after the job's own and go back when its step ends.
    if (job.spawnedSteps.size > 0) throw conflict("job_not_pending", `job ${row.id} holds nodes for the processes its steps spawned (steps ${[...job.spawnedSteps.keys()].join(", ")}); shrink it once they have ended`);
    const r = row.resources;
    return { nodes: job.nodes.slice(to), fields: { minNodes: to, maxNodes: to, resources: r && { ...r, nodes: to } } };
  }

  /**
   * scontrol update NumNodes=MIN[-MAX]: the job's node range, as Slurm's: MIN alone keeps the
   * maximum (and is refused above it, "Node count specification invalid"), and the job asks for MIN.
   */
  private sizeUpdate(row: JobRow, req: JobUpdate): Pick<JobRow, "nodes" | "minNodes" | "maxNodes" | "resources"> | undefined {
    if (req.minNodes === undefined && req.maxNodes === undefined) return undefined;
    if (row.elastic) throw conflict("elastic_job", `job ${row.id} is elastic: ebb resize changes its nodes once it runs`);
    const minNodes = req.minNodes ?? row.minNodes;
    const maxNodes = req.maxNodes ?? row.maxNodes;
    if (minNodes > maxNodes) throw badRequest(`node count ${minNodes} is above the job's maximum ${maxNodes} (give NumNodes=${minNodes}-${minNodes})`, "minNodes");
    if (row.tasks !== null && row.tasks < minNodes) throw badRequest(`${row.tasks} tasks cannot use ${minNodes} nodes`, "minNodes");
    if (row.nodelist && row.nodelist.length > maxNodes) throw badRequest(`the job's ${row.nodelist.length} listed nodes are more than ${maxNodes}`, "maxNodes");
    const r = row.resources;
    // The request placed on the new count: a job without -n runs a task (or --ntasks-per-node's count) on each node.
    const resources = r && { ...r, nodes: minNodes, tasks: row.tasks ?? minNodes * (r.tasksPerNode ?? 1), ...(row.kind === "batch" && r.tasksPerNode === undefined && !r.exclusive ? { fill: true } : {}) };
    return { nodes: minNodes, minNodes, maxNodes, resources };
  }

  /** Resolves once job `id` is no longer active, or after `ms`. */
  whenEnded(id: number, ms: number): Promise<void> {
    if (!this.state.jobs.has(id) || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.get(id)?.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      let set = this.waiters.get(id);
      if (!set) this.waiters.set(id, (set = new Set()));
      set.add(done);
    });
  }

  /**
   * The batch script or command of a job ended on its first node, or an `ebb run` released it.
   * A step that lost a node whose agent the controller has lost too ended because the node failed.
   * Returns the nodes sent a job.kill for it (for them the kill also acknowledges the exit);
   * `spared` (the reporting node, when its report said the job has nothing left there) gets none.
   */
  exited(id: number, exitCode: number, message?: string, lostNode?: string, now = Date.now(), run?: number, spared?: string): string[] {
    const e = this.exitEnd(id, exitCode, message, lostNode, run, spared);
    return e ? this.finish(e.job, e.state, e.opts, now) : [];
  }

  /** The end a job's exit makes (undefined: none, as for a run --requeue ended, its job started again since). */
  private exitEnd(id: number, exitCode: number, message?: string, lostNode?: string, run?: number, spared?: string): JobEnd | undefined {
    const job = this.state.jobs.get(id);
    if (!job || job.row.state === "PENDING" || (run !== undefined && run !== job.row.restarts)) return undefined;
    // A command job's step 0 is the job: its end is recorded in the job's final transaction.
    const step0 = job.row.kind === "command" ? exitCode : undefined;
    const node = lostNode ? this.state.nodes.get(lostNode) : undefined;
    if (node && (!node.session || node.row.status === "DOWN")) return { job, state: "NODE_FAIL", opts: { exitCode, step0, reason: `node ${lostNode} failed: ${message ?? "lost contact"}` } };
    return { job, state: exitCode === 0 ? "COMPLETED" : "FAILED", opts: { exitCode, step0, reason: exitCode === 0 ? undefined : message ?? `exit code ${exitCode}`, cleanup: "now", spared } };
  }

  /**
   * Agents' reports read in one event-loop turn (agents.ts), recorded in one transaction: a
   * commit appends every page it changed to the WAL, and a turn's ends and usage reports change
   * the same few pages. Each report is what `exited` or `usage` would make of it alone, in the
   * order given, and each ended job is cleaned up once all are committed. Reports that take a
   * path of their own (a job.exit naming a lost node, an OOM kill) are not for this: the caller
   * sends them one at a time. Returns, for each exit, the nodes sent a job.kill for it (`spared`:
   * the reporting node, whose report said the job has nothing left there, is sent none).
   */
  recordReports(reports: readonly ({ exit: { jobId: number; exitCode: number; message?: string; run?: number }; spared?: string } | { usage: { node: string; jobId: number; cpuSec: number; peakMemMiB: number } })[], now = Date.now()): string[][] {
    const ending: (JobEnd & { wasRunning: boolean; nodes: string[] })[] = [];
    const endings = new Map<number, (typeof ending)[number]>();
    const ends: (number | undefined)[] = [];
    // A one-node job's usage report followed by its exit is recorded with the end (ledger `ended`).
    // Where each job's last exit report is.
    const lastExit = new Map<number, number>();
    reports.forEach((r, i) => "exit" in r && lastExit.set(r.exit.jobId, i));
    const withExit = new Map<number, NodeUsageReport & { jobId: number }>();
    this.ledger.commit((tx) => {
      for (const [i, r] of reports.entries()) {
        if ("usage" in r) {
          const u = r.usage;
          const job = this.state.jobs.get(u.jobId);
          if (job?.row.state === "PENDING") continue;
          if ((lastExit.get(u.jobId) ?? -1) > i && !withExit.has(u.jobId) && job?.nodes.length === 1 && job.nodes[0] === u.node) withExit.set(u.jobId, u);
          else this.recordUsage(tx, u.node, u);
          continue;
        }
        const x = r.exit;
        const used = withExit.get(x.jobId);
        withExit.delete(x.jobId);
        // A job ends once (an exit sent again in the same turn ends nothing more).
        const e = endings.has(x.jobId) ? undefined : this.exitEnd(x.jobId, x.exitCode, x.message, undefined, x.run, r.spared);
        if (!e || !mayBecome(e.job.row.state, e.state)) {
          if (used) this.recordUsage(tx, used.node, used);
          ends.push(undefined);
          continue;
        }
        const end = { ...e, wasRunning: e.job.row.state !== "PENDING", nodes: [...e.job.nodes] };
        endings.set(x.jobId, end);
        ends.push(ending.push(end) - 1);
        this.recordEnd(tx, e.job, e.state, e.opts, now, used);
      }
    });
    const killed = ending.map((e) => this.afterEnd(e.job, e.wasRunning, e.nodes, e.state, e.opts, now));
    return ends.map((i) => (i === undefined ? [] : killed[i]!));
  }

  /** End an active job: record it, free its nodes, kill what is left of it. Returns the nodes sent a job.kill. */
  finish(job: JobRuntime, state: FinalState, opts: EndOptions, now = Date.now()): string[] {
    return this.end([job], state, opts, now)[0] ?? [];
  }

  /** `finish` for many jobs at once (an array cancelled): their ends in one transaction. */
  finishAll(jobs: readonly JobRuntime[], state: FinalState, opts: EndOptions, now = Date.now()): void {
    this.end(jobs, state, opts, now);
  }

  /**
   * The ends of `jobs` (those that may end so) in one transaction, then each one's clean-up; the
   * nodes each sent a job.kill. A running batch job submitted with --requeue that would end
   * NODE_FAIL goes back to the queue instead.
   */
  private end(jobs: readonly JobRuntime[], state: FinalState, opts: EndOptions, now: number): string[][] {
    if (state === "NODE_FAIL" && jobs.some((j) => this.requeues(j))) return jobs.map((j) => (this.requeues(j) ? this.requeue(j, opts.reason ?? "its node failed", now) : this.end([j], state, opts, now)[0] ?? []));
    const ending = jobs.filter((j) => mayBecome(j.row.state, state)).map((job) => ({ job, wasRunning: job.row.state !== "PENDING", nodes: [...job.nodes] }));
    if (ending.length === 0) return [];
    this.ledger.commit((tx) => {
      for (const { job } of ending) this.recordEnd(tx, job, state, opts, now);
    });
    return ending.map((e) => this.afterEnd(e.job, e.wasRunning, e.nodes, state, opts, now));
  }

  /** A node's usage report of a job, in the transaction `tx`; false if the job has no row to take it. */
  private recordUsage(tx: LedgerTx, node: string, r: { jobId: number; cpuSec: number; peakMemMiB: number }): boolean {
    const usage = this.store.recordNodeUsage(r.jobId, node, r.cpuSec, r.peakMemMiB);
    if (usage) tx.usage(r.jobId, usage);
    return usage !== undefined;
  }

  /** A job's end, in the transaction `tx`: its row (with `used`, a usage report of its node), its step 0's (a command job's), its event. */
  private recordEnd(tx: LedgerTx, job: JobRuntime, state: FinalState, opts: EndOptions, now: number, used?: NodeUsageReport): void {
    const id = job.row.id;
    // Step ids are taken from nextStep: a command job still at 1 has step 0 only, which its exit
    // finishes here (closing its steps as well wrote that row twice).
    const step0Only = opts.step0 !== undefined && job.row.kind === "command" && job.row.nextStep <= 1;
    tx.ended(job, state, now, opts.exitCode ?? null, opts.reason ?? null, step0Only, used);
    if (opts.step0 !== undefined) this.store.finishStep(id, 0, opts.step0 === 0 ? "COMPLETED" : "FAILED", now, opts.step0);
    this.store.addEvent(id, now, "ended", endMessage(state, opts), { state, exitCode: opts.exitCode ?? null });
  }

  /** A job's end, committed: launchers, waiters, and its nodes' clean-up. Returns the nodes sent a job.kill. */
  private afterEnd(job: JobRuntime, wasRunning: boolean, nodes: readonly string[], state: FinalState, opts: EndOptions, now: number): string[] {
    const row = job.row;
    const message = endMessage(state, opts);
    // The end is on disk: an `ebb run` waiting for it may go now, before the nodes are cleaned up.
    this.notifyLaunchers(job);
    this.effects.ended(job);
    this.stepCpus.jobEnded(row.id, () => conflict("job_finished", `job ${row.id} ${message} while the step waited for CPUs`));
    const waiting = this.waiters.get(row.id);
    this.waiters.delete(row.id);
    for (const w of waiting ?? []) w();
    if (job.orphanTimer) clearTimeout(job.orphanTimer);
    const killed = wasRunning ? this.killRun(job.row.id, opts.spared === undefined ? nodes : nodes.filter((n) => n !== opts.spared), message, (opts.cleanup ?? "graceful") === "graceful", now) : [];
    log.info(`job ${row.id} ${message}`, { job: row.id, exitCode: opts.exitCode });
    this.effects.schedule();
    return killed;
  }

  /**
   * Kills what is left of a job's run on `nodes` (those up): now, or gracefully (TERM, then KILL
   * after the kill wait to the nodes that have not said it is gone, COMPLETING meanwhile). A node
   * that said so may already run the job's next run (--requeue): the KILL is not for it.
   */
  private killRun(jobId: number, nodes: readonly string[], message: string, graceful: boolean, now: number): string[] {
    const killed: string[] = [];
    for (const name of nodes) {
      const node = this.state.nodes.get(name);
      if (!node || node.row.status === "DOWN") continue;
      if (graceful) node.completing.set(jobId, now + this.config.killWaitMs + 5000);
      if (this.effects.toAgent(name, { t: "job.kill", jobId, signal: graceful ? "SIGTERM" : "SIGKILL", reason: message, confirm: graceful || undefined })) killed.push(name);
    }
    if (graceful) {
      setTimeout(() => {
        for (const name of nodes) if (this.state.nodes.get(name)?.completing.has(jobId)) this.effects.toAgent(name, { t: "job.kill", jobId, signal: "SIGKILL", reason: message, confirm: true });
      }, this.config.killWaitMs).unref();
    }
    return killed;
  }

  /** Whether `job` goes back to the queue rather than end NODE_FAIL: a running batch job submitted with --requeue. */
  private requeues(job: JobRuntime): boolean {
    return job.row.requeue && job.row.kind === "batch" && job.row.state !== "PENDING";
  }

  /**
   * sbatch --requeue: the job's node failed, so what is left of this run is killed and the job
   * waits in the queue to start again from its beginning (SLURM_RESTART_COUNT one more). Returns
   * the nodes sent a job.kill.
   */
  private requeue(job: JobRuntime, reason: string, now: number): string[] {
    const nodes = [...job.nodes];
    const message = `requeued: ${reason}; it starts again from its beginning${reason === "scontrol requeue" ? "" : " (--requeue)"}`;
    this.ledger.commit((tx) => {
      tx.requeued(job, now);
      this.store.addEvent(job.row.id, now, "requeued", message);
    });
    this.notifyLaunchers(job);
    this.effects.ended(job);
    this.stepCpus.jobEnded(job.row.id, () => conflict("job_finished", `job ${job.row.id} ${message}; the step that waited for CPUs does not run`));
    const killed = this.killRun(job.row.id, nodes, message, true, now);
    log.info(`job ${job.row.id} ${message}`, { job: job.row.id });
    this.effects.watch([job], now);
    this.effects.schedule();
    return killed;
  }

  /**
   * What a job used on `node`, from its cgroup there each time its processes there were all gone
   * (the totals so far: the latest report of a node replaces the one before). The job's usage is
   * CPU seconds summed over its nodes and the most memory of one. An OOM kill ends an active job
   * OUT_OF_MEMORY; a job that has ended FAILED meanwhile (its script died of it) is recorded so.
   */
  usage(node: string, r: { jobId: number; cpuSec: number; peakMemMiB: number; oomKills: number }, now = Date.now()): void {
    const job = this.state.jobs.get(r.jobId);
    if (job?.row.state === "PENDING") return;
    const mem = r.oomKills > 0 ? this.memoryOn(r.jobId, node) : undefined;
    const oom = r.oomKills > 0 ? `a process went over the job's memory (${mem === undefined ? "" : `${mem} MiB `}on ${node}) and was killed` : undefined;
    // An ended job's row is read only to relabel it (the usual report, after the job's end, needs
    // none: reading it, its environment included, was most of a report's cost).
    const ended = oom !== undefined && !job ? this.store.getJob(r.jobId) : undefined;
    const relabel = ended?.state === "FAILED";
    const recorded = this.ledger.commit((tx) => {
      if (!this.recordUsage(tx, node, r)) return false;
      if (relabel) {
        tx.outOfMemory(r.jobId, oom!);
        this.store.addEvent(r.jobId, now, "ended", `out_of_memory: ${oom} (it had ended failed: ${ended!.reason ?? `exit code ${ended!.exitCode}`})`, { state: "OUT_OF_MEMORY", exitCode: ended!.exitCode });
      }
      return true;
    });
    if (!recorded) return;
    if (relabel) log.info(`job ${r.jobId} out_of_memory: ${oom}`, { job: r.jobId });
    if (oom && job) this.finish(job, "OUT_OF_MEMORY", { reason: oom }, now);
  }

  /** MiB job `jobId` holds (or last held) on `node`. */
  private memoryOn(jobId: number, node: string): number | undefined {
    const live = this.state.jobs.get(jobId)?.shares.find((s) => s.node === node);
    if (live) return live.memMiB;
    return this.store.allocationsOf(jobId).findLast((a) => a.node === node)?.memMib ?? undefined;
  }

  /** An agent says a killed job has no processes left on its node. */
  cleaned(node: string, jobId: number): void {
    const n = this.state.nodes.get(node);
    if (n?.completing.delete(jobId)) this.effects.schedule();
  }

  /** Jobs past their time limit end TIMEOUT; those with a --signal get it when its time before the limit comes. */
  enforceTimeLimits(now = Date.now()): void {
    for (const job of [...this.state.jobs.values()]) {
      const { startTime, timeLimit, signal } = job.row;
      if (job.row.state === "PENDING" || startTime === null) continue;
      if (now >= startTime + timeLimit * 1000) this.finish(job, "TIMEOUT", { reason: `time limit of ${timeLimit} s reached` }, now);
      else if (signal && !job.signalled && now >= startTime + (timeLimit - signal.seconds) * 1000) this.sendSignal(job, signal, now);
    }
  }

  /** sbatch --signal: to the batch shell (on the first node), or to the processes of the job's steps (on every node). */
  private sendSignal(job: JobRuntime, s: JobSignal, now: number): void {
    job.signalled = true;
    const nodes = s.batchOnly ? job.nodes.slice(0, 1) : job.nodes;
    for (const node of nodes) this.effects.toAgent(node, { t: "job.signal", jobId: job.row.id, signal: s.signal, batchOnly: s.batchOnly });
    this.store.addEvent(job.row.id, now, "signal", `${s.signal} sent to ${s.batchOnly ? "the batch shell" : "its steps"}, ${s.seconds} s before the time limit (--signal)`);
  }

  /** Job `jobId` lost node `name`. */
  nodeFailed(jobId: number, name: string, reason: string): void {
    const job = this.state.jobs.get(jobId);
    if (job?.nodes.includes(name)) this.finish(job, "NODE_FAIL", { reason: `node ${name} ${reason}` });
  }

  notifyLaunchers(job: JobRuntime): void {
    const msg: ControllerToLauncher = { t: "job.state", jobId: job.row.id, state: job.row.state, reason: job.row.reason ?? job.waitReason, nodes: job.nodes };
    for (const l of job.launchers) l.send(msg);
  }

  /**
   * An allocation whose `ebb run` is gone (and does not come back) is cancelled; a command job
   * whose step root on the controller's host is gone (it did not reconnect after a restart) fails.
   */
  watchOrphan(job: JobRuntime): void {
    const root = this.hostsRoot(job.row) && job.row.state !== "PENDING";
    if ((job.row.kind !== "alloc" && !root) || job.launchers.size > 0 || job.orphanTimer) return;
    job.orphanTimer = setTimeout(() => {
      job.orphanTimer = undefined;
      if (job.launchers.size > 0 || !this.state.jobs.has(job.row.id)) return;
      try {
        if (root) this.finish(job, "FAILED", { reason: "its step root on the controller's host went away" });
        else this.finish(job, "CANCELLED", { reason: "its ebb run launcher went away" });
      } catch (e) {
        // The store takes no writes now: the job waits one more grace period.
        if (!(e instanceof StoreUnavailable)) throw e;
        this.watchOrphan(job);
      }
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

  /** A launcher connection closed: its exact steps' CPUs and its waiting steps go. */
  launcherClosed(session: LauncherSession): void {
    this.stepCpus.closed(session);
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

function withoutKeys(env: Record<string, string>, keys: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !keys.includes(k)));
}

/** A start the scheduler planned: the job, its shares of nodes in rank order (with its tasks on each, if placed), and why. */
export interface StartOrder {
  job: JobRuntime;
  placed: { shares: readonly NodeShare[]; tasks?: readonly number[] };
  reason: string;
}

/** A start worked out (`Jobs.startable`): what it records and what it launches. */
interface ReadyStart {
  job: JobRuntime;
  shares: readonly NodeShare[];
  nodes: string[];
  layout: number[];
  reason: string;
  nextStep: number;
  output: string | null;
  error: string | null;
  limit: number;
}
