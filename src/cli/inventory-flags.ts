/** The flags that declare what a node offers (`ebb agent`, and `ebb up` for its agents): memory, GPUs, features. */
import { parseGres, parseMemory } from "../domain/resources.ts";
import type { Declared, Inventory } from "../roles/agent/inventory.ts";
import { deviceOf, type Device } from "../roles/agent/device-fence.ts";
import { gpuDeviceFiles } from "../roles/agent/gpu-devices.ts";
import { defineArgs } from "./command.ts";
import { intFlag, UsageError } from "./common.ts";

/** How a memory flag reads in `--help`. */
export const MEMORY_HINT = "a size such as 6G or 512M (a bare number is MiB)";

/** GPU and feature flags, shared by `ebb agent` and `ebb up` (which passes them to its agents). */
export const gresArgs = defineArgs({
  gres: { type: "string", repeat: true, description: "GPUs to offer instead of those detected (nvidia-smi, /dev/nvidia*, AMD's /dev/kfd): gpu:N or gpu:TYPE:N; repeat or comma-separate for several types", valueHint: "gpu[:TYPE]:N" },
  features: { type: "string", description: "Node features jobs may require with --constraint, comma-separated", valueHint: "A,B" },
});

/** --memory 6G: MiB. */
export function memoryFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const mib = parseMemory(value);
  if (typeof mib !== "number") throw new UsageError(`${flag} ${value}: ${mib.error}`);
  return mib;
}

/** --gres gpu:a100:4 (repeated or comma-separated): the GPUs declared, or undefined to detect them. */
export function gresFlag(values: readonly string[] | undefined): Declared["gres"] {
  const items = (values ?? []).flatMap((v) => v.split(",")).filter((v) => v.trim() !== "");
  if (items.length === 0) return undefined;
  const out: NonNullable<Declared["gres"]> = [];
  for (const item of items) {
    const g = parseGres(item);
    if ("error" in g) throw new UsageError(`--gres ${item}: ${g.error}`);
    out.push(g.type === undefined ? { count: g.count } : { type: g.type, count: g.count });
  }
  if (out.reduce((a, g) => a + g.count, 0) > 1024) throw new UsageError("--gres: at most 1024 GPUs on one node");
  return out;
}

/** --features a,b: checked names, without repeats. */
export function featuresFlag(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const names = [...new Set(value.split(",").map((f) => f.trim()).filter(Boolean))];
  for (const f of names) if (!/^[A-Za-z0-9_.-]{1,64}$/.test(f)) throw new UsageError(`--features ${value}: "${f}" is not a feature name; use letters, digits, '.', '_' and '-' (at most 64)`);
  if (names.length > 64) throw new UsageError(`--features: at most 64 features, not ${names.length}`);
  return names;
}

/** The declared part of a node's inventory from these flags (and --cpus). */
export function declaredFlags(a: { cpus?: string; memory?: string; gres?: string[]; features?: string }, memoryName = "--memory", cpusName = "--cpus"): Declared {
  return { cpus: intFlag(a.cpus, cpusName, { max: 65536 }), memoryMb: memoryFlag(a.memory, memoryName), gres: gresFlag(a.gres), features: featuresFlag(a.features) };
}

/**
 * --gpu-devices /dev/nvidia0,/dev/nvidia1: each GPU's device file, in index order (as Slurm's
 * gres.conf File=); without it, the files found for the GPUs detected (gpu-devices.ts), none when
 * they are not one per GPU. `note`: what the agent's log should say of a node left unfenced.
 */
export function gpuDevicesFlag(value: string | undefined, node: Pick<Inventory, "gpus" | "gpuVendor">, note: (message: string) => void = () => {}): Device[][] {
  const gpus = node.gpus.length;
  const resolve = (files: string[][], flag?: string) =>
    files.map((list) =>
      list.map((file) => {
        const d = deviceOf(file);
        if ("error" in d) throw new UsageError(`${flag ?? "a GPU's device file"} ${d.error}`);
        return d;
      }),
    );
  if (value !== undefined) {
    const files = value.split(",").map((f) => f.trim()).filter(Boolean);
    if (files.length !== gpus) throw new UsageError(`--gpu-devices: ${files.length} file${files.length === 1 ? "" : "s"} for ${gpus} GPU${gpus === 1 ? "" : "s"}; give one device file per GPU, in index order (e.g. /dev/nvidia0,/dev/nvidia1)`);
    return resolve(files.map((f) => [f]), "--gpu-devices");
  }
  if (gpus === 0) return [];
  const found = gpuDeviceFiles(node.gpuVendor);
  if (found.length !== gpus) {
    note(`${gpus} GPUs and ${found.length} found among the device files: jobs are not fenced off the GPUs they do not hold (name each GPU's file with --gpu-devices)`);
    return [];
  }
  try {
    return resolve(found);
  } catch (e) {
    note(`${(e as Error).message}: jobs are not fenced off the GPUs they do not hold`);
    return [];
  }
}
