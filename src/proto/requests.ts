/**
 * The request bodies both of the controller's doors carry — the HTTP API (api/schemas.ts re-exports
 * them) and the launcher's WebSocket (launcher.ts) —: a job's submission, a step's creation, and
 * the step's grant; with the field rules they are made of (text without control bytes, argv and
 * environment sizes, time limits). One schema per message, built at its first parse.
 */
import { z } from "zod";
import { parseMemory } from "../domain/resources.ts";
import { parseDuration } from "../util/time.ts";
import { ElasticSettings, SAMPLE_INTERVAL } from "./elastic-settings.ts";
import { parseArraySpec } from "../domain/array.ts";
import { parseDependency } from "../domain/dependency.ts";
import { parseSignalSpec } from "../domain/job-options.ts";
import { JOB_KINDS, JOB_STATES } from "../domain/job.ts";
import { StepCredential } from "./common.ts";

/** C0 control bytes and DEL, tab, newline and carriage return aside (they have uses in arguments and values). */
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
/** Every control byte: names and paths have no use for any. */
const ANY_CONTROL = /[\x00-\x1f\x7f]/;
const controlMessage = (s: string, re: RegExp) => {
  const m = re.exec(s);
  return m ? `contains control byte 0x${m[0].charCodeAt(0).toString(16).padStart(2, "0")} at offset ${m.index}` : undefined;
};
/**
 * A string of at most `max` UTF-8 bytes, as a program and the kernel count it: a char cap let 4 bytes
 * a char through (a 128 Ki-char value of "é" passed the submission and failed at its start). A
 * UTF-16 unit is at least one byte, so the char cap goes first and refuses the longest unencoded.
 */
export const Bytes = (max: number) =>
  z
    .string()
    .max(max, { error: (i) => `is over ${max} bytes (${(i.input as string).length} characters)` })
    .refine((s) => s.length * 3 <= max || Buffer.byteLength(s) <= max, { error: (i) => `is ${Buffer.byteLength(i.input as string)} bytes in UTF-8, over the ${max} it may be` });
/** A string that may hold tabs and newlines but no NUL or other control byte (argv, environment values, scripts). */
const Text = (max: number) => Bytes(max).refine((s) => !CONTROL.test(s), { error: (i) => controlMessage(i.input as string, CONTROL) ?? "contains a control byte" });
/** A name or path: no control byte at all. */
export const Plain = (max: number) => Bytes(max).refine((s) => !ANY_CONTROL.test(s), { error: (i) => controlMessage(i.input as string, ANY_CONTROL) ?? "contains a control byte" });

/** What one job's environment and argv may hold in all (Linux lets a program start with about 2 MiB of both). */
export const MAX_ENV_BYTES = 1 << 20;
export const MAX_ENV_VARS = 4096;
/** Linux's MAX_ARG_STRLEN: the longest `NAME=value` (its NUL counted), or argument, a process may be started with. */
export const MAX_VARIABLE_BYTES = 128 << 10;
/** A batch script's text, in UTF-8 bytes. */
export const MAX_SCRIPT_BYTES = 1 << 20;
export const MAX_ARGV_BYTES = 1 << 20;
export const MAX_ARGS = 4096;
/** What a batch script's arguments may hold: they are stored in the job's row, which each update of the job rewrites. */
export const MAX_SCRIPT_ARGS = 1024;
export const MAX_SCRIPT_ARGS_BYTES = 65536;
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

/** A batch script's arguments ($1 $2 ...): any strings, the empty one too, within MAX_SCRIPT_ARGS and MAX_SCRIPT_ARGS_BYTES. */
const ScriptArgs = z.lazy(() =>
  z
    .array(Text(MAX_SCRIPT_ARGS_BYTES))
    .max(MAX_SCRIPT_ARGS, { error: (i) => `has ${(i.input as unknown[]).length} arguments, over the ${MAX_SCRIPT_ARGS} a batch script may take` })
    .refine((a) => bytesOf(a) <= MAX_SCRIPT_ARGS_BYTES, { error: (i) => `is ${bytesOf(i.input as string[])} bytes in all, over the ${MAX_SCRIPT_ARGS_BYTES} a batch script's arguments may take` }),
);

const NodeName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "node names are letters, digits, '.', '_', '-'");

export const JobState = z.lazy(() => z.enum(JOB_STATES));
export const JobKind = z.lazy(() => z.enum(JOB_KINDS));

const Env = z.lazy(() =>
  z.record(z.string().max(4096), Text(MAX_VARIABLE_BYTES)).superRefine((env, ctx) => {
    const keys = Object.keys(env);
    for (const key of keys) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) ctx.addIssue({ code: "custom", path: [key], message: "environment variable names are letters, digits and _, not starting with a digit" });
      // NAME=value and its NUL, as execve counts it: over MAX_ARG_STRLEN no process of the job could start.
      const value = Buffer.byteLength(env[key]!);
      const bytes = key.length + value + 2;
      if (bytes > MAX_VARIABLE_BYTES && value <= MAX_VARIABLE_BYTES) ctx.addIssue({ code: "custom", path: [key], message: `NAME=value is ${bytes} bytes, over the ${MAX_VARIABLE_BYTES} (Linux's MAX_ARG_STRLEN, MAX_VARIABLE_BYTES) a process may be started with` });
    }
    if (keys.length > MAX_ENV_VARS) ctx.addIssue({ code: "custom", message: `has ${keys.length} variables, over the ${MAX_ENV_VARS} a job may have` });
    const bytes = bytesOf(keys) + bytesOf(Object.values(env));
    if (bytes > MAX_ENV_BYTES) ctx.addIssue({ code: "custom", message: `is ${bytes} bytes in all, over the ${MAX_ENV_BYTES} a job may have; pass fewer variables (--export)` });
  }),
);

/** The longest time limit a job may have: a job with no limit of its own (timeLimit "UNLIMITED") in a partition without maxTime gets it. */
export const MAX_TIME_LIMIT = 365 * 86400;
/**
 * Seconds, or a Slurm-style duration string ("10" = 10 minutes, "5:00", "1-00:00:00"); or, as
 * Slurm's --time=UNLIMITED (INFINITE, 0), "UNLIMITED": the partition's maxTime, else
 * MAX_TIME_LIMIT. A 0 here is refused: the API says no limit in words.
 */
export const TimeLimit = z.lazy(() =>
  z.union([z.number(), z.string()], { error: 'must be seconds (a number), a duration such as "1:30:00", or "UNLIMITED"' }).transform((v, ctx): number | "UNLIMITED" => {
    if (typeof v === "string" && /^(unlimited|infinite)$/i.test(v.trim())) return "UNLIMITED";
    const seconds = typeof v === "number" ? v : parseDuration(v);
    if (typeof seconds !== "number") {
      ctx.addIssue({ code: "custom", message: seconds.error });
      return z.NEVER;
    }
    if (!Number.isInteger(seconds) || seconds <= 0 || seconds > MAX_TIME_LIMIT) {
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
/** A partition's name, as the controller's config defines them (sched/partitions.ts). */
export const PartitionName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "a partition name is letters, digits, '_', '.' or '-' (at most 64)");

export const JobSubmit = z.lazy(() =>
  z
    .strictObject({
      name: Plain(MAX_NAME).min(1).optional(),
      argv: Argv.optional(),
      script: Bytes(MAX_SCRIPT_BYTES)
        .min(1)
        .refine((s) => !s.includes("\0"), "contains a NUL byte")
        .optional(),
      /** The batch script's arguments, its $1 $2 ... (`sbatch script.sh ARG...`). */
      args: ScriptArgs.optional(),
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
      /** Cores and memory per allocated GPU (sbatch --cpus-per-gpu, --mem-per-gpu), instead of cpusPerTask and mem/memPerCpu; they need a GPU count. */
      cpusPerGpu: z.int().min(1).max(4096).optional(),
      memPerGpu: Memory.optional(),
      /** At least this many cores on each node (sbatch --mincpus): the node's tasks get more cores each when theirs come to less. */
      minCpus: z.int().min(1).max(65536).optional(),
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
      /** sbatch --kill-on-invalid-dep=yes: once the dependency can never be met the job is cancelled (reason DependencyNeverSatisfied), not left waiting. */
      killOnInvalidDep: z.boolean().optional(),
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
      partition: PartitionName.optional(),
      /** The node counts the job can run at: a list (e.g. [1, 4, 9, 16]) or "square" (every square in its range); the scheduler only starts and resizes it at those. */
      sizes: z.union([z.literal("square"), z.array(z.int().min(1).max(100_000)).min(1, "give at least one size").max(4096)]).optional(),
      /** sbatch --signal: "[B:]SIG[@SECONDS]", SIG (default 60 seconds) before the time limit, to the batch shell only (B:) or to the job's steps. */
      signal: z.string().min(1).max(64).optional(),
      /** sbatch --requeue: if a node of the job fails, it goes back to the queue (and starts again from its beginning) instead of ending NODE_FAIL. */
      requeue: z.boolean().optional(),
      /** sbatch --open-mode: the output and error files are truncated when the job starts (default) or appended to. */
      openMode: z.enum(["truncate", "append"]).optional(),
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
      const signal = b.signal === undefined ? undefined : parseSignalSpec(b.signal);
      if (signal && "error" in signal) ctx.addIssue({ code: "custom", path: ["signal"], message: signal.error });
      if (signal && !("error" in signal) && signal.batchOnly && b.script === undefined)
        ctx.addIssue({ code: "custom", path: ["signal"], message: "B: signals the batch shell, and only a batch job (script) has one; without B: the signal goes to the job's processes" });
      if (b.args !== undefined && b.script === undefined) ctx.addIssue({ code: "custom", path: ["args"], message: "only a batch script takes arguments; a command's go in argv" });
      if (b.requeue && b.script === undefined) ctx.addIssue({ code: "custom", path: ["requeue"], message: "only batch jobs (script) go back to the queue; a command or an allocation ends NODE_FAIL" });
      const memFields = (["mem", "memPerCpu", "memPerGpu"] as const).filter((k) => b[k] !== undefined);
      if (memFields.length > 1) ctx.addIssue({ code: "custom", path: [memFields[1]!], message: `give memory per node (mem), per core (memPerCpu) or per GPU (memPerGpu), not ${memFields.join(" and ")}` });
      if (b.cpusPerGpu !== undefined && b.cpusPerTask !== undefined) ctx.addIssue({ code: "custom", path: ["cpusPerGpu"], message: "give cores per task (cpusPerTask) or per GPU (cpusPerGpu), not both" });
      const gpuFields = (["gpus", "gpusPerNode", "gpusPerTask"] as const).filter((k) => b[k] !== undefined);
      for (const k of ["cpusPerGpu", "memPerGpu"] as const)
        if (b[k] !== undefined && gpuFields.length === 0) ctx.addIssue({ code: "custom", path: [k], message: `${k} counts per GPU: give the GPUs too (gpus, gpusPerNode or gpusPerTask)` });
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
export type JobResources = Pick<JobSubmit, "cpusPerTask" | "mem" | "memPerCpu" | "cpusPerGpu" | "memPerGpu" | "minCpus" | "gpus" | "gpusPerNode" | "gpusPerTask" | "gpuType" | "constraint" | "exclusive">;

/**
 * PATCH /v1/jobs/:id (scontrol update): a pending job's name, time limit, dependency ("" none),
 * node count (minNodes, maxNodes: scontrol's NumNodes=MIN[-MAX]) and partition; a running job's
 * name and time limit, and a running batch job's smaller node count (minNodes: it gives back its
 * last nodes). Only an admin raises a time limit, as Slurm's operators.
 */
export const JobUpdate = z.lazy(() =>
  z
    .strictObject({
      name: Plain(MAX_NAME).min(1).optional(),
      timeLimit: TimeLimit.optional(),
      dependency: z.string().max(4096).optional(),
      minNodes: z.int().min(1).max(100_000).optional(),
      maxNodes: z.int().min(1).max(100_000).optional(),
      partition: PartitionName.optional(),
    })
    .refine((u) => Object.values(u).some((v) => v !== undefined), { message: "give name, timeLimit, dependency, minNodes, maxNodes or partition" }),
);
export type JobUpdate = z.infer<typeof JobUpdate>;

export const StepCreate = z.lazy(() =>
  z
    .strictObject({
      argv: Argv,
      /** srun -J: the step's name, sacct's JobName of its line (default: its program's). */
      name: Plain(MAX_NAME).min(1).optional(),
      nodes: z.int().min(1).max(100_000).optional(),
      tasks: z.int().min(1).max(1_000_000).optional(),
      tasksPerNode: z.int().min(1).max(4096).optional(),
      /** srun -m plane=N: the step's tasks per node as Slurm counts them for it, N to each node in turn (sched/layout.ts planeLayout). */
      plane: z.int().min(1).max(1_000_000).optional(),
      /** More tasks than the step's nodes have CPUs (srun --overcommit). */
      overcommit: z.boolean().optional(),
      /** Nodes of the job the step must run on (srun -w inside a job); it takes the job's first others to reach `nodes`. */
      nodelist: z.array(NodeName).min(1).max(100_000).optional(),
      /** The working directory the launcher will start the ranks in, and the sha256 of their environment (proto/credential.ts envDigest): the step credential covers both. */
      cwd: Plain(4096).startsWith("/", "must be an absolute path"),
      envDigest: z.string().regex(/^[0-9a-f]{64}$/, "must be a sha256 in hex"),
      /** Run on nodes the job does not hold yet (PMI spawn): the allocation grows by them and shrinks back when the step ends. */
      newNodes: z.boolean().optional(),
      /** With newNodes: seconds to wait for idle nodes before giving up (default 30). */
      wait: z.number().min(0).max(3600).optional(),
      /**
       * srun --exact / --exclusive: while it runs, the step holds tasks x cpusPerTask of the job's
       * CPUs on each of its nodes, and waits for them when the job's other exact steps hold them
       * (over /v1/launcher: step.waiting, then step.grant; over HTTP: 409 step_busy). Without it a
       * step shares the job's CPUs with its other steps (srun --overlap).
       */
      exact: z.boolean().optional(),
      /** CPUs each task of an exact step holds (srun -c; default: the job's cpusPerTask, else 1). */
      cpusPerTask: z.int().min(1).max(4096).optional(),
    })
    .superRefine((b, ctx) => {
      if (b.newNodes && b.tasks === undefined) ctx.addIssue({ code: "custom", path: ["tasks"], message: "a step on new nodes needs a task count" });
      if (b.newNodes && b.nodelist) ctx.addIssue({ code: "custom", path: ["nodelist"], message: "a step on new nodes cannot name the job's nodes" });
      if (b.exact && b.newNodes) ctx.addIssue({ code: "custom", path: ["exact"], message: "a step on new nodes has them to itself; exact holds CPUs of the job's nodes" });
      if (b.exact && b.overcommit) ctx.addIssue({ code: "custom", path: ["overcommit"], message: "an exact step holds a CPU per task (times cpusPerTask); overcommit asks for more tasks than CPUs" });
      if (b.nodelist && b.nodes !== undefined && b.nodes < new Set(b.nodelist).size) ctx.addIssue({ code: "custom", path: ["nodes"], message: `${b.nodes} node(s) cannot hold the ${new Set(b.nodelist).size} nodelist names` });
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
    /**
     * Set when this step is the elastic job's resizable step. downAfterMs: how long the controller
     * takes at most to judge a silent node DOWN (a checkpoint-restart world's failing rank is held
     * this long for a node loss that explains it; docs/adaptation.md §12.4).
     */
    elastic: z.object({ minNodes: z.int(), maxNodes: z.int(), sampleInterval: z.number(), downAfterMs: z.int().positive().optional() }).optional(),
    /** Seconds between the ranks' monitoring samples (the job's --sample-interval, else the controller's). */
    sampleInterval: z.number().positive().optional(),
    /** An exact step's cores (indices of the node's), per node of `nodes`: those it holds among the job's. */
    cores: z.array(z.array(z.int().nonnegative())).optional(),
  }),
);
export type StepGrant = z.infer<typeof StepGrant>;
