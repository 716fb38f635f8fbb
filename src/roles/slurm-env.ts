/**
 * Slurm's names for what ebb tells a job's processes, set beside ebb's own EBB_* variables, so that
 * an sbatch script or a program written for Slurm reads the values it expects: the job's (the
 * controller puts them in every process's job environment), a step's and a rank's (the agent, as
 * it starts each rank), and a batch shell's (the agent, as it starts the script). The values have
 * Slurm's forms: node lists compressed (`n[1-3]`), counts per node run-length coded (`2(x3),1`).
 */
import type { ResourceRequest } from "../domain/resources.ts";
import { compressHostlist } from "../util/hostlist.ts";

/** SLURM_JOB_PARTITION of a job in no partition (the controller has none): all the nodes ("default" is a word Slurm keeps for itself). */
export const DEFAULT_PARTITION = "all";
/** SLURM_CLUSTER_NAME unless the controller's config names the cluster (`clusterName`). */
export const DEFAULT_CLUSTER_NAME = "ebb";

/**
 * The variables ebb sets for a job, a step or a rank: a process hands its environment on (to a
 * job it submits, a step it runs) without them, so they never outlive the job or step they describe.
 * SLURM_CPUS_PER_TASK is not one of them: srun reads it as its -c, and a step inherits it so.
 */
export const SLURM_JOB_VARS =
  /^SLURM_(JOB_\w+|JOBID|ARRAY_\w+|NODELIST|NNODES|NTASKS|NPROCS|NTASKS_PER_NODE|TASKS_PER_NODE|SUBMIT_DIR|CLUSTER_NAME|STEP_\w+|STEPID|PROCID|LOCALID|NODEID|GTIDS|CPUS_ON_NODE|MEM_PER_NODE|MEM_PER_CPU|GPUS|GPUS_PER_NODE|GPUS_PER_TASK|GPUS_ON_NODE|RESTART_COUNT|DISTRIBUTION|DIST_PLANESIZE)$|^SLURMD_NODENAME$/;

/**
 * The job variables a job was submitted with (sbatch in a job passes its own on: cli/common.ts
 * parentSlurmVars): every process of the new job sees them under its own job's, as under Slurm.
 */
export function inheritedJobVars(submitted: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(submitted)) if (SLURM_JOB_VARS.test(k)) out[k] = v;
  return out;
}

/** 2,2,2,1 -> "2(x3),1": a count per node as Slurm writes it. */
export function perNode(counts: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < counts.length; ) {
    let j = i;
    while (j + 1 < counts.length && counts[j + 1] === counts[i]) j++;
    out.push(j === i ? String(counts[i]) : `${counts[i]}(x${j - i + 1})`);
    i = j + 1;
  }
  return out.join(",");
}

/** "3(x2),1" -> 3,3,1: perNode's text read back, one count a node (a word it cannot read gives none). */
export function perNodeCounts(text: string): number[] {
  return text.split(",").flatMap((w) => {
    const m = /^(\d+)(?:\(x(\d+)\))?$/.exec(w);
    return m ? Array<number>(Number(m[2] ?? 1)).fill(Number(m[1])) : [];
  });
}

export interface SlurmJob {
  id: number;
  name: string;
  /** The job's nodes, in rank order. */
  nodes: readonly string[];
  /** The job's tasks on each of its nodes. */
  tasks: readonly number[];
  /** The job asked for a task count (-n) or a count per node (--ntasks-per-node): Slurm sets SLURM_NTASKS only then. */
  tasksGiven: boolean;
  tasksPerNode?: number | null;
  /** CPUs the job holds on each of its nodes. */
  cpus: readonly number[];
  /** What it asked for (null: whole nodes): cores per task, memory and GPUs as sbatch sets them. */
  request?: ResourceRequest | null;
  submitDir: string;
  cluster: string;
  partition: string;
  /** The job's dependency as given (sbatch -d): SLURM_JOB_DEPENDENCY. */
  dependency?: string;
  /** Times the job was requeued (SLURM_RESTART_COUNT, set once it has been). */
  restarts?: number;
  array?: { jobId: number; taskId: number; count: number; min: number; max: number; step: number };
}

/** The job's variables, the same in every process of the job. */
export function slurmJobVars(j: SlurmJob): Record<string, string> {
  const id = String(j.id);
  const nodes = compressHostlist(j.nodes);
  const total = j.tasks.reduce((a, b) => a + b, 0);
  const r = j.request ?? undefined;
  const perTask = r?.cpusPerTask ?? 1;
  const gpus = (n: number | undefined) => (n === undefined ? undefined : r?.gpuType ? `${r.gpuType}:${n}` : String(n));
  const set = (name: string, value: string | number | undefined): Record<string, string> => (value === undefined ? {} : { [name]: String(value) });
  return {
    SLURM_JOB_ID: id,
    SLURM_JOBID: id,
    SLURM_JOB_NAME: j.name,
    SLURM_JOB_NODELIST: nodes,
    SLURM_NODELIST: nodes,
    SLURM_JOB_NUM_NODES: String(j.nodes.length),
    SLURM_NNODES: String(j.nodes.length),
    SLURM_JOB_CPUS_PER_NODE: perNode(j.cpus),
    // Without a task count, Slurm counts a task per CPU (per --cpus-per-task CPUs) here: the batch shell's, not its steps'.
    // With --ntasks-per-node, that count on every node, as Slurm's, even where -n leaves a node fewer (-n 3 --ntasks-per-node=2: 2(x2)).
    SLURM_TASKS_PER_NODE: perNode(j.tasksPerNode ? j.nodes.map(() => j.tasksPerNode!) : j.tasksGiven ? j.tasks : j.cpus.map((c) => Math.max(1, Math.floor(c / perTask)))),
    // Only when asked for, as sbatch: -c's (even -c 1; a job stored before ebb told them apart: above 1), --mem's, --gpus's.
    // Per-GPU asks (and --mincpus) set their own, as sbatch, and not the per-task or per-node amounts worked out from them.
    ...set("SLURM_CPUS_PER_TASK", r?.cpusPerTaskSet || (perTask > 1 && r?.cpusPerGpu === undefined && r?.minCpus === undefined) ? perTask : undefined),
    ...set("SLURM_CPUS_PER_GPU", r?.cpusPerGpu),
    ...(r?.memPerGpuMiB !== undefined ? { SLURM_MEM_PER_GPU: String(r.memPerGpuMiB) } : { ...set("SLURM_MEM_PER_NODE", r?.memPerNodeMiB), ...set("SLURM_MEM_PER_CPU", r?.memPerCpuMiB) }),
    ...set("SLURM_GPUS", gpus(r?.gpus)),
    ...set("SLURM_GPUS_PER_NODE", gpus(r?.gpusPerNode)),
    ...set("SLURM_GPUS_PER_TASK", gpus(r?.gpusPerTask)),
    ...(j.tasksGiven ? { SLURM_NTASKS: String(total), SLURM_NPROCS: String(total) } : {}),
    ...(j.tasksPerNode ? { SLURM_NTASKS_PER_NODE: String(j.tasksPerNode) } : {}),
    SLURM_SUBMIT_DIR: j.submitDir,
    SLURM_JOB_PARTITION: j.partition,
    SLURM_CLUSTER_NAME: j.cluster,
    ...set("SLURM_JOB_DEPENDENCY", j.dependency || undefined),
    ...(j.restarts ? { SLURM_RESTART_COUNT: String(j.restarts) } : {}),
    ...(j.array
      ? {
          SLURM_ARRAY_JOB_ID: String(j.array.jobId),
          SLURM_ARRAY_TASK_ID: String(j.array.taskId),
          SLURM_ARRAY_TASK_COUNT: String(j.array.count),
          SLURM_ARRAY_TASK_MIN: String(j.array.min),
          SLURM_ARRAY_TASK_MAX: String(j.array.max),
          SLURM_ARRAY_TASK_STEP: String(j.array.step),
        }
      : {}),
  };
}

/** Whom the job's processes run as on a node. */
export interface SlurmOwner {
  user: string;
  uid: number;
  gid: number;
}

const ownerVars = (o: SlurmOwner) => ({ SLURM_JOB_USER: o.user, SLURM_JOB_UID: String(o.uid), SLURM_JOB_GID: String(o.gid) });

/** The job's GPUs on a node (their indices), as Slurm shows them there; nothing for none. */
export function slurmGpuVars(gpus: readonly number[]): Record<string, string> {
  return gpus.length === 0 ? {} : { SLURM_JOB_GPUS: gpus.join(","), SLURM_GPUS_ON_NODE: String(gpus.length) };
}

/** Where the batch shell runs: rank 0 of no step, on the job's first node. */
export function slurmBatchVars(node: string, cpusOnNode: number, owner: SlurmOwner): Record<string, string> {
  return { SLURMD_NODENAME: node, SLURM_CPUS_ON_NODE: String(cpusOnNode), SLURM_PROCID: "0", SLURM_LOCALID: "0", SLURM_NODEID: "0", SLURM_GTIDS: "0", ...ownerVars(owner) };
}

export interface SlurmRank {
  stepId: number;
  /** The step's nodes, and its tasks on each. */
  nodes: readonly string[];
  tasks: readonly number[];
  nodeIndex: number;
  localId: number;
  rank: number;
  /** The step's ranks on this node, when they are not consecutive (srun -m cyclic, plane): SLURM_GTIDS. */
  ranksHere?: readonly number[];
  /** The distribution the step was given (srun -m: its SLURM_DISTRIBUTION), if any. */
  distribution?: string;
  /** The step's tasks in all. */
  size: number;
  cpusOnNode: number;
  /** The step's GPUs on this node (a step runs with its job's): SLURM_STEP_GPUS. */
  gpus?: readonly number[];
  /** The step's own name (srun -J), which its ranks see as SLURM_JOB_NAME. */
  stepName?: string;
  owner: SlurmOwner;
}

/**
 * `f` of an array, computed once per array (which must not change afterwards): every rank of a
 * step on a node, and every node of `ebb up`'s, whose agents share a step's spec, pass the same
 * node list and counts; at 1,024 nodes their texts cost ~0.3 ms a rank.
 */
function perArray<T>(f: (xs: readonly T[]) => string): (xs: readonly T[]) => string {
  const made = new WeakMap<readonly T[], string>();
  return (xs) => {
    let text = made.get(xs);
    if (text === undefined) made.set(xs, (text = f(xs)));
    return text;
  };
}
const hostlistOf = perArray(compressHostlist);
const perNodeOf = perArray(perNode);
/** The names joined with commas (EBB_NODELIST), once per array. */
export const commaList = perArray<string>((xs) => xs.join(","));

/**
 * A step's variables, as one of its ranks sees them. SLURM_NNODES, SLURM_NTASKS and
 * SLURM_TASKS_PER_NODE are the step's (as srun sets them); SLURM_NODELIST stays the job's.
 */
export function slurmRankVars(r: SlurmRank): Record<string, string> {
  const firstHere = r.rank - r.localId;
  const here = r.tasks[r.nodeIndex] ?? r.localId + 1;
  const step = String(r.stepId);
  const size = String(r.size);
  const nodes = String(r.nodes.length);
  const perNodeText = perNodeOf(r.tasks);
  return {
    SLURM_STEP_ID: step,
    SLURM_STEPID: step,
    SLURM_STEP_NODELIST: hostlistOf(r.nodes),
    SLURM_STEP_NUM_NODES: nodes,
    SLURM_STEP_NUM_TASKS: size,
    SLURM_STEP_TASKS_PER_NODE: perNodeText,
    SLURM_NNODES: nodes,
    SLURM_NTASKS: size,
    SLURM_NPROCS: size,
    SLURM_TASKS_PER_NODE: perNodeText,
    SLURM_PROCID: String(r.rank),
    SLURM_LOCALID: String(r.localId),
    SLURM_NODEID: String(r.nodeIndex),
    // Without -m, srun's own choice: cyclic for a task or fewer per node, else block.
    SLURM_DISTRIBUTION: r.distribution ?? (r.size <= r.nodes.length ? "cyclic" : "block"),
    SLURM_GTIDS: r.ranksHere ? r.ranksHere.join(",") : Array.from({ length: here }, (_, i) => firstHere + i).join(","),
    SLURMD_NODENAME: r.nodes[r.nodeIndex]!,
    SLURM_CPUS_ON_NODE: String(r.cpusOnNode),
    ...(r.gpus?.length ? { SLURM_STEP_GPUS: r.gpus.join(",") } : {}),
    ...(r.stepName !== undefined ? { SLURM_JOB_NAME: r.stepName } : {}),
    ...ownerVars(r.owner),
  };
}
