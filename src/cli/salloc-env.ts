/**
 * The environment salloc's command gets (pure): the job's variables as its batch shell would see
 * them (`roles/slurm-env.ts`), worked out from the job as the API shows it, without a rank's
 * (salloc's command runs here, on no node of the job: no SLURMD_NODENAME, SLURM_PROCID...), and
 * ebb's EBB_JOB_ID, by which srun in it runs steps in the allocation; SLURM_CLUSTER_NAME is the
 * controller's (GET /v1/health), left out when it did not say.
 */
import type { JobView } from "../api/schemas.ts";
import { DEFAULT_PARTITION, slurmJobVars } from "../roles/slurm-env.ts";
import { blockLayout, blockWithin, taskCount } from "../sched/layout.ts";

/** In the environment of salloc's holding job: sacct lists no ID.batch for it (Slurm's salloc job has no batch step). */
export const SALLOC_MARK = "EBB_SALLOC";

export function sallocEnv(job: JobView, submitHost: string, cluster?: string): Record<string, string> {
  const nodes = job.allocation;
  const tasks = taskCount(nodes.length, job.tasks, job.tasksPerNode);
  const perTask = job.resources?.cpusPerTask ?? 1;
  // The job's tasks on each node as the controller lays them out (jobs.ts layoutOn).
  const layout = job.resources ? blockWithin(job.shares.map((s) => Math.floor(s.cpus / perTask)), tasks) : blockLayout(nodes.length, tasks);
  const vars = slurmJobVars({
    id: job.id,
    name: job.name,
    nodes,
    tasks: layout,
    tasksGiven: !!(job.tasks || job.tasksPerNode),
    tasksPerNode: job.tasksPerNode,
    cpus: job.shares.map((s) => s.cpus),
    request: job.resources,
    submitDir: job.cwd,
    cluster: cluster ?? "",
    partition: job.partition ?? DEFAULT_PARTITION,
  });
  if (cluster === undefined) delete vars.SLURM_CLUSTER_NAME;
  return {
    ...vars,
    SLURM_SUBMIT_HOST: submitHost,
    EBB_JOB_ID: String(job.id),
    EBB_JOB_NAME: job.name,
    EBB_JOB_NODELIST: nodes.join(","),
    EBB_JOB_NUM_NODES: String(nodes.length),
    ...(job.tasks ? { EBB_NTASKS: String(job.tasks) } : {}),
  };
}
