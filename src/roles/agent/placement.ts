/**
 * Where a job's processes run on this node, from its share: which CPUs (the machine's ids), how
 * much memory, which GPUs, and the variables that show the job its GPUs.
 */
import type { Share } from "../../proto/agent.ts";
import type { GpuVendor } from "./inventory.ts";

/** What the node offers, as placement needs it. */
export interface NodeOffer {
  cpus: number;
  memoryMb: number;
  gpus: readonly unknown[];
  gpuVendor?: GpuVendor;
  /** The CPUs the agent may run on: core index i is cpuIds[i], cycling when more cores are offered. */
  cpuIds: readonly number[];
  /** Other nodes run on the same CPUs (a local cluster's agents, `ebb up`, more cores than the host has CPUs). */
  sharedCpus?: boolean;
}

/** What a job's processes here are given: its CPUs (the machine's ids), how many cores it holds here, and the variables that show it its GPUs. */
export interface JobPlacement {
  cpus: number[];
  /** The CPUs are the job's own, so its ranks may be bound to slices of them (see ownsCpus). */
  ownCpus: boolean;
  cores: number;
  /** The job's GPU indices here. */
  gpus: number[];
  vars: Record<string, string>;
  /** The variables that show a process only `some` of the job's GPUs here (one rank's, --ntasks-per-gpu). */
  gpuVarsOf(some: readonly number[]): Record<string, string>;
  /** The CPUs (the machine's ids) of the node's cores `cores` that are the job's: an exact step's own. */
  cpusOf?(cores: readonly number[]): number[];
}

export interface Placement {
  cpus: number[];
  ownCpus: boolean;
  /** 0: no memory limit of the job's own. */
  memMiB: number;
  gpus: number[];
}

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * Whether a node's cores are CPUs of its own. Not when it offers more cores than it has CPUs, nor
 * when other nodes share its CPUs: a job's core there is a CPU another job, here or on another
 * node, is given too, and a job held to it runs its ranks on one CPU while others sit idle
 * (MPICH's rma/atomic_get, 3 ranks on 3 nodes of `ebb up` on 2 CPUs: each node's one-core
 * cpuset put two ranks on CPU 0, 16-21 s; Hydra's 3 ranks unconfined 6-13 s). Such a node runs
 * its jobs on all of its CPUs, and binds a step's ranks only one to a CPU by world rank, where
 * they fit (affinity.ts sharedRankCpus).
 */
export const ownsCpus = (node: NodeOffer): boolean => !node.sharedCpus && node.cpus <= node.cpuIds.length;

/** A job's CPUs, memory and GPUs here; a null share (an old controller's `alloc`) is the whole node. */
export function placementOf(share: Share | null, node: NodeOffer): Placement {
  const own = ownsCpus(node);
  const ids = node.cpuIds.length > 0 ? node.cpuIds : [0];
  const cpus = own ? (share ? share.cores : upTo(node.cpus)).map((i) => ids[i % ids.length]!) : ids;
  return {
    cpus: [...new Set(cpus)].sort((a, b) => a - b),
    ownCpus: own,
    memMiB: share && share.memMiB > 0 ? share.memMiB : node.memoryMb,
    gpus: share ? share.gpus.filter((g) => g < node.gpus.length) : upTo(node.gpus.length),
  };
}

/**
 * The CPUs (the machine's ids) of `cores`, the node's core indices, that are among a job's share
 * (a null share: the whole node), mapped as placementOf maps them (cycling over the CPUs).
 */
export function coreCpus(cores: readonly number[], share: Share | null, node: NodeOffer): number[] {
  const held = new Set(share ? share.cores : upTo(node.cpus));
  const ids = node.cpuIds.length > 0 ? node.cpuIds : [0];
  return [...new Set(cores.filter((c) => held.has(c)).map((i) => ids[i % ids.length]!))].sort((a, b) => a - b);
}

/**
 * The variables that select a job's GPUs, for every process of the job: EBB_GPUS (the indices,
 * empty for none) always; on a node with GPUs, the vendor's own (CUDA_VISIBLE_DEVICES with PCI bus
 * order, as nvidia-smi numbers them; ROCR_VISIBLE_DEVICES), or all three of CUDA's, ROCR's and
 * HIP's where the GPUs were declared and no device says whose. A job without GPUs on a GPU node
 * gets "-1" there, an index that ends the list, so it sees none (CUDA and ROCm alike). Only ROCR's
 * on an AMD node: HIP numbers the GPUs ROCR shows from 0, so a HIP list of the same indices would hide them.
 * `fenced`: the job cannot open the other GPUs (device-fence.ts), so CUDA and ROCm number the ones it
 * sees from 0 and the vendor's list is 0..n-1, as Slurm's under ConstrainDevices; EBB_GPUS keeps the node's indices.
 */
export function gpuVars(gpus: readonly number[], node: Pick<NodeOffer, "gpus" | "gpuVendor">, fenced = false, ofJob: readonly number[] = gpus): Record<string, string> {
  const list = gpus.join(",");
  if (node.gpus.length === 0) return { EBB_GPUS: list };
  // Fenced, a rank shown some of its job's GPUs (`ofJob`) numbers them by their place among the job's.
  const value = (fenced ? gpus.map((g) => ofJob.indexOf(g)).join(",") : list) || "-1";
  if (node.gpuVendor === "nvidia") return { EBB_GPUS: list, CUDA_VISIBLE_DEVICES: value, CUDA_DEVICE_ORDER: "PCI_BUS_ID" };
  if (node.gpuVendor === "amd") return { EBB_GPUS: list, ROCR_VISIBLE_DEVICES: value };
  return { EBB_GPUS: list, CUDA_VISIBLE_DEVICES: value, ROCR_VISIBLE_DEVICES: value, HIP_VISIBLE_DEVICES: value };
}
