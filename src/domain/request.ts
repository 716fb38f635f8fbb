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
  return [s.tasksPerNode, s.cpusPerTask, s.mem, s.memPerCpu, s.gpusPerNode, s.gpusPerTask].some((v) => v !== undefined);
}

export function requestFrom(s: RequestFields): ResourceRequest {
  const exclusive = s.exclusive === true || (s.elastic === true && !hasNodeShape(s));
  // The least nodes, as the controller counts them: a range's lower bound, and at least the nodes listed.
  const least = s.minNodes ?? s.nodes ?? s.maxNodes;
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
  const req: ResourceRequest = { tasks, cpusPerTask: s.cpusPerTask ?? 1, exclusive };
  if (s.cpusPerTask !== undefined) req.cpusPerTaskSet = true;
  if (nodes !== undefined) req.nodes = nodes;
  if (tasksPerNode !== undefined) req.tasksPerNode = tasksPerNode;
  if (s.mem !== undefined) req.memPerNodeMiB = s.mem;
  if (s.memPerCpu !== undefined) req.memPerCpuMiB = s.memPerCpu;
  if (s.gpus !== undefined) req.gpus = s.gpus;
  if (s.gpusPerNode !== undefined) req.gpusPerNode = s.gpusPerNode;
  if (s.gpusPerTask !== undefined) req.gpusPerTask = s.gpusPerTask;
  if (s.gpuType !== undefined) req.gpuType = s.gpuType;
  if (s.constraint?.length) req.constraint = [...s.constraint];
  return req;
}
