/**
 * Slurm's resource flags, shared by `ebb submit` (and its #SBATCH/#EBB lines) and `ebb run`:
 * cores per task, memory, GPUs (also as `--gres=gpu[:TYPE]:N`), node features and whole nodes.
 * They become JobSubmit's fields; the API checks them again, and domain/request.ts turns them
 * into the request the scheduler places.
 */
import { Feature, Memory, type JobResources } from "../api/schemas.ts";
import { parseGres } from "../domain/resources.ts";
import { defineArgs } from "./command.ts";
import { intFlag, UsageError } from "./common.ts";

export const resourceArgs = defineArgs({
  "cpus-per-task": { type: "string", alias: "c", description: "Cores per task (default 1)", valueHint: "N" },
  mem: { type: "string", description: "Memory per node: MiB, or a size with K, M, G or T (e.g. 300G); default: the cluster's memory per core times the cores", valueHint: "SIZE" },
  "mem-per-cpu": { type: "string", description: "Memory per allocated core, instead of --mem", valueHint: "SIZE" },
  "cpus-per-gpu": { type: "string", description: "Cores per allocated GPU, instead of --cpus-per-task (needs a GPU count)", valueHint: "N" },
  "mem-per-gpu": { type: "string", description: "Memory per allocated GPU, instead of --mem (needs a GPU count)", valueHint: "SIZE" },
  mincpus: { type: "string", description: "At least this many cores on each node: its tasks get more cores each when theirs come to less", valueHint: "N" },
  gpus: { type: "string", alias: "G", description: "GPUs for the whole job, of a type if given (a100:4)", valueHint: "[TYPE:]N" },
  "gpus-per-node": { type: "string", description: "GPUs on each node of the job", valueHint: "[TYPE:]N" },
  "gpus-per-task": { type: "string", description: "GPUs for each task", valueHint: "[TYPE:]N" },
  "ntasks-per-gpu": { type: "string", description: "Tasks for every GPU: with -n, the job's GPUs are enough for them; with a GPU count and no -n, that many tasks per GPU. Each task sees one GPU", valueHint: "N" },
  gres: { type: "string", description: "Generic resources per node as Slurm writes them: gpu, gpu:2, gpu:a100:2 (only GPUs)", valueHint: "gpu[:TYPE][:N]" },
  constraint: { type: "string", alias: "C", description: "Features every node must have, joined by & (e.g. ib&avx512)", valueHint: "FEATURES" },
  exclusive: { type: "boolean", description: "Whole nodes: no other job shares them (default: nodes are shared, each job confined to its cores, memory and GPUs)" },
});

export type ResourceFlags = { [K in keyof typeof resourceArgs]?: (typeof resourceArgs)[K]["type"] extends "boolean" ? boolean : string };

function memoryFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const r = Memory.safeParse(value);
  if (!r.success) throw new UsageError(`${flag} ${value}: ${r.error.issues[0]!.message}`);
  return r.data;
}

/** `N` or `TYPE:N`, as --gpus and its per-node and per-task forms take it; a count of 0 asks for none, as Slurm's (a CPU run of a GPU script). */
function gpuFlag(value: string | undefined, flag: string): { count: number; type?: string } | undefined {
  if (value === undefined) return undefined;
  const m = /^(?:([^:]*):)?([^:]*)$/.exec(value);
  if (!m) throw new UsageError(`${flag} ${value}: expected a count, or TYPE:COUNT such as a100:2`);
  if (m[1] !== undefined && !/^[A-Za-z0-9_.-]{1,32}$/.test(m[1])) throw new UsageError(`${flag} ${value}: "${m[1]}" is not a GPU type; letters, digits, '.', '_', '-'`);
  const count = intFlag(m[2], flag, { min: 0, max: flag === "--gpus" ? 1_000_000 : 1024 });
  if (count === undefined) throw new UsageError(`${flag} ${value}: expected a count, or TYPE:COUNT such as a100:2`);
  if (count === 0) return undefined;
  return m[1] === undefined ? { count } : { count, type: m[1] };
}

/**
 * --gres gpu:a100:2 (a comma list as Slurm allows, of which one may be GPUs): GPUs per node. As
 * Slurm's, `none` and a count of 0 of any resource (gpu:0, a CPU run of a GPU script; mic:0) ask for none.
 */
function gresFlag(value: string | undefined): { count: number; type?: string } | undefined {
  if (value === undefined) return undefined;
  let gpu: { count: number; type?: string } | undefined;
  for (const item of value.split(",")) {
    if (/^\s*none\s*$/i.test(item) || /^\s*[A-Za-z][\w.-]*(:[^:]+)?:0+\s*$/.test(item)) continue;
    const g = parseGres(item);
    if ("error" in g) throw new UsageError(`--gres: ${g.error}`);
    if (gpu) throw new UsageError(`--gres ${value}: name gpu once`);
    gpu = g.type === undefined ? { count: g.count } : { count: g.count, type: g.type };
  }
  return gpu;
}

/** --constraint ib&avx512 (Slurm's AND; "," too): the features, each checked. */
function constraintFlag(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  if (/[|[\]*()]/.test(value)) throw new UsageError(`--constraint ${value}: ebb takes features that must all be present, joined by & (e.g. ib&avx512); OR, counts and brackets are not supported`);
  const features = value.split(/[&,]/).map((f) => f.trim());
  for (const f of features) {
    const r = Feature.safeParse(f);
    if (!r.success) throw new UsageError(`--constraint ${value}: "${f}": ${r.error.issues[0]!.message}`);
  }
  return [...new Set(features)];
}

/** How many tasks and nodes the job asks for, as far as its flags say. */
export interface JobShape {
  nodes?: number;
  tasks?: number;
  tasksPerNode?: number;
}

type Gpus = { count: number; type?: string } | undefined;

/**
 * Several GPU counts at once (public scripts give `--gpus=1 --gpus-per-node=1 --gpus-per-task=1`,
 * which Slurm takes when they agree): the most particular, per task, else per node, once the
 * others are checked against it by the job's tasks and nodes; an error when they disagree, or when
 * the flags do not say how many tasks and nodes there are to tell.
 */
function oneGpuCount(job: Gpus, node: Gpus, nodeFlag: string, task: Gpus, shape: JobShape): { gpus?: Gpus; perNode?: Gpus; perTask?: Gpus } {
  const given = [job && "--gpus", node && nodeFlag, task && "--gpus-per-task"].filter(Boolean);
  if (given.length <= 1) return { gpus: job, perNode: node, perTask: task };
  const nodes = shape.nodes ?? (shape.tasks === undefined && shape.tasksPerNode === undefined ? 1 : undefined);
  const perNodeTasks = shape.tasksPerNode ?? (nodes === undefined ? undefined : shape.tasks === undefined ? 1 : shape.tasks % nodes === 0 ? shape.tasks / nodes : undefined);
  const tasks = shape.tasks ?? (nodes === undefined ? undefined : nodes * (perNodeTasks ?? 1));
  const pairs: [Gpus, Gpus, number | undefined, string][] = [
    [node, task, perNodeTasks, "tasks a node"],
    [job, task, tasks, "tasks"],
    [job, node, nodes, "nodes"],
  ];
  for (const [whole, part, times, what] of pairs) {
    if (!whole || !part) continue;
    if (times === undefined) throw new UsageError(`give one of ${given.join(", ")}: ebb cannot tell from the job's -N, -n and --ntasks-per-node whether they agree`);
    if (whole.count !== part.count * times || (whole.type && part.type && whole.type !== part.type))
      throw new UsageError(`${given.join(", ")} disagree: ${part.count} per ${part === task ? "task" : "node"} on ${times} ${times === 1 ? what.replace(/s\b/, "") : what} is ${part.count * times}, not ${whole.count}; give one of them`);
  }
  const kept = task ?? node!;
  const type = kept.type ?? job?.type ?? node?.type;
  const one = type === undefined ? { count: kept.count } : { count: kept.count, type };
  return task ? { perTask: one } : { perNode: one };
}

/**
 * Slurm's --ntasks-per-gpu=N: with a task count, the job's GPUs are ceil(tasks / N) (`gpus`, when
 * no GPU count is given); with a GPU count and no task count, the tasks are N per GPU (`tasks`).
 * Each task is then shown one GPU (StepSpec.tasksPerGpu). As Slurm's, not with --gpus-per-task
 * or --ntasks-per-node.
 */
export function tasksPerGpuFlag(a: ResourceFlags, shape: JobShape = {}): { tasksPerGpu?: number; tasks?: number; gpus?: number } {
  const n = intFlag(a["ntasks-per-gpu"], "--ntasks-per-gpu", { max: 65536 });
  if (n === undefined) return {};
  if (a["gpus-per-task"] !== undefined) throw new UsageError("give --ntasks-per-gpu or --gpus-per-task, not both");
  if (shape.tasksPerNode !== undefined) throw new UsageError("give --ntasks-per-gpu or --ntasks-per-node, not both: the GPUs set the tasks on each node");
  const perNode = gresFlag(a.gres) ?? gpuFlag(a["gpus-per-node"], "--gpus-per-node");
  const gpus = gpuFlag(a.gpus, "--gpus")?.count ?? (perNode ? perNode.count * (shape.nodes ?? 1) : undefined);
  if (gpus === undefined) return { tasksPerGpu: n, gpus: Math.ceil((shape.tasks ?? 1) / n) };
  if (shape.tasks === undefined) return { tasksPerGpu: n, tasks: gpus * n };
  if (shape.tasks > gpus * n) throw new UsageError(`--ntasks-per-gpu=${n}: ${shape.tasks} tasks need ${Math.ceil(shape.tasks / n)} GPUs, not the ${gpus} asked for`);
  return { tasksPerGpu: n };
}

/** The flags' JobSubmit fields (undefined where a flag is not given); `shape`, the job's tasks and nodes, relates several GPU counts. */
export function resourceFields(a: ResourceFlags, shape: JobShape = {}): JobResources {
  const gres = gresFlag(a.gres);
  const perNodeFlag = gpuFlag(a["gpus-per-node"], "--gpus-per-node");
  if (gres && perNodeFlag) throw new UsageError("give --gres gpu:N or --gpus-per-node N, not both: both are GPUs per node");
  const perGpuTasks = tasksPerGpuFlag(a, shape);
  // --ntasks-per-gpu's GPUs for a task count, when the job gives none (the GPU type, if any, comes with a count).
  const jobGpus = gpuFlag(a.gpus, "--gpus") ?? (perGpuTasks.gpus === undefined ? undefined : { count: perGpuTasks.gpus });
  const { gpus, perNode, perTask } = oneGpuCount(jobGpus, gres ?? perNodeFlag, gres ? "--gres" : "--gpus-per-node", gpuFlag(a["gpus-per-task"], "--gpus-per-task"), { ...shape, tasks: shape.tasks ?? perGpuTasks.tasks });
  const given = [gpus, perNode, perTask].filter(Boolean);
  const gpuType = (gpus ?? perNode ?? perTask)?.type;
  const mem = allMemory(a) ? undefined : memoryFlag(a.mem, "--mem");
  const memPerCpu = memoryFlag(a["mem-per-cpu"], "--mem-per-cpu");
  const memPerGpu = memoryFlag(a["mem-per-gpu"], "--mem-per-gpu");
  const memFlags = [mem !== undefined && "--mem", memPerCpu !== undefined && "--mem-per-cpu", memPerGpu !== undefined && "--mem-per-gpu"].filter(Boolean);
  if (memFlags.length > 1) throw new UsageError(`give one of --mem (per node), --mem-per-cpu and --mem-per-gpu, not ${memFlags.join(" and ")}`);
  const cpusPerTask = intFlag(a["cpus-per-task"], "--cpus-per-task", { max: 4096 });
  const cpusPerGpu = intFlag(a["cpus-per-gpu"], "--cpus-per-gpu", { max: 4096 });
  if (cpusPerTask !== undefined && cpusPerGpu !== undefined) throw new UsageError("give --cpus-per-task or --cpus-per-gpu, not both");
  if ((cpusPerGpu !== undefined || memPerGpu !== undefined) && given.length === 0)
    throw new UsageError(`${cpusPerGpu !== undefined ? "--cpus-per-gpu" : "--mem-per-gpu"} counts per GPU: give the GPUs too (--gpus, --gpus-per-node, --gres gpu:N or --gpus-per-task)`);
  return {
    cpusPerTask,
    mem,
    memPerCpu,
    cpusPerGpu,
    memPerGpu,
    minCpus: intFlag(a.mincpus, "--mincpus", { max: 65536 }),
    gpus: gpus?.count,
    gpusPerNode: perNode?.count,
    gpusPerTask: perTask?.count,
    gpuType,
    constraint: constraintFlag(a.constraint),
    exclusive: a.exclusive === true || allMemory(a) ? true : undefined,
  };
}

/** Slurm's --mem=0: all of each node's memory, which ebb gives as whole nodes (the API takes no 0). */
const allMemory = (a: ResourceFlags) => a.mem !== undefined && /^0+[KMGT]?$/i.test(a.mem);

/** What to say when --mem=0 makes a job exclusive that did not ask to be. */
export function allMemoryWarning(a: ResourceFlags): string | undefined {
  return allMemory(a) && a.exclusive !== true ? `--mem=${a.mem} (all of each node's memory): the job gets its nodes whole, as with --exclusive` : undefined;
}
