/** Request and response bodies of the HTTP API. The OpenAPI document is generated from these. */
import { z } from "zod";
import { parseDuration } from "../util/time.ts";
import { ElasticSettings, SAMPLE_INTERVAL } from "./elastic-settings.ts";
import { parseArraySpec } from "../domain/array.ts";
import { parseDependency } from "../domain/dependency.ts";
import { JOB_KINDS, JOB_STATES } from "../domain/job.ts";
import { parseMemory } from "../domain/resources.ts";
import { StepCredential } from "../proto/common.ts";

/** C0 control bytes and DEL, tab, newline and carriage return aside (they have uses in arguments and values). */
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
/** Every control byte: names and paths have no use for any. */
const ANY_CONTROL = /[\x00-\x1f\x7f]/;
const controlMessage = (s: string, re: RegExp) => {
  const m = re.exec(s);
  return m ? `contains control byte 0x${m[0].charCodeAt(0).toString(16).padStart(2, "0")} at offset ${m.index}` : undefined;
};
/** A string that may hold tabs and newlines but no NUL or other control byte (argv, environment values, scripts). */
const Text = (max: number) => z.string().max(max).refine((s) => !CONTROL.test(s), { error: (i) => controlMessage(i.input as string, CONTROL) ?? "contains a control byte" });
/** A name or path: no control byte at all. */
const Plain = (max: number) => z.string().max(max).refine((s) => !ANY_CONTROL.test(s), { error: (i) => controlMessage(i.input as string, ANY_CONTROL) ?? "contains a control byte" });

/** What one job's environment and argv may hold in all (Linux lets a program start with about 2 MiB of both). */
export const MAX_ENV_BYTES = 1 << 20;
export const MAX_ENV_VARS = 4096;
export const MAX_ARGV_BYTES = 1 << 20;
export const MAX_ARGS = 4096;
export const MAX_NAME = 200;
/** The longest user name a job listing filters by. */
export const MAX_USER = 200;
const bytesOf = (strings: Iterable<string>) => {
  let n = 0;
  for (const s of strings) n += Buffer.byteLength(s) + 1;
  return n;
};

/** A program and its arguments: at most MAX_ARGS of them and MAX_ARGV_BYTES in all. */
const Argv = z.lazy(() =>
  z
    .array(Text(65536))
    .min(1, "must name a program")
    .max(MAX_ARGS)
    .refine((a) => a[0] !== "", "the program's name is empty")
    .refine((a) => bytesOf(a) <= MAX_ARGV_BYTES, { error: (i) => `is ${bytesOf(i.input as string[])} bytes in all, over the ${MAX_ARGV_BYTES} a job may pass` }),
);

const NodeName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "node names are letters, digits, '.', '_', '-'");

export const JobState = z.lazy(() => z.enum(JOB_STATES));
export const JobKind = z.lazy(() => z.enum(JOB_KINDS));

const Env = z.lazy(() =>
  z.record(z.string().max(4096), Text(131072)).superRefine((env, ctx) => {
    const keys = Object.keys(env);
    for (const key of keys)
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) ctx.addIssue({ code: "custom", path: [key], message: "environment variable names are letters, digits and _, not starting with a digit" });
    if (keys.length > MAX_ENV_VARS) ctx.addIssue({ code: "custom", message: `has ${keys.length} variables, over the ${MAX_ENV_VARS} a job may have` });
    const bytes = bytesOf(keys) + bytesOf(Object.values(env));
    if (bytes > MAX_ENV_BYTES) ctx.addIssue({ code: "custom", message: `is ${bytes} bytes in all, over the ${MAX_ENV_BYTES} a job may have; pass fewer variables (--export)` });
  }),
);

/** Seconds, or a Slurm-style duration string ("10" = 10 minutes, "5:00", "1-00:00:00"). */
export const TimeLimit = z.lazy(() =>
  z.union([z.number(), z.string()], { error: 'must be seconds (a number) or a duration such as "1:30:00"' }).transform((v, ctx) => {
    const seconds = typeof v === "number" ? v : parseDuration(v);
    if (typeof seconds !== "number") {
      ctx.addIssue({ code: "custom", message: seconds.error });
      return z.NEVER;
    }
    if (!Number.isInteger(seconds) || seconds <= 0 || seconds > 365 * 86400) {
      ctx.addIssue({ code: "custom", message: `${v} is not a whole number of seconds between 1 and one year` });
      return z.NEVER;
    }
    return seconds;
  }),
);

/** The most memory a job may ask for on one node, or per core: 1 PiB, in MiB. */
export const MAX_MEM_MIB = 1 << 30;
/** MiB (a number), or a size with a K, M, G or T suffix ("300G") as Slurm's --mem takes it. */
export const Memory = z.lazy(() =>
  z.union([z.number(), z.string()], { error: 'must be MiB (a number) or a size such as "4G"' }).transform((v, ctx) => {
    const mib = typeof v === "number" ? v : parseMemory(v);
    if (typeof mib !== "number") {
      ctx.addIssue({ code: "custom", message: mib.error });
      return z.NEVER;
    }
    if (!Number.isInteger(mib) || mib < 1 || mib > MAX_MEM_MIB) {
      ctx.addIssue({ code: "custom", message: `${v} is not a whole number of MiB between 1 and ${MAX_MEM_MIB} (1 PiB)${mib === 0 ? "; for all of a node's memory ask for the whole node (exclusive)" : ""}` });
      return z.NEVER;
    }
    return mib;
  }),
);
const GpuType = z.string().regex(/^[A-Za-z0-9_.-]{1,32}$/, "a GPU type is 1 to 32 letters, digits, '.', '_' or '-', e.g. a100");
/** A node feature, as agents declare them (`--features`) and jobs require them (`--constraint`). */
export const Feature = z.string().regex(/^[A-Za-z0-9_.+-]{1,64}$/, "a feature is 1 to 64 letters, digits, '.', '_', '+' or '-'");

export const JobSubmit = z.lazy(() =>
  z
    .strictObject({
      name: Plain(MAX_NAME).min(1).optional(),
      argv: Argv.optional(),
      script: z
        .string()
        .min(1)
        .max(1 << 20)
        .refine((s) => !s.includes("\0"), "contains a NUL byte")
        .optional(),
      /** An allocation held by an `ebb run` launcher (no program of its own). */
      interactive: z.boolean().optional(),
      nodes: z.int().min(1).max(100_000).optional(),
      tasks: z.int().min(1).max(1_000_000).optional(),
      tasksPerNode: z.int().min(1).max(4096).optional(),
      /** Cores per task (default 1). */
      cpusPerTask: z.int().min(1).max(4096).optional(),
      /** Memory per node, or per allocated core (one of the two; default: the controller's per core). MiB, or "4G". */
      mem: Memory.optional(),
      memPerCpu: Memory.optional(),
      /** GPUs for the whole job, per node or per task (one of the three), of `gpuType` if given. */
      gpus: z.int().min(1).max(1_000_000).optional(),
      gpusPerNode: z.int().min(1).max(1024).optional(),
      gpusPerTask: z.int().min(1).max(1024).optional(),
      gpuType: GpuType.optional(),
      /** Features every node of the job must have. */
      constraint: z.array(Feature).min(1).max(64).optional(),
      /** Whole nodes only: no other job shares them. */
      exclusive: z.boolean().optional(),
      timeLimit: TimeLimit.optional(),
      env: Env.optional(),
      cwd: Plain(4096).startsWith("/", "must be an absolute path").optional(),
      output: Plain(4096).min(1).optional(),
      elastic: z.boolean().optional(),
      minNodes: z.int().min(1).max(100_000).optional(),
      maxNodes: z.int().min(1).max(100_000).optional(),
      /** Seconds between the ranks' timing and CFG samples, for every monitored job (default: the controller's, 60). */
      sampleInterval: z.number().min(SAMPLE_INTERVAL.min).max(SAMPLE_INTERVAL.max).optional(),
      /** Elastic jobs: their own scheduler settings; the controller clamps them to its admin limits. */
      elasticSettings: ElasticSettings.optional(),
      /** A job array (sbatch --array): "0-15", "1,3,5", "1-9:2", with "%N" to run at most N tasks at once. One job per task. */
      array: z.string().min(1).max(4096).optional(),
      /** sbatch --dependency: "afterok:12:13", "afternotok:12", "afterany:12", "after:12", "singleton", joined by "," (all) or "?" (any); "12_3" is one array task. */
      dependency: z.string().min(1).max(4096).optional(),
      /** Submitted held (JobHeldUser) until POST /v1/jobs/{id}/release. */
      hold: z.boolean().optional(),
      /** Not started before this time (ISO 8601 with a zone). */
      begin: z.iso.datetime({ offset: true }).optional(),
      /** Nodes the job must not use. */
      exclude: z.array(NodeName).max(100_000).optional(),
      /** Nodes the job must use, all of them (it gets at least as many nodes). */
      nodelist: z.array(NodeName).min(1).max(100_000).optional(),
      /** Where stderr goes (a pattern like output); default: with stdout. */
      error: Plain(4096).min(1).optional(),
      /** More tasks than the nodes have CPUs (sbatch --overcommit). */
      overcommit: z.boolean().optional(),
      /** The partition to run in (its nodes only); default: the controller's default partition. GET /v1/partitions lists them. */
      partition: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "a partition name is letters, digits, '_', '.' or '-' (at most 64)").optional(),
      /** The node counts the job can run at: a list (e.g. [1, 4, 9, 16]) or "square" (every square in its range); the scheduler only starts and resizes it at those. */
      sizes: z.union([z.literal("square"), z.array(z.int().min(1).max(100_000)).min(1, "give at least one size").max(4096)]).optional(),
    })
    .superRefine((b, ctx) => {
      const programs = [b.argv !== undefined, b.script !== undefined, b.interactive === true].filter(Boolean).length;
      if (programs !== 1) ctx.addIssue({ code: "custom", path: ["argv"], message: "give exactly one of argv (a command), script (a batch script) or interactive: true" });
      if (b.nodes !== undefined && b.tasks !== undefined && b.tasks < b.nodes)
        ctx.addIssue({ code: "custom", path: ["tasks"], message: `${b.tasks} tasks cannot use ${b.nodes} nodes; ask for fewer nodes or more tasks` });
      if (b.nodes !== undefined && b.tasks !== undefined && b.tasksPerNode !== undefined && b.tasks > b.nodes * b.tasksPerNode)
        ctx.addIssue({ code: "custom", path: ["tasks"], message: `${b.tasks} tasks do not fit on ${b.nodes} nodes at ${b.tasksPerNode} per node` });
      if (b.minNodes !== undefined && b.maxNodes !== undefined && b.minNodes > b.maxNodes)
        ctx.addIssue({ code: "custom", path: ["minNodes"], message: `minNodes ${b.minNodes} is above maxNodes ${b.maxNodes}` });
      if (b.elastic && b.minNodes === undefined && b.maxNodes === undefined) ctx.addIssue({ code: "custom", path: ["elastic"], message: "an elastic job needs a range: minNodes and/or maxNodes" });
      if (b.elastic && b.nodes !== undefined && ((b.minNodes !== undefined && b.nodes < b.minNodes) || (b.maxNodes !== undefined && b.nodes > b.maxNodes)))
        ctx.addIssue({ code: "custom", path: ["nodes"], message: `nodes ${b.nodes} is outside [minNodes, maxNodes]` });
      if (!b.elastic && (b.minNodes !== undefined || b.maxNodes !== undefined) && b.nodes !== undefined)
        ctx.addIssue({ code: "custom", path: ["nodes"], message: "give either nodes or a minNodes/maxNodes range, not both, for a job that is not elastic" });
      if (!b.elastic && b.elasticSettings !== undefined) ctx.addIssue({ code: "custom", path: ["elasticSettings"], message: "only elastic jobs have scheduler settings; add elastic: true" });
      const s = b.elasticSettings;
      if (s?.lower !== undefined && s.upper !== undefined && s.lower >= s.upper)
        ctx.addIssue({ code: "custom", path: ["elasticSettings", "lower"], message: `lower ${s.lower} must be below upper ${s.upper}` });
      const array = b.array === undefined ? undefined : parseArraySpec(b.array);
      if (array && "error" in array) ctx.addIssue({ code: "custom", path: ["array"], message: array.error });
      if (array && b.interactive) ctx.addIssue({ code: "custom", path: ["array"], message: "an interactive allocation cannot be an array" });
      const dep = b.dependency === undefined ? undefined : parseDependency(b.dependency);
      if (dep && "error" in dep) ctx.addIssue({ code: "custom", path: ["dependency"], message: dep.error });
      if (b.mem !== undefined && b.memPerCpu !== undefined) ctx.addIssue({ code: "custom", path: ["memPerCpu"], message: "give memory per node (mem) or per core (memPerCpu), not both" });
      const gpuFields = (["gpus", "gpusPerNode", "gpusPerTask"] as const).filter((k) => b[k] !== undefined);
      if (gpuFields.length > 1) ctx.addIssue({ code: "custom", path: [gpuFields[1]!], message: `give one of gpus (for the job), gpusPerNode or gpusPerTask, not ${gpuFields.join(" and ")}` });
      if (b.gpuType !== undefined && gpuFields.length === 0) ctx.addIssue({ code: "custom", path: ["gpuType"], message: "a GPU type needs a count: gpus, gpusPerNode or gpusPerTask" });
      if (b.elastic && b.gpus !== undefined)
        ctx.addIssue({ code: "custom", path: ["gpus"], message: "an elastic job grows and shrinks by nodes: give its GPUs per node (gpusPerNode) or per task (gpusPerTask)" });
      const both = b.nodelist?.filter((n) => b.exclude?.includes(n)) ?? [];
      if (both.length > 0) ctx.addIssue({ code: "custom", path: ["exclude"], message: `${both.join(", ")} cannot be both required (nodelist) and excluded` });
    }),
);
export type JobSubmit = z.infer<typeof JobSubmit>;
/** What a job asks of each node beyond its size and tasks (domain/request.ts makes its request of them). */
export type JobResources = Pick<JobSubmit, "cpusPerTask" | "mem" | "memPerCpu" | "gpus" | "gpusPerNode" | "gpusPerTask" | "gpuType" | "constraint" | "exclusive">;

export const JobListQuery = z.lazy(() =>
  z.strictObject({
    state: z
      .string()
      .transform((s) => s.split(",").map((x) => x.trim().toUpperCase()))
      .pipe(z.array(JobState))
      .optional(),
    limit: z.coerce.number().int().min(1).max(100_000).default(1000),
    /** Jobs still active or ended at or after this time (ISO 8601). */
    since: z.iso.datetime({ offset: true }).optional(),
    /** Jobs submitted at or before this time (ISO 8601). */
    until: z.iso.datetime({ offset: true }).optional(),
    name: Plain(MAX_NAME).min(1).optional(),
    user: z.string().min(1).max(MAX_USER).optional(),
    /** The tasks of this array. */
    array: z.coerce.number().int().min(1).optional(),
    /** Only jobs with a smaller id: the `next` of the page before, to page through older jobs. */
    before: z.coerce.number().int().min(1).optional(),
  }),
);

/** GET /v1/jobs/{id}?wait=S: answer once the job has ended, or after S seconds. */
export const JobGetQuery = z.lazy(() => z.strictObject({ wait: z.coerce.number().min(0).max(50).optional() }));

/** POST /v1/jobs/{id}/hold and /release: the jobs (an array's tasks) that changed. */
export const HoldResult = z.lazy(() => z.object({ id: z.int(), jobs: z.array(z.int()) }));

/** POST /v1/jobs/test: when and where the job would start, from the current queue (sbatch --test-only). */
export const TestOnlyResult = z.lazy(() =>
  z.object({
    /** ISO time; null if it cannot start on this cluster, or waits on something other than nodes. */
    start: z.string().nullable(),
    nodes: z.array(z.string()),
    message: z.string(),
  }),
);

export const StepCreate = z.lazy(() =>
  z
    .strictObject({
      argv: Argv,
      nodes: z.int().min(1).max(100_000).optional(),
      tasks: z.int().min(1).max(1_000_000).optional(),
      tasksPerNode: z.int().min(1).max(4096).optional(),
      /** More tasks than the step's nodes have CPUs (srun --overcommit). */
      overcommit: z.boolean().optional(),
      /** The working directory the launcher will start the ranks in, and the sha256 of their environment (proto/credential.ts envDigest): the step credential covers both. */
      cwd: Plain(4096).startsWith("/", "must be an absolute path"),
      envDigest: z.string().regex(/^[0-9a-f]{64}$/, "must be a sha256 in hex"),
      /** Run on nodes the job does not hold yet (PMI spawn): the allocation grows by them and shrinks back when the step ends. */
      newNodes: z.boolean().optional(),
      /** With newNodes: seconds to wait for idle nodes before giving up (default 30). */
      wait: z.number().min(0).max(3600).optional(),
    })
    .superRefine((b, ctx) => {
      if (b.newNodes && b.tasks === undefined) ctx.addIssue({ code: "custom", path: ["tasks"], message: "a step on new nodes needs a task count" });
    }),
);
export type StepCreate = z.infer<typeof StepCreate>;

const NodeRefView = z.lazy(() => z.object({ name: z.string(), addr: z.string() }));

export const StepGrant = z.lazy(() =>
  z.object({
    jobId: z.int(),
    stepId: z.int(),
    nodes: z.array(NodeRefView),
    tasks: z.array(z.int()),
    jobNodes: z.array(z.string()),
    cred: StepCredential,
    jobEnv: z.record(z.string(), z.string()),
    /** Set when this step is the elastic job's resizable step. */
    elastic: z.object({ minNodes: z.int(), maxNodes: z.int(), sampleInterval: z.number() }).optional(),
    /** Seconds between the ranks' monitoring samples (the job's --sample-interval, else the controller's). */
    sampleInterval: z.number().positive().optional(),
  }),
);
export type StepGrant = z.infer<typeof StepGrant>;

export const DrainRequest = z.lazy(() => z.strictObject({ reason: z.string().trim().min(1).max(200).optional() }));
export const DrainResult = z.lazy(() => z.object({ node: z.string(), drain: z.string().nullable() }));

/** A POSIX-ish user name: what useradd accepts (and what the agent runs jobs as). */
const UserName = z.string().regex(/^[a-z_][a-z0-9_-]{0,31}\$?$/, "a user name: lowercase letters, digits, _ and -, at most 32 characters, not starting with a digit or -");
export const TokenCreate = z.lazy(() => z.strictObject({ user: UserName, admin: z.boolean().optional() }));
export const TokenCreated = z.lazy(() => z.object({ user: z.string(), admin: z.boolean(), token: z.string() }));

export const ResizeRequest = z.lazy(() => z.strictObject({ nodes: z.int().min(1).max(100_000) }));

export const AdaptationView = z.lazy(() =>
  z.object({
    id: z.int(),
    state: z.enum(["ADAPTING", "COMMITTED", "FAILED"]),
    fromNodes: z.int(),
    toNodes: z.int(),
    fromRanks: z.int(),
    toRanks: z.int(),
    added: z.array(z.string()),
    removed: z.array(z.string()),
    reason: z.string(),
    message: z.string().nullable(),
    requestedAt: z.string(),
    endedAt: z.string().nullable(),
    /** Epoch ms of each protocol step: requested, realloc, spawned, ready, notified, agreed, committed, released, ended. */
    times: z.record(z.string(), z.number()),
  }),
);

/** A job's request of cores, memory and GPUs (domain/resources.ts ResourceRequest; memory in MiB). */
export const RequestView = z.lazy(() =>
  z.object({
    tasks: z.int().optional(),
    nodes: z.int().optional(),
    tasksPerNode: z.int().optional(),
    cpusPerTask: z.int(),
    memPerNodeMiB: z.int().optional(),
    memPerCpuMiB: z.int().optional(),
    gpus: z.int().optional(),
    gpusPerNode: z.int().optional(),
    gpusPerTask: z.int().optional(),
    gpuType: z.string().optional(),
    constraint: z.array(z.string()).optional(),
    exclusive: z.boolean(),
  }),
);
/** What a job holds on one node: its cores (the node's core indices, "0-3,8") and how many, its memory, its GPU indices. */
export const ShareView = z.lazy(() => z.object({ node: z.string(), cores: z.string(), cpus: z.int(), memMiB: z.int(), gpus: z.array(z.int()) }));
export type ShareView = z.infer<typeof ShareView>;
/** What a job used, from its cgroups once its processes were gone: CPU seconds summed over its nodes, the largest peak memory of one node. */
export const UsageView = z.lazy(() => z.object({ cpuSec: z.number(), peakMemMiB: z.number() }));

export const JobView = z.lazy(() =>
  z.object({
    id: z.int(),
    name: z.string(),
    kind: JobKind,
    state: JobState,
    /**
     * Pending jobs: why they wait, in Slurm's words (Resources, Priority, Dependency, JobHeldUser,
     * BeginTime, DependencyNeverSatisfied, JobArrayTaskLimit, ReqNodeNotAvail, QOSMaxJobsPerUserLimit,
     * QOSMaxCpuPerUserLimit, QOSMaxGRESPerUser, QOSMaxNodePerUserLimit, PartitionNodeLimit,
     * PartitionTimeLimit, None); ended jobs: why they ended.
     */
    reason: z.string().nullable(),
    nodes: z.int(),
    minNodes: z.int(),
    maxNodes: z.int(),
    elastic: z.boolean(),
    tasks: z.int().nullable(),
    tasksPerNode: z.int().nullable(),
    /** Submitted with overcommit: more tasks than its nodes' CPUs are allowed. */
    overcommit: z.boolean(),
    timeLimit: z.int(),
    argv: z.array(z.string()).nullable(),
    cwd: z.string(),
    output: z.string().nullable(),
    submitTime: z.string(),
    startTime: z.string().nullable(),
    endTime: z.string().nullable(),
    exitCode: z.int().nullable(),
    allocation: z.array(z.string()),
    /** Elastic jobs: communication over computation time of the latest sampling window. */
    mtct: z.number().nullable(),
    /** Pending jobs: the reason's longer account (which job, what time, which nodes). */
    reasonDetail: z.string().nullable(),
    /** Array tasks: the array's job id, the task's index, the array's limit of tasks running at once. */
    arrayJobId: z.int().nullable(),
    arrayTaskId: z.int().nullable(),
    arrayLimit: z.int().nullable(),
    held: z.boolean(),
    dependency: z.string().nullable(),
    beginTime: z.string().nullable(),
    exclude: z.array(z.string()),
    nodelist: z.array(z.string()),
    /** The node counts the job can run at (sorted); null: any in [minNodes, maxNodes]. */
    sizes: z.array(z.int()).nullable(),
    error: z.string().nullable(),
    /** Who submitted it, and the job that did, if one did. */
    user: z.string().nullable(),
    submittedBy: z.int().nullable(),
    /** Elastic jobs: adaptations committed. */
    resizes: z.int(),
    /** What it asked of cores, memory and GPUs; null: whole nodes (jobs from before ebb shared nodes). */
    resources: RequestView.nullable(),
    /** What it holds on each node (in the allocation's order), or held when it ended; empty while pending. */
    shares: z.array(ShareView),
    /** CPU time and peak memory, once it ended on all of its nodes; null until then. */
    usage: UsageView.nullable(),
    /** The partition it runs in; null: the controller has no partitions. */
    partition: z.string().nullable(),
  }),
);
export type JobView = z.infer<typeof JobView>;

export const JobEventView = z.lazy(() => z.object({ time: z.string(), kind: z.string(), message: z.string(), data: z.record(z.string(), z.unknown()).nullable() }));
/** One stretch of a job on a node, with its share of the node (null on rows from before shares: the whole node). */
export const AllocationView = z.lazy(() =>
  z.object({ node: z.string(), position: z.int(), since: z.string(), until: z.string().nullable(), cores: z.string().nullable(), memMiB: z.int().nullable(), gpus: z.array(z.int()).nullable() }),
);
export const StepView = z.lazy(() =>
  z.object({
    stepId: z.int(),
    argv: z.array(z.string()),
    tasks: z.int(),
    nodes: z.array(z.string()),
    state: z.string(),
    startTime: z.string(),
    endTime: z.string().nullable(),
    exitCode: z.int().nullable(),
  }),
);

const CfgStats = z.object({ mean: z.number(), stddev: z.number(), min: z.number(), max: z.number(), recent: z.array(z.number()) });

/** A job's communication-loop CFG (dissertation §10.2), reduced over its ranks; times in ms. */
export const CfgView = z.object({
  /** False when the job's step ran unmonitored (`reason` says why). */
  monitored: z.boolean(),
  reason: z.string().nullable(),
  ntasks: z.int(),
  /** Key of the current distributed loop (the one the SPMD-phase model reads). */
  current: z.string().nullable(),
  loops: z.array(
    z.object({
      key: z.string(),
      head: z.number(),
      /** EPOP programs (the CFG's EPOP mode): the phase this loop is, by name; null otherwise. */
      phase: z.string().nullable(),
      /** Key of the loop this one is nested in. */
      parent: z.string().nullable(),
      /** Ranks that run it, as a range list ("0-3,6"). */
      ranks: z.string(),
      rankCount: z.int(),
      /** Runs at every rank of the job. */
      distributed: z.boolean(),
      /** Mode of the ranks' head visits. */
      visits: z.int(),
      /** Head visits summed over ranks. */
      iterations: z.number(),
      /** Mean iteration time and MPI time per iteration over the run. */
      iterMs: z.number(),
      mpiMs: z.number(),
      /** MPI time over compute time in the newest window. */
      mtct: z.number().nullable(),
      iter: CfgStats,
      mpi: CfgStats,
    }),
  ),
  /**
   * Rigid jobs after their end (like Slurm's seff): the communication share (MPI time / loop time)
   * per loop and over the outermost loops, and the node count at which the SPMD model predicts the
   * best efficiency for the time spent (the knee, where MPI time equals compute time; null: no MPI
   * time, no limit). Null while running, for elastic jobs, and without timed iterations.
   */
  efficiency: z
    .object({
      nodes: z.int(),
      commShare: z.number(),
      mtct: z.number().nullable(),
      bestNodes: z.int().nullable(),
      loops: z.array(z.object({ key: z.string(), commShare: z.number(), mtct: z.number().nullable(), bestNodes: z.int().nullable() })),
    })
    .nullable(),
});

/**
 * One item of a scheduling plan (sched/plan.ts): a spawn grant, a start or a resize of one job, why
 * the scheduler planned it, and what became of it. Status: `accepted` (passed the controller's
 * re-check, being carried out), `done` (carried out), `rejected` (the re-check refused it: the
 * cluster changed since the snapshot), `failed` (carrying it out was refused), `abandoned` (the
 * controller stopped before carrying it out); `outcome` says why for the last three.
 */
export const PlanItemView = z.lazy(() =>
  z.object({
    id: z.int(),
    jobId: z.int(),
    kind: z.enum(["spawn", "start", "resize"]),
    status: z.enum(["accepted", "done", "rejected", "failed", "abandoned"]),
    reason: z.string(),
    outcome: z.string().nullable(),
    /** Start and spawn: the nodes it takes, in rank order; a resize: none (see added/removed). */
    nodes: z.array(z.string()),
    /** Spawn: the new processes; null otherwise. */
    tasks: z.int().nullable(),
    /** Resize: from and to nodes, the policy's rule, the nodes taken and given back, what the rest of the time limit is multiplied by. */
    from: z.int().nullable(),
    to: z.int().nullable(),
    rule: z.string().nullable(),
    added: z.array(z.string()),
    removed: z.array(z.string()),
    limitRatio: z.number().nullable(),
    limitSource: z.string().nullable(),
  }),
);
export type PlanItemView = z.infer<typeof PlanItemView>;

/** A plan item of one job, with its plan's id, time and policy (GET /v1/jobs/{id}). */
export const JobPlanItem = z.lazy(() => PlanItemView.unwrap().extend({ planId: z.int(), time: z.string(), policy: z.string() }));
export type JobPlanItem = z.infer<typeof JobPlanItem>;

/** GET /v1/plans: one scheduling pass's plan, with the items the caller may see. */
export const PlanView = z.lazy(() =>
  z.object({
    id: z.int(),
    time: z.string(),
    policy: z.string(),
    /** When each reserved job will start at the latest (EASY's promise), and why. */
    reservations: z.array(z.object({ jobId: z.int(), start: z.string(), nodes: z.int(), reason: z.string().nullable() })),
    items: z.array(PlanItemView),
  }),
);
export type PlanView = z.infer<typeof PlanView>;

export const PlanListQuery = z.lazy(() =>
  z.strictObject({
    job: z.coerce.number().int().min(1).optional().describe("only plans with an item of this job, and only those items"),
    limit: z.coerce.number().int().min(1).max(1000).default(20).describe("the newest this many plans (default 20)"),
  }),
);

export const JobDetail = z.lazy(() =>
  JobView.unwrap().extend({
    script: z.string().nullable(),
    env: z.record(z.string(), z.string()),
    events: z.array(JobEventView),
    allocationHistory: z.array(AllocationView),
    steps: z.array(StepView),
    adaptations: z.array(AdaptationView),
    /** Every change of the time limit (seconds from the start): it follows the job's size. */
    limitHistory: z.array(z.object({ time: z.string(), from: z.int(), to: z.int(), reason: z.string() })),
    /** The scheduler's plan items for this job (the newest 100, oldest first): what was planned, and what became of it. */
    plans: z.array(JobPlanItem),
    /** Elastic jobs: MTCT per sampling window, oldest first. */
    samples: z.array(z.object({ time: z.string(), mtct: z.number(), iterations: z.int() })),
    sampleInterval: z.number().nullable(),
    elasticSettings: ElasticSettings.nullable(),
    /** The job's CFG of communication loops; null when nothing was reported. */
    cfg: CfgView.nullable(),
    /** EPOP programs (ebb/epop) while they run: the phases (init is pc 0), where the program is, and the time left by its current bounded phase's rate. */
    program: z
      .object({
        name: z.string(),
        phases: z.array(z.object({ pc: z.int(), name: z.string(), kind: z.enum(["init", "rigid", "elastic", "branch"]) })),
        pc: z.int().nullable(),
        iteration: z.int().nullable(),
        bound: z.int().nullable(),
        remainingSeconds: z.number().nullable(),
      })
      .nullable(),
  }),
);
export type JobDetail = z.infer<typeof JobDetail>;

export const NodeView = z.lazy(() =>
  z.object({
    name: z.string(),
    /**
     * COMPLETING: its last job ended and its processes are being killed; not scheduled until they are gone.
     * DRAINING: drained (`ebb drain`) with a job still on it; DRAINED: drained and idle. Drained nodes take no new work.
     */
    state: z.enum(["IDLE", "ALLOCATED", "COMPLETING", "DRAINING", "DRAINED", "DOWN", "UNKNOWN"]),
    cpus: z.int(),
    memoryMb: z.int(),
    /** One entry per GPU index: its type, or null when untyped. */
    gpus: z.array(z.string().nullable()),
    features: z.array(z.string()),
    /** What the node's jobs hold in all, and what is left: core and memory counts, GPU indices. */
    allocated: z.object({ cpus: z.int(), memMiB: z.int(), gpus: z.array(z.int()) }),
    free: z.object({ cpus: z.int(), memMiB: z.int(), gpus: z.array(z.int()) }),
    addr: z.string(),
    /** The jobs on the node (a node is shared), in the order they came. */
    jobs: z.array(z.int()),
    /** The first of them, or the job whose processes are being killed (COMPLETING); null when idle. */
    jobId: z.int().nullable(),
    reason: z.string().nullable(),
    /** Why the node is drained (it takes no new work until resumed); null when it is not. */
    drain: z.string().nullable(),
    /** Whom jobs run as on the node: "job's user" (the agent runs as root), or "agent's user (NAME)"; null if unknown. */
    runAs: z.string().nullable(),
  }),
);
export type NodeView = z.infer<typeof NodeView>;

/** Per-user limits (Slurm's MaxJobs, MaxSubmitJobs, MaxTRESPerUser): absent fields are no limit. */
export const UserLimitsView = z.lazy(() =>
  z.object({ maxJobs: z.int().optional(), maxSubmitJobs: z.int().optional(), maxCpus: z.int().optional(), maxGpus: z.int().optional(), maxNodes: z.int().optional() }),
);

/** A partition (sinfo's summary): its nodes and their states, its bounds, who may use it, its jobs. */
export const PartitionView = z.lazy(() =>
  z.object({
    name: z.string(),
    /** Where a job that names no partition goes. */
    default: z.boolean(),
    /** Its nodes as configured: a hostlist, or "ALL". */
    nodeList: z.string(),
    /** Its nodes the controller knows, by name. */
    nodes: z.array(z.string()),
    /** Of them: allocated (a job holds part or all), idle (schedulable, empty), other (down, drained, not connected), total. */
    nodeStates: z.object({ allocated: z.int(), idle: z.int(), other: z.int(), total: z.int() }),
    /** Cores the same way: held by jobs, free on schedulable nodes, on other nodes, total. */
    cpus: z.object({ allocated: z.int(), idle: z.int(), other: z.int(), total: z.int() }),
    /** Seconds; null: the controller's default / no maximum. */
    defaultTime: z.int().nullable(),
    maxTime: z.int().nullable(),
    maxNodes: z.int().nullable(),
    /** Who may submit to it; null: everyone. */
    allowUsers: z.array(z.string()).nullable(),
    allowGroups: z.array(z.string()).nullable(),
    /** Priority tier: its waiting jobs go before those of lower tiers. */
    tier: z.int(),
    /** Each user's limits within it. */
    limits: UserLimitsView,
    jobs: z.object({ running: z.int(), pending: z.int() }),
  }),
);
export type PartitionView = z.infer<typeof PartitionView>;

/** A waiting job's priority and its factors, each weighted (sprio). */
export const PriorityView = z.lazy(() =>
  z.object({
    jobId: z.int(),
    user: z.string(),
    partition: z.string().nullable(),
    /** Its partition's priority tier: a higher tier goes first whatever the priority. */
    tier: z.int(),
    /** The sum of the weighted factors below. */
    priority: z.number(),
    age: z.number(),
    fairshare: z.number(),
    jobSize: z.number(),
  }),
);
export type PriorityView = z.infer<typeof PriorityView>;

/** How priorities are made: the factors' weights and the queue's order. */
export const PrioritySettings = z.lazy(() =>
  z.object({
    /** multifactor: by priority; submit: in submit order (tiers first either way). */
    type: z.enum(["multifactor", "submit"]),
    weights: z.object({ fairshare: z.number(), age: z.number(), jobSize: z.number() }),
    /** Seconds of waiting at which the age factor is whole. */
    maxAge: z.number(),
    /** Seconds in which usage loses half its weight (0: never). */
    halfLife: z.number(),
    favorSmall: z.boolean(),
    /** Billing units per second of one core, one GiB of memory, one GPU. */
    tresWeights: z.object({ cpu: z.number(), memGiB: z.number(), gpu: z.number() }),
  }),
);

/** One user's fair share (sshare). */
export const ShareRowView = z.lazy(() =>
  z.object({
    user: z.string(),
    /** Shares given in the config (default 1), and their part of all the users' shares. */
    rawShares: z.number(),
    normShares: z.number(),
    /** Billing-unit seconds used (cores, memory, GPUs weighted), never decayed; and decayed to now. */
    rawUsage: z.number(),
    decayedUsage: z.number(),
    /** Its part of all decayed usage. */
    effectiveUsage: z.number(),
    /** 2^(-effectiveUsage / normShares): 1 unused, 0.5 at its share, towards 0 above it. */
    fairShare: z.number(),
  }),
);
export type ShareRowView = z.infer<typeof ShareRowView>;

/** Whether the controller's database takes writes (a full or read-only disk: not; writes answer 503 until it does). */
export const StoreStatus = z.lazy(() =>
  z.object({
    writable: z.boolean(),
    reason: z.string().optional().describe("why writes are refused, and what to do"),
    since: z.string().optional().describe("when writes began to be refused (ISO 8601)"),
    deferred: z.int().optional().describe("reports (jobs' ends...) kept in memory until they can be written"),
  }),
);
export type StoreStatus = z.infer<typeof StoreStatus>;

export const Health = z.lazy(() => z.object({ ok: z.literal(true), version: z.string(), nodes: z.int(), jobs: z.int(), store: StoreStatus }));
export const SubmitResult = z.lazy(() => z.object({ id: z.int() }));
export const ErrorResponse = z.lazy(() => z.object({ error: z.object({ code: z.string(), message: z.string(), field: z.string().optional() }) }));

/** GET /v1/timeline: the allocation timeline of the last `window` seconds (the dashboard draws it). */
export const TimelineQuery = z.lazy(() => z.strictObject({ window: z.coerce.number().int().min(60).max(7 * 86400).default(600) }));
const TimelineNode = z.lazy(() => NodeView.and(z.object({ heartbeatAge: z.number().nullable() })));
/** A job that held nodes in the window, with each node's stretch of it. */
const TimelineJob = z.lazy(() =>
  z.object({
    id: z.int(),
    name: z.string(),
    state: JobState,
    elastic: z.boolean(),
    user: z.string().nullable(),
    startTime: z.string().nullable(),
    endTime: z.string().nullable(),
    nodes: z.int(),
    /** Each stretch on a node, with the cores it held there (null: the whole node, a row from before shares). */
    allocations: z.array(z.object({ node: z.string(), since: z.string(), until: z.string().nullable(), cpus: z.int().nullable() })),
    adaptations: z.array(z.object({ id: z.int(), state: z.string(), fromNodes: z.int(), toNodes: z.int(), requestedAt: z.string(), endedAt: z.string().nullable() })),
  }),
);
const TimelinePending = z.lazy(() =>
  z.object({ id: z.int(), name: z.string(), nodes: z.int(), submitTime: z.string(), reason: z.string().nullable(), reasonDetail: z.string().nullable(), partition: z.string().nullable().describe("its partition; null: the controller has none") }),
);
export const TimelineView = z.lazy(() =>
  z.object({
    now: z.string(),
    since: z.string(),
    nodes: z.array(TimelineNode),
    jobs: z.array(TimelineJob),
    pending: z.array(TimelinePending),
  }),
);
export type TimelineView = z.infer<typeof TimelineView>;
/**
 * GET /v1/stream's `delta` event: what changed since the stream's previous event. `jobs` and
 * `pending` replace the entries of the same id (a job is in one of the two lists at a time);
 * `removed` are ids to drop from both (a pending job that ended without running). The nodes come whole.
 */
export const TimelineDelta = z.lazy(() =>
  z.object({
    now: z.string(),
    nodes: z.array(TimelineNode),
    jobs: z.array(TimelineJob),
    pending: z.array(TimelinePending),
    removed: z.array(z.int()),
  }),
);
export type TimelineDelta = z.infer<typeof TimelineDelta>;
