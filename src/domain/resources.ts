/**
 * Consumable resources of a node (cores, memory, GPUs) and what a job asks of them, as every layer
 * names them: agents report a node's `NodeResources`, jobs carry a `ResourceRequest`, the scheduler
 * places a request on nodes (`fitOn`), the ledger records each node's `NodeShare`, and the agent
 * confines the job's processes to it (cgroup cpuset and memory.max, GPU visibility).
 *
 * Slurm's model (cons_tres): a job is `tasks` tasks of `cpusPerTask` cores each, spread over nodes;
 * memory is per node or per core; GPUs per job, per node or per task. A node is shared unless the
 * job is `exclusive`, which takes nodes whole (all cores, memory and GPUs). Memory is in MiB.
 */

export interface NodeResources {
  cores: number;
  memMiB: number;
  /** One entry per GPU index: its type ("a100"), or null when untyped. */
  gpus: readonly (string | null)[];
  /** Node features a job may require (`--constraint`). */
  features: readonly string[];
}

export interface ResourceRequest {
  /** Tasks in all (default 1, or one per node when only nodes are given). */
  tasks?: number;
  /** Nodes (the least; a range's lower bound). Absent: as few as the tasks fit on. */
  nodes?: number;
  tasksPerNode?: number;
  cpusPerTask: number;
  /** The job gave cpusPerTask (`-c`), even 1 (Slurm's JOB_CPUS_SET: SLURM_CPUS_PER_TASK is set only then). */
  cpusPerTaskSet?: boolean;
  /** Memory per node (`--mem`); else per allocated core (`--mem-per-cpu`); else the cluster's default per core. */
  memPerNodeMiB?: number;
  memPerCpuMiB?: number;
  /** As asked per GPU (`--cpus-per-gpu`, `--mem-per-gpu`): cpusPerTask and the memory above were worked out from them (domain/request.ts); shown and told to the job, never placed by. */
  cpusPerGpu?: number;
  memPerGpuMiB?: number;
  /** As asked (`--mincpus`): cpusPerTask was raised so that each node holds at least that many cores. */
  minCpus?: number;
  /** GPUs for the whole job (`--gpus`), per node (`--gpus-per-node`, `--gres=gpu:N`) or per task. */
  gpus?: number;
  gpusPerNode?: number;
  gpusPerTask?: number;
  /** Only GPUs of this type count (`--gres=gpu:a100:2`). */
  gpuType?: string;
  /** Features every node must have (`--constraint a&b`). */
  constraint?: readonly string[];
  /** Whole nodes only (`--exclusive`). */
  exclusive: boolean;
  /**
   * A node count and a task count laid out as Slurm's cons_tres lays out a block distribution:
   * each node in turn takes what it holds, leaving a task for each node after it (sched/pool.ts
   * fillKeepingOne); else evenly. Batch jobs (sbatch's and salloc's, whatever their -m, as Slurm
   * 22.05's); `ebb run`'s allocations spread evenly.
   */
  fill?: boolean;
}

/** What a job holds on one node: which cores, how much memory, which GPU indices. */
export interface NodeShare {
  node: string;
  cores: readonly number[];
  memMiB: number;
  gpus: readonly number[];
}

/** What is free on one node, as placement sees it. */
export interface NodeFree {
  name: string;
  total: NodeResources;
  /** Free core indices, ascending. */
  cores: readonly number[];
  memMiB: number;
  /** Free GPU indices, ascending. */
  gpus: readonly number[];
  /** Held by no job at all (an exclusive job may take it). */
  idle: boolean;
}

/** The amounts one node must give a request for `tasks` of its tasks. */
export interface Amount {
  cores: number;
  memMiB: number;
  gpus: number;
}

/** Memory per core when the job says nothing: the cluster's setting, or the node's memory shared by its cores. */
export function defaultMemPerCpu(node: NodeResources, configured?: number): number {
  return configured ?? Math.floor(node.memMiB / Math.max(1, node.cores));
}

/** What `tasks` tasks of `req` need on `node` (before exclusivity: an exclusive job takes the whole node). */
export function amountFor(req: ResourceRequest, tasks: number, node: NodeResources, nodesInJob: number, defMemPerCpu?: number): Amount {
  const cores = tasks * req.cpusPerTask;
  const memMiB = req.memPerNodeMiB ?? cores * (req.memPerCpuMiB ?? defaultMemPerCpu(node, defMemPerCpu));
  const gpus = req.gpusPerNode ?? (req.gpusPerTask !== undefined ? req.gpusPerTask * tasks : req.gpus !== undefined ? Math.ceil(req.gpus / nodesInJob) : 0);
  return { cores, memMiB, gpus };
}

/** GPU indices of `free` that a request may use (its type, if it names one). */
export function usableGpus(free: NodeFree, type: string | undefined): number[] {
  return type === undefined ? [...free.gpus] : free.gpus.filter((i) => free.total.gpus[i] === type);
}

/** Whether the node's features include every one the request requires. */
export function hasFeatures(node: NodeResources, constraint: readonly string[] | undefined): boolean {
  return !constraint || constraint.every((f) => node.features.includes(f));
}

/**
 * The share of `free` that `amount` takes (lowest free indices first), or null when it does not
 * fit. An exclusive request takes the whole node and needs it idle.
 */
export function fitOn(free: NodeFree, req: ResourceRequest, amount: Amount): NodeShare | null {
  if (!hasFeatures(free.total, req.constraint)) return null;
  const gpus = usableGpus(free, req.gpuType);
  if (req.exclusive) {
    if (!free.idle || amount.cores > free.total.cores || amount.memMiB > free.total.memMiB || amount.gpus > gpus.length) return null;
    return { node: free.name, cores: [...free.cores], memMiB: free.total.memMiB, gpus: [...free.gpus] };
  }
  if (amount.cores > free.cores.length || amount.memMiB > free.memMiB || amount.gpus > gpus.length) return null;
  return { node: free.name, cores: free.cores.slice(0, amount.cores), memMiB: amount.memMiB, gpus: gpus.slice(0, amount.gpus) };
}

/** Why no node of `nodes` could ever hold one node's part of `req` (for the refusal at submit), or null if one can. */
export function neverFits(req: ResourceRequest, nodes: readonly { name: string; total: NodeResources }[], defMemPerCpu?: number): string | null {
  if (nodes.length === 0) return null; // no node has joined yet: nothing to judge against
  const perNode = req.tasksPerNode ?? (req.nodes !== undefined ? Math.ceil((req.tasks ?? req.nodes) / req.nodes) : 1);
  const reasons = new Set<string>();
  let fitting = 0;
  for (const n of nodes) {
    const a = amountFor(req, perNode, n.total, req.nodes ?? 1, defMemPerCpu);
    const gpus = req.gpuType === undefined ? n.total.gpus.length : n.total.gpus.filter((t) => t === req.gpuType).length;
    if (!hasFeatures(n.total, req.constraint)) reasons.add(`features ${req.constraint!.join("&")}`);
    else if (a.cores > n.total.cores) reasons.add(`${a.cores} cores per node`);
    else if (a.memMiB > n.total.memMiB) reasons.add(`${a.memMiB} MiB of memory per node`);
    else if (a.gpus > gpus) reasons.add(`${a.gpus} ${req.gpuType ?? ""}${req.gpuType ? " " : ""}GPUs per node`);
    else fitting++;
  }
  if (fitting >= (req.nodes ?? 1)) return null;
  if (fitting > 0) return `only ${fitting} node${fitting === 1 ? "" : "s"} can hold one node's part of the job (${perNode} tasks), it asks for ${req.nodes}`;
  return `no node has ${[...reasons].join(", or ")}`;
}

/** Parses a memory size as Slurm does: a number with an optional K, M (default), G or T suffix; MiB. */
export function parseMemory(s: string): number | { error: string } {
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT])?B?$/i.exec(s.trim());
  if (!m) return { error: `"${s}" is not a memory size; give a number with an optional K, M, G or T suffix, e.g. 4G` };
  const factor = { K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024 }[(m[2] ?? "M").toUpperCase() as "K" | "M" | "G" | "T"];
  return Math.ceil(Number(m[1]) * factor);
}

/** Parses one generic resource as in `--gres` and gres.conf: "gpu", "gpu:4", "gpu:a100:4". Only GPUs are consumable here. */
export function parseGres(s: string): { name: string; type?: string; count: number } | { error: string } {
  const parts = s.trim().split(":");
  const name = parts[0] ?? "";
  if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(name)) return { error: `"${s}" is not a generic resource; write NAME[:TYPE][:COUNT], e.g. gpu:a100:2` };
  if (name !== "gpu") return { error: `"${name}" is not a resource ebb knows; only gpu is` };
  let count = 1;
  let type: string | undefined;
  const last = parts.at(-1)!;
  if (parts.length > 1 && /^\d+$/.test(last)) {
    count = Number(last);
    parts.pop();
  }
  if (parts.length === 3) return { error: `"${s}": write gpu[:TYPE][:COUNT]` };
  if (parts.length === 2) type = parts[1];
  if (type !== undefined && !/^[A-Za-z0-9_.-]{1,32}$/.test(type)) return { error: `"${type}" is not a GPU type; letters, digits, '.', '_', '-'` };
  if (count < 1 || count > 1024) return { error: `"${s}": the count must be 1 to 1024` };
  return type === undefined ? { name, count } : { name, type, count };
}
