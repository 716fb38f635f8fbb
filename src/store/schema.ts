/**
 * The controller's durable state. Times are epoch milliseconds; JSON columns hold arrays/records.
 * Node "ALLOCATED" is not stored: it is derived from open rows of job_nodes.
 */
import { sql } from "drizzle-orm";
import { sqliteTable, integer, real, text, index, primaryKey, blob } from "drizzle-orm/sqlite-core";
import { JOB_KINDS, type JobState } from "../domain/job.ts";
import type { Dependency, JobOverrides, JobSignal } from "../domain/job-options.ts";
import type { ResourceRequest } from "../domain/resources.ts";

export const nodes = sqliteTable("nodes", {
  name: text("name").primaryKey(),
  cpus: integer("cpus").notNull(),
  memoryMb: integer("memory_mb").notNull(),
  /** GPUs by index, each with its type or null (the agent's hello). */
  gpus: text("gpus", { mode: "json" }).$type<(string | null)[]>().notNull().default([]),
  /** Node features, for jobs' --constraint. */
  features: text("features", { mode: "json" }).$type<string[]>().notNull().default([]),
  addr: text("addr").notNull(),
  /** UP or DOWN; a node that has not re-registered since a controller restart is still UP here. */
  status: text("status", { enum: ["UP", "DOWN"] }).notNull(),
  reason: text("reason"),
  /** Why the node is drained (it takes no new work; `ebb drain`); null when it is not. */
  drain: text("drain"),
  /** Since when its owner wants it back (`ebb drain --owner`: host state owner until `ebb resume`); null when not. */
  ownerSince: integer("owner_since"),
  registeredAt: integer("registered_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

export const jobs = sqliteTable(
  "jobs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    /** batch: a script on the first node; command: argv launched as a step; alloc: held by an `ebb run` launcher. */
    kind: text("kind", { enum: JOB_KINDS }).notNull(),
    state: text("state").$type<JobState>().notNull(),
    argv: text("argv", { mode: "json" }).$type<string[]>(),
    script: text("script"),
    /** A batch script's arguments (`sbatch script.sh ARG...`: its $1 $2 ...); null: none. */
    args: text("args", { mode: "json" }).$type<string[]>(),
    nodes: integer("nodes").notNull(),
    minNodes: integer("min_nodes").notNull(),
    maxNodes: integer("max_nodes").notNull(),
    elastic: integer("elastic", { mode: "boolean" }).notNull().default(false),
    tasks: integer("tasks"),
    tasksPerNode: integer("tasks_per_node"),
    /** More tasks than the nodes have CPUs is allowed (--overcommit): checked at submit and again on the nodes the job gets. */
    overcommit: integer("overcommit", { mode: "boolean" }).notNull().default(false),
    timeLimit: integer("time_limit").notNull(),
    env: text("env", { mode: "json" }).$type<Record<string, string>>().notNull(),
    cwd: text("cwd").notNull(),
    output: text("output"),
    submitTime: integer("submit_time").notNull(),
    startTime: integer("start_time"),
    endTime: integer("end_time"),
    exitCode: integer("exit_code"),
    reason: text("reason"),
    nextStep: integer("next_step").notNull().default(0),
    /** Seconds between timing samples of an elastic job's ranks. */
    sampleInterval: real("sample_interval"),
    /** The job's own elastic-scheduler settings (thresholds, window, settle, payoff), within admin limits. */
    elasticSettings: text("elastic_settings", { mode: "json" }).$type<JobOverrides>(),
    /** Array tasks: the array's job id (its first task's), the task's index, the array's `%N` limit. */
    arrayJobId: integer("array_job_id"),
    arrayTaskId: integer("array_task_id"),
    arrayLimit: integer("array_limit"),
    /** Held by a user: not scheduled until released. */
    held: integer("held", { mode: "boolean" }).notNull().default(false),
    /** The dependency as given (`text`) and with every job resolved to its id. */
    dependency: text("dependency", { mode: "json" }).$type<Dependency & { text: string }>(),
    /** Not started before this time (epoch ms). */
    beginTime: integer("begin_time"),
    /** Node names the job may not use / must use. */
    exclude: text("exclude", { mode: "json" }).$type<string[]>(),
    nodelist: text("nodelist", { mode: "json" }).$type<string[]>(),
    /** The node counts the job can run at (sorted; `--sizes square` resolved against its range); null: any. */
    sizes: text("sizes", { mode: "json" }).$type<number[]>(),
    /** What a running EPOP program last reported (structure, phase, iteration, bound, rate origin), so a controller restart keeps it. */
    program: text("program", { mode: "json" }).$type<Record<string, unknown>>(),
    /** Where stderr goes, if not with stdout (a pattern until the job starts, like output). */
    error: text("error"),
    /** Who submitted the job (the API token's owner, or the user of the job that submitted it). */
    user: text("user"),
    /** The job whose token submitted this one. */
    submittedBy: integer("submitted_by"),
    /** What it asks of each node (cores, memory, GPUs); null: whole nodes (jobs before resources, the simulator's whole-node mode). */
    resources: text("resources", { mode: "json" }).$type<ResourceRequest>(),
    /** What it used, from its cgroups once its processes were gone: CPU seconds (all nodes), peak memory (the most on one node). */
    usage: text("usage", { mode: "json" }).$type<JobUsage>(),
    /** The partition it runs in (its nodes only; null: no partitions configured when it was submitted). */
    partition: text("partition"),
    /** sbatch --signal: this signal, this many seconds before the time limit, to the batch shell only or to the steps. */
    signal: text("signal", { mode: "json" }).$type<JobSignal>(),
    /** sbatch --requeue: a job whose node fails goes back to the queue instead of ending NODE_FAIL. */
    requeue: integer("requeue", { mode: "boolean" }).notNull().default(false),
    /** How many times the job went back to the queue (SLURM_RESTART_COUNT). */
    restarts: integer("restarts").notNull().default(0),
    /** sbatch --open-mode=append: the output and error files are appended to, not truncated. */
    appendOutput: integer("append_output", { mode: "boolean" }).notNull().default(false),
  },
  // jobs_array holds array tasks only, jobs_end ended jobs only (what their lookups look for): a job
  // that is not a task costs jobs_array nothing, a pending job jobs_end nothing.
  (t) => [index("jobs_state").on(t.state), index("jobs_array").on(t.arrayJobId).where(sql`${t.arrayJobId} IS NOT NULL`), index("jobs_end").on(t.endTime).where(sql`${t.endTime} IS NOT NULL`)],
);

/**
 * A job's script and environment, written once when it is submitted and never updated: kept out
 * of its `jobs` row, which is rewritten whole on each update (start, end, usage), overflow pages
 * and all (a 4.6 KB environment made every update write ~6 more KiB). A job whose row has neither
 * (an array's task, a job submitted before this table) has no row here.
 */
export const jobTexts = sqliteTable("job_texts", {
  jobId: integer("job_id").primaryKey(),
  script: text("script"),
  env: text("env", { mode: "json" }).$type<Record<string, string>>().notNull(),
  /**
   * Script and environment deflated (JSON `{script, env}`), when that is smaller by a page or
   * more: then `script` is null and `env` {}. Null: they are in their columns (and in rows from
   * before this column).
   */
  packed: blob("packed", { mode: "buffer" }),
});

/**
 * One row per job array (its id is the array's, its first task's): what all of its tasks share,
 * stored once. Its tasks' rows leave argv, script, args, env, exclude, nodelist, sizes, dependency and
 * elasticSettings empty; JobStore reads them from here (an array submitted before this table
 * has no row, and its tasks keep their own copies).
 */
export const jobArrays = sqliteTable("job_arrays", {
  id: integer("id").primaryKey(),
  /** The task ids, compressed as squeue shows them ("1-3,7"), with "%N" if at most N run at once. */
  spec: text("spec").notNull(),
  tasks: integer("tasks").notNull(),
  firstTask: integer("first_task").notNull(),
  lastTask: integer("last_task").notNull(),
  /** The step of the spec's first range ("1-9:2": 2; 1 without one), as Slurm's SLURM_ARRAY_TASK_STEP. */
  step: integer("step").notNull().default(1),
  argv: text("argv", { mode: "json" }).$type<string[]>(),
  script: text("script"),
  args: text("args", { mode: "json" }).$type<string[]>(),
  env: text("env", { mode: "json" }).$type<Record<string, string>>().notNull(),
  exclude: text("exclude", { mode: "json" }).$type<string[]>(),
  nodelist: text("nodelist", { mode: "json" }).$type<string[]>(),
  sizes: text("sizes", { mode: "json" }).$type<number[]>(),
  dependency: text("dependency", { mode: "json" }).$type<Dependency & { text: string }>(),
  elasticSettings: text("elastic_settings", { mode: "json" }).$type<JobOverrides>(),
});

/** What a job used: CPU seconds over all its nodes, the most memory it used on one (the agents' `job.usage` reports). */
export interface JobUsage {
  cpuSec: number;
  peakMemMiB: number;
}

/**
 * Allocation history: one row per (job, node) holding, with the job's share of the node (its
 * cores as "0-3,8", memory, GPU indices as "0,1") and what it used there; until is null while
 * held. Rows from before shares (cores null) held the whole node.
 */
export const jobNodes = sqliteTable(
  "job_nodes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    jobId: integer("job_id").notNull(),
    node: text("node").notNull(),
    position: integer("position").notNull(),
    since: integer("since").notNull(),
    until: integer("until"),
    cores: text("cores"),
    memMib: integer("mem_mib"),
    gpus: text("gpus"),
    /** What the job used there, as the node's agent last reported it (its cgroup's totals so far). */
    cpuSec: real("cpu_sec"),
    peakMemMib: real("peak_mem_mib"),
  },
  // job_nodes_open holds the open rows only, by job (a controller's start reads them back so): a
  // row enters it when opened and leaves it when closed, without an entry by end time to write.
  (t) => [index("job_nodes_job").on(t.jobId), index("job_nodes_open").on(t.jobId).where(sql`${t.until} IS NULL`)],
);

export const jobEvents = sqliteTable(
  "job_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    jobId: integer("job_id").notNull(),
    time: integer("time").notNull(),
    kind: text("kind").notNull(),
    message: text("message").notNull(),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>(),
  },
  (t) => [index("job_events_job").on(t.jobId)],
);

export const steps = sqliteTable(
  "steps",
  {
    jobId: integer("job_id").notNull(),
    stepId: integer("step_id").notNull(),
    argv: text("argv", { mode: "json" }).$type<string[]>().notNull(),
    tasks: integer("tasks").notNull(),
    nodes: text("nodes", { mode: "json" }).$type<string[]>().notNull(),
    state: text("state").notNull(),
    startTime: integer("start_time").notNull(),
    endTime: integer("end_time"),
    exitCode: integer("exit_code"),
    /** srun -J: the step's name (sacct's JobName of its line); null: its program's. */
    name: text("name"),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.stepId] })],
);

/** One resize of an elastic job: what changed, how it ended, and when each protocol step happened. */
export const adaptations = sqliteTable(
  "adaptations",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    jobId: integer("job_id").notNull(),
    stepId: integer("step_id"),
    fromNodes: integer("from_nodes").notNull(),
    toNodes: integer("to_nodes").notNull(),
    fromRanks: integer("from_ranks").notNull(),
    toRanks: integer("to_ranks").notNull(),
    added: text("added", { mode: "json" }).$type<string[]>().notNull(),
    removed: text("removed", { mode: "json" }).$type<string[]>().notNull(),
    /** ADAPTING, COMMITTED or FAILED. */
    state: text("state").notNull(),
    /** Who asked and why (a user, or a scheduler rule with its numbers). */
    reason: text("reason").notNull(),
    message: text("message"),
    requestedAt: integer("requested_at").notNull(),
    endedAt: integer("ended_at"),
    /** Epoch ms of each protocol step reached: realloc, spawned, ready, notified, agreed, committed, released (checkpoint-restart: written, exited too). */
    times: text("times", { mode: "json" }).$type<Record<string, number>>().notNull(),
    /** What the job's time limit left is multiplied by when it commits (sched/limits.ts), and from what. */
    limitRatio: real("limit_ratio"),
    limitSource: text("limit_source"),
    /** Checkpoint-restart: the step the world restarts in, once granted (the elastic step if it commits). */
    restartStep: integer("restart_step"),
  },
  (t) => [index("adaptations_job").on(t.jobId)],
);

/** Every change of a job's time limit (seconds from its start): when, from, to, and why. */
export const limitChanges = sqliteTable(
  "limit_changes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    jobId: integer("job_id").notNull(),
    time: integer("time").notNull(),
    fromLimit: integer("from_limit").notNull(),
    toLimit: integer("to_limit").notNull(),
    reason: text("reason").notNull(),
  },
  (t) => [index("limit_changes_job").on(t.jobId)],
);

/**
 * Scheduling plans (sched/plan.ts), one row per pass that planned anything: when, under which
 * policy, and its reservations. Its items are in `plan_items`; the row and its items are written
 * in one transaction before any item is carried out.
 */
export const plans = sqliteTable(
  "plans",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    time: integer("time").notNull(),
    policy: text("policy").notNull(),
    reservations: text("reservations", { mode: "json" }).$type<unknown[]>().notNull(),
  },
  (t) => [index("plans_time").on(t.time)],
);

/**
 * One item of a plan: a spawn grant, a start or a resize of one job, with its reason and what
 * became of it. `accepted`: passed the applier's re-check, not carried out yet; `done`: carried
 * out, set in the same transaction as the item's own state change (the job's start, the
 * adaptation row, the spawned step); `rejected`: the re-check refused it; `failed`: carrying it out
 * was refused; `abandoned`: the controller stopped between the plan's commit and the item (set when
 * it starts again). `outcome` says why for the last three.
 */
export const planItems = sqliteTable(
  "plan_items",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    planId: integer("plan_id").notNull(),
    jobId: integer("job_id").notNull(),
    kind: text("kind", { enum: ["spawn", "start", "resize"] }).notNull(),
    status: text("status", { enum: ["accepted", "done", "rejected", "failed", "abandoned", "declined"] }).notNull(),
    reason: text("reason").notNull(),
    outcome: text("outcome"),
    /** The item as planned: nodes (spawn, start), or from/to/rule/added/removed/remap/limit (resize). */
    detail: text("detail", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  },
  // Only the accepted items are looked up by status (a restart abandons them): each is in the index from its plan to its outcome.
  (t) => [index("plan_items_plan").on(t.planId), index("plan_items_job").on(t.jobId), index("plan_items_status").on(t.status).where(sql`${t.status} = 'accepted'`)],
);

/** Timing samples of elastic jobs: node-local sums of iteration and communication time. */
export const perfSamples = sqliteTable(
  "perf_samples",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    jobId: integer("job_id").notNull(),
    time: integer("time").notNull(),
    node: text("node").notNull(),
    ranks: integer("ranks").notNull(),
    iterations: integer("iterations").notNull(),
    loopNs: real("loop_ns").notNull(),
    commNs: real("comm_ns").notNull(),
  },
  (t) => [index("perf_samples_job").on(t.jobId, t.time)],
);

/** Per-user API tokens (`ebb token create`): only a SHA-256 of each is kept. */
export const userTokens = sqliteTable("user_tokens", {
  /** Hex SHA-256 of the token. */
  hash: text("hash").primaryKey(),
  user: text("user").notNull(),
  /** An admin's token acts on every job, like the cluster's API token. */
  admin: integer("admin", { mode: "boolean" }).notNull().default(false),
  createdAt: integer("created_at").notNull(),
});

/**
 * Jobs' CFG monitoring state (src/cfg, roles/controller/cfg.ts): the newest CFG of each step that
 * makes up the job's, the merged per-loop history and the MTCT samples, as one JSON document per
 * job (validated by the controller when it reads it back after a restart).
 */
export const jobCfgs = sqliteTable("job_cfgs", {
  jobId: integer("job_id").primaryKey(),
  data: text("data", { mode: "json" }).$type<unknown>().notNull(),
  updatedAt: integer("updated_at").notNull(),
});
