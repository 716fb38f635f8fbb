/** Cores, memory and GPUs as the listings print them: requests, shares, node totals, usage. */
import type { JobView, NodeView, ShareView } from "../api/schemas.ts";
import { formatDuration } from "../util/time.ts";

type Request = NonNullable<JobView["resources"]>;

/** MiB as people read it: 512M, 1.5G, 300G, 2T. */
export function mib(m: number): string {
  if (m < 1024) return `${Math.round(m)}M`;
  const [v, unit] = m < 1024 * 1024 ? [m / 1024, "G"] : [m / (1024 * 1024), "T"];
  return `${v >= 100 ? Math.round(v) : Math.round(v * 10) / 10}${unit}`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** A request in words: "4 tasks x 2 cores, 512M per core, 1 GPU (a100) per task, features ib&avx512, exclusive". */
export function requestText(r: Request | null): string {
  if (r === null) return "whole nodes";
  const perGpu = (what: string | undefined) => (what === undefined ? "" : ` (${what} per GPU)`);
  const parts = [`${r.tasks === undefined ? "" : `${plural(r.tasks, "task")} x `}${plural(r.cpusPerTask, "core")}${r.tasks === undefined ? " per task" : ""}${perGpu(r.cpusPerGpu?.toString())}${r.minCpus !== undefined ? ` (at least ${r.minCpus} a node)` : ""}${r.tasksPerNode ? `, ${r.tasksPerNode} per node` : ""}`];
  const memory = r.memPerNodeMiB !== undefined ? `${mib(r.memPerNodeMiB)} per node` : r.memPerCpuMiB !== undefined ? `${mib(r.memPerCpuMiB)} per core` : "the default memory per core";
  parts.push(memory + perGpu(r.memPerGpuMiB === undefined ? undefined : mib(r.memPerGpuMiB)));
  const type = r.gpuType ? ` (${r.gpuType})` : "";
  if (r.gpus !== undefined) parts.push(`${plural(r.gpus, "GPU")}${type}`);
  if (r.gpusPerNode !== undefined) parts.push(`${plural(r.gpusPerNode, "GPU")}${type} per node`);
  if (r.gpusPerTask !== undefined) parts.push(`${plural(r.gpusPerTask, "GPU")}${type} per task`);
  if (r.constraint?.length) parts.push(`features ${r.constraint.join("&")}`);
  parts.push(r.exclusive ? "whole nodes (exclusive)" : "shared nodes");
  return parts.join(", ");
}

/** One node of an allocation: "node01  cores 0-3 (4)  mem 16G  gpus 0,1". */
export function shareText(s: ShareView, width = 12): string {
  return `${s.node.padEnd(width)} cores ${s.cores} (${s.cpus})  mem ${mib(s.memMiB)}${s.gpus.length > 0 ? `  gpus ${s.gpus.join(",")}` : ""}`;
}

/** "8c 32G 2g": cores, memory and GPUs in all; what it holds, or while pending what it asks for (as far as the request says). */
export function resourcesColumn(j: JobView): string {
  if (j.shares.length > 0) {
    const sum = (f: (s: ShareView) => number) => j.shares.reduce((k, s) => k + f(s), 0);
    const gpus = sum((s) => s.gpus.length);
    return `${sum((s) => s.cpus)}c ${mib(sum((s) => s.memMiB))}${gpus > 0 ? ` ${gpus}g` : ""}`;
  }
  const r = j.resources;
  if (r === null || j.state !== "PENDING") return "";
  if (r.exclusive) return "excl";
  const nodes = r.nodes ?? 1;
  const cores = (r.tasks ?? nodes) * r.cpusPerTask;
  const mem = r.memPerNodeMiB !== undefined ? r.memPerNodeMiB * nodes : r.memPerCpuMiB !== undefined ? r.memPerCpuMiB * cores : undefined;
  const gpus = r.gpus ?? (r.gpusPerNode !== undefined ? r.gpusPerNode * nodes : r.gpusPerTask !== undefined ? r.gpusPerTask * (r.tasks ?? nodes) : 0);
  return `${cores}c${mem !== undefined ? ` ${mib(mem)}` : ""}${gpus > 0 ? ` ${gpus}g` : ""}`;
}

/** Allocated/free/total, as sinfo's CPUS(A/I/O/T) column: "2/6/8"; memory sized, "-" for a node without GPUs. */
export function nodeColumns(n: NodeView): { cpus: string; memory: string; gpus: string } {
  const types = [...new Set(n.gpus.filter((t): t is string => t !== null))];
  return {
    cpus: `${n.allocated.cpus}/${n.free.cpus}/${n.cpus}`,
    memory: `${mib(n.allocated.memMiB)}/${mib(n.free.memMiB)}/${mib(n.memoryMb)}`,
    gpus: n.gpus.length === 0 ? "-" : `${n.allocated.gpus.length}/${n.free.gpus.length}/${n.gpus.length}${types.length > 0 ? ` ${types.join(",")}` : ""}`,
  };
}

/** CPU time and peak memory: "1:02:03, peak 3.2G"; empty until known. */
/** GPU time held (GPUs times the time held, as sacct's CPUTime counts CPUs), as a duration; "" for a job that held none. */
export function gpuTime(j: Pick<JobView, "gpuSeconds">): string {
  return j.gpuSeconds > 0 ? formatDuration(j.gpuSeconds) : "";
}

export function usageText(u: JobView["usage"]): string {
  return u === null ? "" : `CPU time ${formatDuration(u.cpuSec)}, peak memory ${mib(u.peakMemMiB)}`;
}
