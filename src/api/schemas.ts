/** Request and response bodies of the HTTP API. The OpenAPI document is generated from these. */
import { z } from "zod";
import { parseDuration } from "../util/time.ts";
import { ElasticSettings, SAMPLE_INTERVAL } from "./elastic-settings.ts";

export const JOB_STATES = ["PENDING", "RUNNING", "ADAPTING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"] as const;
export const JobState = z.lazy(() => z.enum(JOB_STATES));
export type JobState = z.infer<typeof JobState>;
export const ACTIVE_STATES: readonly JobState[] = ["PENDING", "RUNNING", "ADAPTING"];
export const isActive = (s: string) => (ACTIVE_STATES as readonly string[]).includes(s);

const Env = z.lazy(() =>
  z.record(z.string(), z.string().max(131072)).superRefine((env, ctx) => {
    for (const key of Object.keys(env))
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) ctx.addIssue({ code: "custom", path: [key], message: "environment variable names are letters, digits and _, not starting with a digit" });
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

export const JobSubmit = z.lazy(() =>
  z
    .strictObject({
      name: z.string().min(1).max(200).optional(),
      argv: z.array(z.string().max(65536)).min(1, "must name a program").max(4096).optional(),
      script: z
        .string()
        .min(1)
        .max(1 << 20)
        .optional(),
      /** An allocation held by an `ebb run` launcher (no program of its own). */
      interactive: z.boolean().optional(),
      nodes: z.int().min(1).max(100_000).optional(),
      tasks: z.int().min(1).max(1_000_000).optional(),
      tasksPerNode: z.int().min(1).max(4096).optional(),
      timeLimit: TimeLimit.optional(),
      env: Env.optional(),
      cwd: z.string().startsWith("/", "must be an absolute path").optional(),
      output: z.string().min(1).max(4096).optional(),
      elastic: z.boolean().optional(),
      minNodes: z.int().min(1).max(100_000).optional(),
      maxNodes: z.int().min(1).max(100_000).optional(),
      /** Elastic jobs: seconds between the ranks' timing samples (default: the controller's, 60). */
      sampleInterval: z.number().min(SAMPLE_INTERVAL.min).max(SAMPLE_INTERVAL.max).optional(),
      /** Elastic jobs: their own scheduler settings; the controller clamps them to its admin limits. */
      elasticSettings: ElasticSettings.optional(),
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
    }),
);
export type JobSubmit = z.infer<typeof JobSubmit>;

export const JobListQuery = z.lazy(() =>
  z.strictObject({
    state: z
      .string()
      .transform((s) => s.split(",").map((x) => x.trim().toUpperCase()))
      .pipe(z.array(JobState))
      .optional(),
    limit: z.coerce.number().int().min(1).max(100_000).default(1000),
  }),
);

export const StepCreate = z.lazy(() =>
  z
    .strictObject({
      argv: z.array(z.string()).min(1, "must name a program"),
      nodes: z.int().min(1).optional(),
      tasks: z.int().min(1).optional(),
      tasksPerNode: z.int().min(1).optional(),
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
    cred: z.object({ jobId: z.int(), stepId: z.int(), nodes: z.array(z.string()), expires: z.number(), sig: z.string() }),
    jobEnv: z.record(z.string(), z.string()),
    /** Set when this step is the elastic job's resizable step. */
    elastic: z.object({ minNodes: z.int(), maxNodes: z.int(), sampleInterval: z.number() }).optional(),
  }),
);
export type StepGrant = z.infer<typeof StepGrant>;

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

export const JobView = z.lazy(() =>
  z.object({
    id: z.int(),
    name: z.string(),
    kind: z.enum(["batch", "command", "alloc"]),
    state: JobState,
    reason: z.string().nullable(),
    nodes: z.int(),
    minNodes: z.int(),
    maxNodes: z.int(),
    elastic: z.boolean(),
    tasks: z.int().nullable(),
    tasksPerNode: z.int().nullable(),
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
  }),
);
export type JobView = z.infer<typeof JobView>;

export const JobEventView = z.lazy(() => z.object({ time: z.string(), kind: z.string(), message: z.string(), data: z.record(z.string(), z.unknown()).nullable() }));
export const AllocationView = z.lazy(() => z.object({ node: z.string(), position: z.int(), since: z.string(), until: z.string().nullable() }));
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

export const JobDetail = z.lazy(() =>
  JobView.unwrap().extend({
    script: z.string().nullable(),
    env: z.record(z.string(), z.string()),
    events: z.array(JobEventView),
    allocationHistory: z.array(AllocationView),
    steps: z.array(StepView),
    adaptations: z.array(AdaptationView),
    /** Elastic jobs: MTCT per sampling window, oldest first. */
    samples: z.array(z.object({ time: z.string(), mtct: z.number(), iterations: z.int() })),
    sampleInterval: z.number().nullable(),
    elasticSettings: ElasticSettings.nullable(),
  }),
);
export type JobDetail = z.infer<typeof JobDetail>;

export const NodeView = z.lazy(() =>
  z.object({
    name: z.string(),
    /** COMPLETING: its last job ended and its processes are being killed; not scheduled until they are gone. */
    state: z.enum(["IDLE", "ALLOCATED", "COMPLETING", "DOWN", "UNKNOWN"]),
    cpus: z.int(),
    memoryMb: z.int(),
    addr: z.string(),
    jobId: z.int().nullable(),
    reason: z.string().nullable(),
  }),
);
export type NodeView = z.infer<typeof NodeView>;

export const Health = z.lazy(() => z.object({ ok: z.literal(true), version: z.string(), nodes: z.int(), jobs: z.int() }));
export const SubmitResult = z.lazy(() => z.object({ id: z.int() }));
export const ErrorResponse = z.lazy(() => z.object({ error: z.object({ code: z.string(), message: z.string(), field: z.string().optional() }) }));
