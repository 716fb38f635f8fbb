/**
 * Which device files are each GPU's, by GPU index: what the agent fences a job off when it does
 * not hold that GPU (device-fence.ts). Shared files (nvidiactl, nvidia-uvm, AMD's kfd) stay open
 * to every job, as under Slurm's ConstrainDevices, which denies only the files of GPUs not given.
 *
 * - NVIDIA: the driver's list (/proc/driver/nvidia/gpus/BUS/information, "Device Minor") in PCI bus
 *   order, the order of nvidia-smi's indices under CUDA_DEVICE_ORDER=PCI_BUS_ID: /dev/nvidiaMINOR;
 *   else /dev/nvidiaN in the order of N.
 * - AMD: each render node of vendor 0x1002 (/dev/dri/renderDN, in the order of N) with its card
 *   node (/dev/dri/cardK).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { GpuVendor } from "./inventory.ts";

const names = (dir: string): string[] => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};
const text = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};
const numbered = (list: string[], re: RegExp): string[] =>
  list
    .filter((n) => re.test(n))
    .sort((a, b) => Number(re.exec(a)![1]) - Number(re.exec(b)![1]));

/** The device files of each GPU the machine has, by index; empty where none are found. */
export function gpuDeviceFiles(vendor: GpuVendor | undefined, dirs = { dev: "/dev", drm: "/sys/class/drm", nvidia: "/proc/driver/nvidia/gpus" }): string[][] {
  if (vendor === "nvidia") {
    const minors = names(dirs.nvidia)
      .sort()
      .map((bus) => /^Device Minor:\s*(\d+)\s*$/m.exec(text(join(dirs.nvidia, bus, "information")) ?? "")?.[1]);
    if (minors.length > 0 && minors.every((m) => m !== undefined)) return minors.map((m) => [join(dirs.dev, `nvidia${m}`)]);
    return numbered(names(dirs.dev), /^nvidia(\d+)$/).map((n) => [join(dirs.dev, n)]);
  }
  if (vendor === "amd")
    return numbered(names(dirs.drm), /^renderD(\d+)$/)
      .filter((n) => text(join(dirs.drm, n, "device", "vendor"))?.trim() === "0x1002")
      .map((n) => [join(dirs.dev, "dri", n), ...numbered(names(join(dirs.drm, n, "device", "drm")), /^card(\d+)$/).map((c) => join(dirs.dev, "dri", c))]);
  return [];
}
