/**
 * What a node offers, as its agent reports it in its hello: cores, memory, GPUs and features,
 * detected on the machine or declared (`ebb agent --cpus --memory --gres --features`).
 *
 * - Cores: the CPUs the agent may run on (its affinity, which a cgroup cpuset bounds). Core index
 *   i of a job's share is the i-th of them; more cores declared than there are CPUs cycle over
 *   them (`ebb up` runs several nodes on one machine).
 * - Memory: MemTotal, or the agent's cgroup memory.max when lower, less a reserve for the system
 *   (5 %, at most 2 GiB), as Slurm's MemSpecLimit keeps some back.
 * - GPUs: `nvidia-smi`'s list (index order = PCI bus order, so jobs get CUDA_DEVICE_ORDER=PCI_BUS_ID),
 *   else /dev/nvidiaN, else AMD's /dev/kfd with the render nodes of vendor 0x1002.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseIndexList } from "../../domain/index-list.ts";
import { SYSTEM_PATH } from "../system-path.ts";

export interface Inventory {
  cpus: number;
  memoryMb: number;
  /** One entry per GPU index: its type, or null. */
  gpus: (string | null)[];
  /** Whose GPUs the machine has (their device files), which says which variables select them; undefined: none found. */
  gpuVendor?: GpuVendor;
  features: string[];
}

export type GpuVendor = "nvidia" | "amd";

/** What `ebb agent`'s flags declare; anything absent is detected. */
export interface Declared {
  cpus?: number;
  memoryMb?: number;
  gres?: { type?: string; count: number }[];
  features?: string[];
}

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

/** The CPU ids this process may run on (sched_getaffinity, as /proc/self/status says), ascending. */
export function allowedCpus(status = readText("/proc/self/status") ?? ""): number[] {
  const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1];
  const ids = list === undefined ? undefined : parseIndexList(list);
  return ids && !("error" in ids) && ids.length > 0 ? ids : [0];
}

/** What the system keeps back: 5 % of the memory, at most 2 GiB. */
export const memoryReserveMiB = (totalMiB: number): number => Math.min(2048, Math.ceil(totalMiB * 0.05));

/** MiB jobs may use: MemTotal (or a lower cgroup limit of the agent's, `limitBytes`) less the reserve. */
export function usableMemoryMb(meminfo = readText("/proc/meminfo") ?? "", limitBytes?: number): number {
  const kb = Number(/^MemTotal:\s*(\d+)\s*kB/m.exec(meminfo)?.[1] ?? 0);
  let total = Math.floor(kb / 1024);
  if (limitBytes !== undefined && limitBytes > 0) total = Math.min(total || Infinity, Math.floor(limitBytes / 2 ** 20));
  return Math.max(0, total - memoryReserveMiB(total));
}

/**
 * A GPU's type from its marketing name, as `--gres gpu:TYPE` names it: vendor words dropped, the
 * model's first word up to its first '-' ("NVIDIA A100-SXM4-80GB" → a100, "Tesla V100-PCIE-16GB"
 * → v100), with the next word after a series name ("NVIDIA GeForce RTX 3090" → rtx_3090).
 */
export function gpuType(name: string): string | null {
  const words = name.toLowerCase().split(/\s+/).filter((w) => w && !["nvidia", "tesla", "geforce", "quadro", "amd", "radeon", "instinct"].includes(w));
  const first = words[0]?.split("-")[0] ?? "";
  const type = (/^[a-z]+$/.test(first) && words[1] ? `${first}_${words[1].split("-")[0]}` : first).replace(/[^a-z0-9_.]/g, "").slice(0, 32);
  return type || null;
}

/** GPUs from `nvidia-smi --query-gpu=index,name --format=csv,noheader` output, by index. */
export function parseNvidiaSmi(text: string): (string | null)[] {
  const rows: { index: number; type: string | null }[] = [];
  for (const line of text.split("\n")) {
    const m = /^\s*(\d+)\s*,\s*(.+?)\s*$/.exec(line);
    if (m) rows.push({ index: Number(m[1]), type: gpuType(m[2]!) });
  }
  return rows.sort((a, b) => a.index - b.index).map((r) => r.type);
}

/** The machine's GPUs: NVIDIA's (nvidia-smi, else device files), else AMD's; none when neither is there. */
export function detectGpus(dev = "/dev", drm = "/sys/class/drm"): (string | null)[] {
  const smi = Bun.which("nvidia-smi", { PATH: `${process.env.PATH ?? ""}:${SYSTEM_PATH}` });
  if (smi) {
    try {
      const p = Bun.spawnSync([smi, "--query-gpu=index,name", "--format=csv,noheader"], { stdout: "pipe", stderr: "ignore", timeout: 20_000 });
      const gpus = p.exitCode === 0 ? parseNvidiaSmi(p.stdout.toString()) : [];
      if (gpus.length > 0) return gpus;
    } catch {
      /* fall back to the device files */
    }
  }
  const names = (dir: string) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  };
  const nvidia = names(dev).filter((n) => /^nvidia\d+$/.test(n)).length;
  if (nvidia > 0) return Array.from({ length: nvidia }, () => null);
  if (existsSync(join(dev, "kfd"))) {
    const amd = names(drm).filter((n) => /^renderD\d+$/.test(n) && readText(join(drm, n, "device", "vendor"))?.trim() === "0x1002").length;
    return Array.from({ length: amd }, () => null);
  }
  return [];
}

/** Whose GPU devices the machine has: NVIDIA's (/dev/nvidiaN), AMD's (/dev/kfd), or none. */
export function gpuVendor(dev = "/dev"): GpuVendor | undefined {
  try {
    if (readdirSync(dev).some((n) => /^nvidia\d+$/.test(n))) return "nvidia";
  } catch {
    return undefined;
  }
  return existsSync(join(dev, "kfd")) ? "amd" : undefined;
}

/** GPUs as declared by `--gres` entries, in the order given. */
export function declaredGpus(gres: readonly { type?: string; count: number }[]): (string | null)[] {
  return gres.flatMap((g) => Array.from({ length: g.count }, () => g.type ?? null));
}

/** The agent's own cgroup v2 memory.max in bytes, when it has a limit. */
function ownMemoryLimit(cgroup: string | undefined): number | undefined {
  const max = cgroup === undefined ? undefined : readText(join(cgroup, "memory.max"))?.trim();
  return max && /^\d+$/.test(max) ? Number(max) : undefined;
}

/** The node's inventory: what is declared, the rest detected. `cgroup`: the agent's own cgroup v2 directory, if any. */
export function inventory(declared: Declared, cgroup?: string): Inventory {
  return {
    cpus: declared.cpus ?? allowedCpus().length,
    memoryMb: declared.memoryMb ?? usableMemoryMb(undefined, ownMemoryLimit(cgroup)),
    gpus: declared.gres ? declaredGpus(declared.gres) : detectGpus(),
    gpuVendor: gpuVendor(),
    features: [...(declared.features ?? [])],
  };
}
