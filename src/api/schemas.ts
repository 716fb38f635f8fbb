/** Request and response bodies of the HTTP API. The OpenAPI document is generated from these. */
import { JOB_SIGNALS } from "../domain/job-options.ts";
import { HOST_STATES } from "../domain/host-state.ts";
import { z } from "zod";
import { JobKind, JobState, MAX_NAME, MAX_USER, PartitionName, Plain } from "../proto/requests.ts";
import { ElasticSettings } from "../proto/elastic-settings.ts";

/** The bodies the launcher's WebSocket carries too are defined once, in proto/. */
export { Feature, JobKind, JobState, JobSubmit, MAX_MEM_MIB, Memory, type JobResources, MAX_ARGS, MAX_ARGV_BYTES, MAX_ENV_BYTES, MAX_ENV_VARS, MAX_NAME, MAX_USER, PartitionName, StepCreate, StepGrant, TimeLimit, JobUpdate } from "../proto/requests.ts";

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
    /** Only jobs in these partitions, comma-separated (squeue -p, sacct -r). */
    partition: z
      .string()
      .max(MAX_LIST_PARTITIONS * 65)
      .describe("only jobs in these partitions, comma-separated (squeue -p, sacct -r)")
      .transform((s) => [...new Set(s.split(",").map((x) => x.trim()))])
      .pipe(z.array(PartitionName).max(MAX_LIST_PARTITIONS, `at most ${MAX_LIST_PARTITIONS} partitions`))
      .optional(),
    /** The tasks of this array. */
    array: z.coerce.number().int().min(1).optional(),
    /** Only these jobs, comma-separated (an array's id: all of its tasks), as squeue -j. */
    id: z
      .string()
      .regex(/^[1-9]\d{0,15}(,[1-9]\d{0,15})*$/, "job ids, comma-separated, e.g. 12,14")
      .transform((s) => [...new Set(s.split(",").map(Number))])
      .pipe(z.array(z.int()).max(MAX_LIST_IDS, `at most ${MAX_LIST_IDS} job ids`))
      .optional(),
    /** Only jobs with a smaller id: the `next` of the page before, to page through older jobs. */
    before: z.coerce.number().int().min(1).optional(),
  }),
);

/** GET /v1/jobs/{id}?wait=S: answer once the job has ended, or after S seconds. */
export const JobGetQuery = z.lazy(() => z.strictObject({ wait: z.coerce.number().min(0).max(50).optional() }));

/** POST /v1/jobs/{id}/hold and /release: the jobs (an array's tasks) that changed. */
export const HoldResult = z.lazy(() => z.object({ id: z.int(), jobs: z.array(z.int()) }));

/** POST /v1/jobs/test: when and where the job would start, from the current queue (sbatch --test-only). */
/** The most job ids one listing may name (GET /v1/jobs?id=). */
export const MAX_LIST_IDS = 1000;
/** The most partitions one listing may name (GET /v1/jobs?partition=; a config holds at most 1,000). */
export const MAX_LIST_PARTITIONS = 1000;

/**
 * GET /v1/starts (squeue --start): when each pending job is expected to start, from one replay of
 * the scheduler's plans with every running job taken to run to its limit. A job not listed has no
 * estimate (held, waiting for a dependency or begin time, too big for the nodes up, or beyond the
 * replay's horizon).
 */
export const StartsView = z.lazy(() =>
  z.object({
    /** When the estimate was made (one serves every caller for a few seconds). */
    time: z.string(),
    jobs: z.array(z.object({ id: z.int(), start: z.string(), nodes: z.array(z.string()) })),
    /** Whether the replay reached every pending job's start; false: it stopped at its horizon (`message` says where). */
    complete: z.boolean(),
    message: z.string().nullable(),
  }),
);
export type StartsView = z.infer<typeof StartsView>;

/** GET /v1/usage: what each user used over a window (ebb usage, like sreport). */
export const UsageQuery = z.lazy(() =>
  z
    .strictObject({
      /** The window (ISO 8601): since is required; until defaults to now. */
      since: z.iso.datetime({ offset: true }),
      until: z.iso.datetime({ offset: true }).optional(),
      /** Only this user. */
      user: z.string().min(1).max(MAX_USER).optional(),
    })
    .refine((q) => q.until === undefined || Date.parse(q.until) > Date.parse(q.since), { path: ["until"], message: "until must be after since" }),
);
const Usage = z.object({
  /** Jobs that held nodes in the window. */
  jobs: z.int(),
  /** Node-seconds and core-seconds (the job's cores on a node times the seconds held) in the window. */
  nodeSeconds: z.number(),
  coreSeconds: z.number(),
  /** GPU-seconds (the job's GPUs on a node times the seconds held) in the window. */
  gpuSeconds: z.number(),
});
export const UsageView = z.lazy(() =>
  z.object({
    since: z.string(),
    until: z.string(),
    /** Per user, the most core-seconds first ("" for jobs of no user). */
    users: z.array(Usage.extend({ user: z.string() })),
    total: Usage,
  }),
);
export type UsageView = z.infer<typeof UsageView>;

export const TestOnlyResult = z.lazy(() =>
  z.object({
    /** ISO time; null if it cannot start on this cluster, or waits on something other than nodes. */
    start: z.string().nullable(),
    nodes: z.array(z.string()),
    message: z.string(),
  }),
);

export const DrainRequest = z.lazy(() =>
  z.strictObject({
    reason: z.string().trim().min(1).max(200).optional(),
    /** The node's owner wants it back: its host state is `owner` until resumed, and its jobs move off as from an overloaded node. */
    owner: z.boolean().optional(),
  }),
);
export const DrainResult = z.lazy(() => z.object({ node: z.string(), drain: z.string().nullable(), owner: z.boolean().optional() }));

/** A POSIX-ish user name: what useradd accepts (and what the agent runs jobs as). */
const UserName = z.string().regex(/^[a-z_][a-z0-9_-]{0,31}\$?$/, "a user name: lowercase letters, digits, _ and -, at most 32 characters, not starting with a digit or -");
export const TokenCreate = z.lazy(() => z.strictObject({ user: UserName, admin: z.boolean().optional() }));
export const TokenCreated = z.lazy(() => z.object({ user: z.string(), admin: z.boolean(), token: z.string() }));

/** POST /v1/jobs/:id/signal (scancel --signal): a signal to the job's steps, its batch shell (`batch`), or both (`full`). */
export const SignalRequest = z.lazy(() => z.strictObject({ signal: z.enum(JOB_SIGNALS), to: z.enum(["steps", "batch", "full"]).default("steps") }));
export type SignalRequest = z.infer<typeof SignalRequest>;

/** POST /v1/jobs/:id/complete (salloc's end, as Slurm's salloc completes its job with its command's status). */
export const CompleteRequest = z.lazy(() => z.strictObject({ exitCode: z.int().min(0).max(255) }));

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
    /** Epoch ms of each protocol step: requested, realloc, spawned, ready, notified, agreed, committed, released, ended; a checkpoint-restart's also written, exited. */
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
    /** True when the job gave cpusPerTask (-c), even 1; its processes then see SLURM_CPUS_PER_TASK. */
    cpusPerTaskSet: z.boolean().optional(),
    memPerNodeMiB: z.int().optional(),
    memPerCpuMiB: z.int().optional(),
    /** As asked (--cpus-per-gpu, --mem-per-gpu): the cores per task and memory above are worked out from them. */
    cpusPerGpu: z.int().optional(),
    memPerGpuMiB: z.int().optional(),
    /** As asked (--mincpus): cpusPerTask was raised to hold at least that many cores a node. */
    minCpus: z.int().optional(),
    gpus: z.int().optional(),
    gpusPerNode: z.int().optional(),
    gpusPerTask: z.int().optional(),
    gpuType: z.string().optional(),
    constraint: z.array(z.string()).optional(),
    exclusive: z.boolean(),
    /** Tasks over a node count laid out as Slurm's cons_tres lays out sbatch's block distribution: each node in turn filled, a task left for each node after it (batch jobs); absent: evenly. */
    fill: z.boolean().optional(),
  }),
);
/** What a job holds on one node: its cores (the node's core indices, "0-3,8") and how many, its memory, its GPU indices. */
export const ShareView = z.lazy(() => z.object({ node: z.string(), cores: z.string(), cpus: z.int(), memMiB: z.int(), gpus: z.array(z.int()) }));
export type ShareView = z.infer<typeof ShareView>;
/** What a job used, from its cgroups once its processes were gone: CPU seconds summed over its nodes, the largest peak memory of one node. */
export const JobUsageView = z.lazy(() => z.object({ cpuSec: z.number(), peakMemMiB: z.number() }));

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
    /**
     * Another user's job, shown without its private part: argv, output and error are null, cwd is
     * "", an ended job's reason is null (it may name its files); in the detail also script, env,
     * events, steps' argv, adaptations' messages, cfg and program.
     */
    private: z.boolean(),
    submitTime: z.string(),
    startTime: z.string().nullable(),
    endTime: z.string().nullable(),
    exitCode: z.int().nullable(),
    allocation: z.array(z.string()),
    /** Running jobs: communication over computation time of the latest sampling window (null before the first, or when none came in the last two windows). */
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
    usage: JobUsageView.nullable(),
    /** GPU-seconds held: on each node, the job's GPUs there times the time it held them, summed (so far, while it runs); 0 without GPUs. */
    gpuSeconds: z.number(),
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
    /** srun -J's name of the step; null: none given (sacct names it by its program). */
    name: z.string().nullable(),
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
 * controller stopped before carrying it out); `outcome` says why for those three. `declined`: a
 * move weighed and not made (a job on an overloaded or owner node), recorded when its words change;
 * its reason has the numbers.
 */
export const PlanItemView = z.lazy(() =>
  z.object({
    id: z.int(),
    jobId: z.int(),
    kind: z.enum(["spawn", "start", "resize"]),
    status: z.enum(["accepted", "done", "rejected", "failed", "abandoned", "declined"]),
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

export const PriorityQuery = z.lazy(() =>
  z.strictObject({ job: z.coerce.number().int().min(1).optional().describe("only this job's priority (none if it is not an eligible waiting job), as scontrol show job and sprio -j ask") }),
);

export const PlanListQuery = z.lazy(() =>
  z.strictObject({
    job: z.coerce.number().int().min(1).optional().describe("only plans with an item of this job, and only those items"),
    limit: z.coerce.number().int().min(1).max(1000).default(20).describe("the newest this many plans (default 20)"),
  }),
);

export const JobDetail = z.lazy(() =>
  JobView.unwrap().extend({
    script: z.string().nullable(),
    /** The batch script's arguments ($1 $2 ...); null: none. */
    args: z.array(z.string()).nullable(),
    /** Submitted with --requeue (a node failure puts it back in the queue); how often it was requeued (SLURM_RESTART_COUNT). */
    requeue: z.boolean(),
    restarts: z.int(),
    env: z.record(z.string(), z.string()),
    events: z.array(JobEventView),
    allocationHistory: z.array(AllocationView),
    steps: z.array(StepView),
    adaptations: z.array(AdaptationView),
    /** Every change of the time limit (seconds from the start): it follows the job's size. */
    limitHistory: z.array(z.object({ time: z.string(), from: z.int(), to: z.int(), reason: z.string() })),
    /** The scheduler's plan items for this job (the newest 100, oldest first): what was planned, and what became of it. */
    plans: z.array(JobPlanItem),
    /**
     * MTCT per sampling window, oldest first: of the job's current distributed loop (CFG
     * monitoring, any job), else of an elastic job's probe-to-probe timing. What the scheduler reads.
     */
    samples: z.array(z.object({ time: z.string(), mtct: z.number(), iterations: z.int() })),
    /** Seconds per sampling window (the job's --sample-interval, else the controller's). */
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
    /**
     * The node's host state as its agent's rules judge load that is not ebb's (free: takes work; busy: keeps
     * its jobs, takes none; overloaded, owner: its jobs should leave), the rule that set it ("" when free),
     * the rules' smoothed inputs by name (cpu.other, load1, psi.mem, net.bytes, users, cmd.NAME...), and
     * since when (null: the agent has not said; a node without rules is free).
     */
    host: z.object({ state: z.enum(HOST_STATES), rule: z.string(), inputs: z.record(z.string(), z.number()), since: z.string().nullable() }),
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

export const Health = z.lazy(() => z.object({ ok: z.literal(true), version: z.string(), clusterName: z.string(), nodes: z.int(), jobs: z.int(), store: StoreStatus }));
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
