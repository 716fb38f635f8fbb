/**
 * A submission's resource fields turned into the `ResourceRequest` the scheduler places, with
 * Slurm's defaults: one task, one core per task, a shared node, no GPUs, memory by the cluster's
 * default per core. `--exclusive` takes whole nodes; so does an elastic job (its unit is a node)
 * unless it gives a per-node shape, which makes it a shared-node job resized by nodes of that shape.
 */
import type { ResourceRequest } from "./resources.ts";

/** The fields of a job submission (api/schemas.ts JobSubmit) a request is made of; memory in MiB. */
export interface RequestFields {
  nodes?: number;
  minNodes?: number;
  maxNodes?: number;
  nodelist?: readonly string[];
  tasks?: number;
  tasksPerNode?: number;
  cpusPerTask?: number;
  mem?: number;
  memPerCpu?: number;
  cpusPerGpu?: number;
  memPerGpu?: number;
  minCpus?: number;
  gpus?: number;
  gpusPerNode?: number;
  gpusPerTask?: number;
  gpuType?: string;
  constraint?: readonly string[];
  exclusive?: boolean;
  elastic?: boolean;
  overcommit?: boolean;
}

/** Whether the submission says what one node of it holds (an elastic job with a shape shares nodes). */
export function hasNodeShape(s: RequestFields): boolean {
  return [s.tasksPerNode, s.cpusPerTask, s.mem, s.memPerCpu, s.cpusPerGpu, s.memPerGpu, s.minCpus, s.gpusPerNode, s.gpusPerTask].some((v) => v !== undefined);
}

export function requestFrom(s: RequestFields): ResourceRequest {
  const exclusive = s.exclusive === true || (s.elastic === true && !hasNodeShape(s));
  // The least nodes, as the controller counts them: a range's lower bound, and at least the nodes listed.
  // -n with --ntasks-per-node and no node count: Slurm's ceil(n / per node) nodes, each holding the count per node.
  const byTasks = s.tasks !== undefined && s.tasksPerNode !== undefined && !s.elastic && !s.overcommit ? Math.ceil(s.tasks / s.tasksPerNode) : undefined;
  const least = s.minNodes ?? s.nodes ?? s.maxNodes ?? byTasks;
  const nodes = least === undefined && !s.nodelist?.length ? undefined : Math.max(least ?? 0, s.nodelist?.length ?? 0);
  let tasks: number;
  let tasksPerNode = s.tasksPerNode;
  if (s.elastic) {
    // Resized by nodes: every node holds the same share.
    tasksPerNode ??= 1;
    tasks = (nodes ?? 1) * tasksPerNode;
  } else if (s.overcommit && !exclusive) {
    // As Slurm: an overcommitted job is allocated as if it ran one task per node.
    tasksPerNode = nodes === undefined ? undefined : 1;
    tasks = nodes ?? 1;
  } else tasks = s.tasks ?? (nodes ?? 1) * (s.tasksPerNode ?? 1);
  // A node's tasks: all of them where placement decides.
  const onNode = tasksPerNode ?? (nodes ? Math.ceil(tasks / nodes) : tasks);
  const perGpu = perGpuShape(s, nodes, tasksPerNode, onNode);
  const perTask = s.cpusPerTask ?? perGpu.cpusPerTask ?? 1;
  // --mincpus: at least that many cores on each node, shared out over the node's tasks.
  const req: ResourceRequest = { tasks, cpusPerTask: s.minCpus === undefined ? perTask : Math.max(perTask, Math.ceil(s.minCpus / Math.max(1, onNode))), exclusive };
  if (s.cpusPerTask !== undefined) req.cpusPerTaskSet = true;
  if (nodes !== undefined) req.nodes = nodes;
  if (tasksPerNode !== undefined) req.tasksPerNode = tasksPerNode;
  const memPerNode = s.mem ?? perGpu.memPerNodeMiB;
  const memPerCpu = s.memPerCpu ?? perGpu.memPerCpuMiB;
  if (memPerNode !== undefined) req.memPerNodeMiB = memPerNode;
  if (memPerCpu !== undefined) req.memPerCpuMiB = memPerCpu;
  if (s.cpusPerGpu !== undefined) req.cpusPerGpu = s.cpusPerGpu;
  if (s.memPerGpu !== undefined) req.memPerGpuMiB = s.memPerGpu;
  if (s.minCpus !== undefined) req.minCpus = s.minCpus;
  if (s.gpus !== undefined) req.gpus = s.gpus;
  if (s.gpusPerNode !== undefined) req.gpusPerNode = s.gpusPerNode;
  if (s.gpusPerTask !== undefined) req.gpusPerTask = s.gpusPerTask;
  if (s.gpuType !== undefined) req.gpuType = s.gpuType;
  if (s.constraint?.length) req.constraint = [...s.constraint];
  return req;
}

/**
 * Slurm's cores and memory per allocated GPU (--cpus-per-gpu, --mem-per-gpu) as the task shape the
 * scheduler places: a task's own GPUs times the amount (per-task GPUs), else one node's GPUs times
 * it, shared out over the node's tasks (per-node GPUs, or the job's over its nodes). Where a node's
 * task count is left to placement, per-task GPUs' memory goes per core, so that it follows the tasks.
 */
function perGpuShape(s: RequestFields, nodes: number | undefined, tasksPerNode: number | undefined, onNode: number): { cpusPerTask?: number; memPerNodeMiB?: number; memPerCpuMiB?: number } {
  if (s.cpusPerGpu === undefined && s.memPerGpu === undefined) return {};
  if (s.gpusPerTask !== undefined) {
    const cpusPerTask = s.cpusPerTask ?? (s.cpusPerGpu === undefined ? 1 : s.gpusPerTask * s.cpusPerGpu);
    if (s.memPerGpu === undefined) return { cpusPerTask };
    const perTask = s.gpusPerTask * s.memPerGpu;
    return tasksPerNode !== undefined ? { cpusPerTask, memPerNodeMiB: tasksPerNode * perTask } : { cpusPerTask, memPerCpuMiB: Math.ceil(perTask / cpusPerTask) };
  }
  const gpus = s.gpusPerNode ?? Math.ceil((s.gpus ?? 0) / (nodes ?? 1));
  return {
    ...(s.cpusPerGpu === undefined ? {} : { cpusPerTask: Math.max(1, Math.ceil((gpus * s.cpusPerGpu) / Math.max(1, onNode))) }),
    ...(s.memPerGpu === undefined ? {} : { memPerNodeMiB: gpus * s.memPerGpu }),
  };
}
