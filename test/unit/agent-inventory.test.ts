/**
 * What an agent offers and where it puts a job's processes, as plain data: CPU lists, the memory
 * reserve, GPU detection from nvidia-smi's output and from device files, the GPU variables,
 * ranks' core slices, the node's jobs as `shares` say, the job.usage reports kept for a
 * reconnect, and the inventory flags' errors.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatIndexList, parseIndexList } from "../../src/domain/index-list.ts";
import { allowedCpus, declaredGpus, detectGpus, gpuType, gpuVendor, parseNvidiaSmi, usableMemoryMb } from "../../src/roles/agent/inventory.ts";
import { gpuVars, ownsCpus, placementOf, coreCpus } from "../../src/roles/agent/placement.ts";
import { rankSlices, sharedRankCpus } from "../../src/roles/agent/affinity.ts";
import { NodeAllocation } from "../../src/roles/agent/allocation.ts";
import { UsageReports } from "../../src/roles/agent/usage-reports.ts";
import { featuresFlag, gresFlag, memoryFlag } from "../../src/cli/inventory-flags.ts";

const dir = mkdtempSync(join(tmpdir(), "ebb-inventory-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("index lists", () => {
  test("parse and format the kernel's and Slurm's range syntax", () => {
    expect(parseIndexList("0-3,8,10-11")).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(parseIndexList("5,1,1")).toEqual([1, 5]);
    expect(parseIndexList("")).toEqual([]);
    expect(formatIndexList([11, 0, 1, 2, 3, 8, 10])).toBe("0-3,8,10-11");
    expect(formatIndexList([])).toBe("");
    expect(parseIndexList("3-1")).toMatchObject({ error: expect.stringContaining('"3-1"') });
    expect(parseIndexList("a")).toMatchObject({ error: expect.any(String) });
  });
});

describe("inventory", () => {
  test("cores are the CPUs of the agent's affinity", () => {
    expect(allowedCpus("Name:\tbun\nCpus_allowed:\tf0\nCpus_allowed_list:\t4-7\n")).toEqual([4, 5, 6, 7]);
    expect(allowedCpus("nothing here")).toEqual([0]);
  });

  test("memory is MemTotal (or a lower cgroup limit) less 5 %, at most 2 GiB", () => {
    expect(usableMemoryMb("MemTotal:       8388608 kB\n")).toBe(8192 - 410);
    expect(usableMemoryMb("MemTotal:       268435456 kB\n")).toBe(262144 - 2048);
    expect(usableMemoryMb("MemTotal:       268435456 kB\n", 4 * 2 ** 30)).toBe(4096 - 205);
  });

  test("GPU types come from their names, and nvidia-smi's rows are ordered by index", () => {
    expect(gpuType("NVIDIA A100-SXM4-80GB")).toBe("a100");
    expect(gpuType("Tesla V100-PCIE-16GB")).toBe("v100");
    expect(gpuType("NVIDIA GeForce RTX 3090")).toBe("rtx_3090");
    expect(gpuType("NVIDIA H100 80GB HBM3")).toBe("h100");
    expect(gpuType("")).toBeNull();
    expect(parseNvidiaSmi("1, NVIDIA A100-SXM4-80GB\n0, Tesla V100-PCIE-16GB\n\n")).toEqual(["v100", "a100"]);
  });

  test("without nvidia-smi, GPUs are counted from device files: NVIDIA's, else AMD's render nodes", () => {
    const dev = join(dir, "dev");
    const drm = join(dir, "drm");
    mkdirSync(dev);
    for (const n of ["nvidiactl", "nvidia0", "nvidia1", "nvidia-uvm"]) writeFileSync(join(dev, n), "");
    expect(detectGpus(dev, drm)).toEqual([null, null]);
    expect(gpuVendor(dev)).toBe("nvidia");
    const amdDev = join(dir, "amd-dev");
    mkdirSync(amdDev);
    writeFileSync(join(amdDev, "kfd"), "");
    for (const [n, vendor] of [["renderD128", "0x1002"], ["renderD129", "0x1002"], ["renderD130", "0x8086"]] as const) {
      mkdirSync(join(drm, n, "device"), { recursive: true });
      writeFileSync(join(drm, n, "device", "vendor"), `${vendor}\n`);
    }
    expect(detectGpus(amdDev, drm)).toEqual([null, null]);
    expect(gpuVendor(amdDev)).toBe("amd");
    expect(detectGpus(join(dir, "none"), drm)).toEqual([]);
    expect(gpuVendor(join(dir, "none"))).toBeUndefined();
  });

  test("declared GPUs keep the order and types given", () => {
    expect(declaredGpus([{ type: "a100", count: 2 }, { count: 1 }])).toEqual(["a100", "a100", null]);
  });
});

describe("placement", () => {
  const node = { cpus: 4, memoryMb: 4000, gpus: [null, null, null, null], cpuIds: [2, 3, 6, 7] };

  test("a share's core indices are the agent's CPUs in order, cycling when more cores are offered", () => {
    expect(placementOf({ cores: [1, 2], memMiB: 1000, gpus: [3] }, node)).toEqual({ cpus: [3, 6], ownCpus: true, memMiB: 1000, gpus: [3] });
    expect(placementOf({ cores: [0, 5], memMiB: 0, gpus: [9] }, { ...node, cpuIds: [0, 1, 2, 3] })).toEqual({ cpus: [0, 1], ownCpus: true, memMiB: 4000, gpus: [] });
    expect(placementOf(null, node)).toEqual({ cpus: [2, 3, 6, 7], ownCpus: true, memMiB: 4000, gpus: [0, 1, 2, 3] });
  });

  test("a node with more cores than CPUs, or whose CPUs other nodes share, gives every job all of its CPUs", () => {
    const one = { cores: [1], memMiB: 1000, gpus: [] };
    expect(placementOf(one, { ...node, cpus: 5 })).toEqual({ cpus: [2, 3, 6, 7], ownCpus: false, memMiB: 1000, gpus: [] });
    expect(placementOf(one, { ...node, sharedCpus: true })).toEqual({ cpus: [2, 3, 6, 7], ownCpus: false, memMiB: 1000, gpus: [] });
    expect(placementOf(one, { ...node, cpus: 1, sharedCpus: true })).toEqual({ cpus: [2, 3, 6, 7], ownCpus: false, memMiB: 1000, gpus: [] });
    expect(ownsCpus(node)).toBe(true);
  });

  test("an exact step's cores are the CPUs of those among the job's, cycling as the job's do", () => {
    const share = { cores: [1, 2], memMiB: 1000, gpus: [] };
    expect(coreCpus([2, 1, 3], share, node)).toEqual([3, 6]);
    expect(coreCpus([0], share, node)).toEqual([]);
    expect(coreCpus([1, 5], null, { ...node, cpus: 6 })).toEqual([3]);
  });

  test("GPU variables: the vendor's, all three where undetected, -1 for none on a GPU node, EBB_GPUS always", () => {
    expect(gpuVars([1, 3], { gpus: [null, null, null, null], gpuVendor: "nvidia" })).toEqual({ EBB_GPUS: "1,3", CUDA_VISIBLE_DEVICES: "1,3", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
    expect(gpuVars([2], { gpus: [null, null, null], gpuVendor: "amd" })).toEqual({ EBB_GPUS: "2", ROCR_VISIBLE_DEVICES: "2" });
    expect(gpuVars([0], { gpus: ["a100"] })).toEqual({ EBB_GPUS: "0", CUDA_VISIBLE_DEVICES: "0", ROCR_VISIBLE_DEVICES: "0", HIP_VISIBLE_DEVICES: "0" });
    // Fenced off the others, a job sees its own GPUs only, and the vendors number them from 0.
    expect(gpuVars([1, 3], { gpus: [null, null, null, null], gpuVendor: "nvidia" }, true)).toEqual({ EBB_GPUS: "1,3", CUDA_VISIBLE_DEVICES: "0,1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
    expect(gpuVars([], { gpus: [null, null], gpuVendor: "amd" }, true)).toEqual({ EBB_GPUS: "", ROCR_VISIBLE_DEVICES: "-1" });
    // One rank's GPU of its job's 1 and 3 (--ntasks-per-gpu): GPU 3, which CUDA numbers 1 behind the fence.
    expect(gpuVars([3], { gpus: [null, null, null, null], gpuVendor: "nvidia" }, true, [1, 3])).toEqual({ EBB_GPUS: "3", CUDA_VISIBLE_DEVICES: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
    expect(gpuVars([3], { gpus: [null, null, null, null], gpuVendor: "nvidia" }, false, [1, 3])).toEqual({ EBB_GPUS: "3", CUDA_VISIBLE_DEVICES: "3", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
    expect(gpuVars([], { gpus: ["a100"], gpuVendor: "nvidia" })).toEqual({ EBB_GPUS: "", CUDA_VISIBLE_DEVICES: "-1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
    expect(gpuVars([], { gpus: [] })).toEqual({ EBB_GPUS: "" });
  });

  test("ranks get contiguous slices of the job's CPUs, as even as they go; more ranks than CPUs each take them all", () => {
    expect(rankSlices([0, 1, 2, 3], 2)).toEqual([[0, 1], [2, 3]]);
    expect(rankSlices([0, 1, 2, 3, 4], 2)).toEqual([[0, 1, 2], [3, 4]]);
    expect(rankSlices([4, 5], 2)).toEqual([[4], [5]]);
    expect(rankSlices([4, 5], 3)).toEqual([[4, 5], [4, 5], [4, 5]]);
    expect(rankSlices([4, 5], 1)).toEqual([[4, 5]]);
  });

  test("on a node whose CPUs others share, a step's ranks take one CPU each by world rank if they fit, else none", () => {
    expect(sharedRankCpus([0, 1], [1], 2)).toEqual([[1]]);
    expect(sharedRankCpus([0, 1, 2, 3], [2, 3], 4)).toEqual([[2], [3]]);
    expect(sharedRankCpus([0, 1], [2], 3)).toBeUndefined();
  });
});

describe("the node's jobs", () => {
  test("shares replace the set: jobs that came, changed their share or left are told, the others not", () => {
    const seen: string[] = [];
    const a = new NodeAllocation((id, now) => seen.push(now ? `${id}:${now.share?.cores.join("") ?? "whole"}` : `${id}:gone`));
    const share = (cores: number[]) => ({ cores, memMiB: 100, gpus: [] });
    a.setAll([{ jobId: 1, user: "u", share: share([0]) }, { jobId: 2, user: null, share: share([1]) }]);
    a.setAll([{ jobId: 1, user: "u", share: share([0]) }, { jobId: 2, user: null, share: share([1, 2]) }, { jobId: 3, user: "v", share: share([3]) }]);
    a.setAll([{ jobId: 3, user: "v", share: share([3]) }]);
    a.setOnly(4, "w");
    expect(seen).toEqual(["1:0", "2:1", "2:12", "3:3", "1:gone", "2:gone", "3:gone", "4:whole"]);
    expect(a.holds(4) && !a.holds(3)).toBe(true);
    expect(a.userOf(4)).toBe("w");
  });

  test("a launch waiting for its job hears of it from shares", async () => {
    const a = new NodeAllocation();
    const waiting = a.waitFor(7, 5_000);
    a.setAll([{ jobId: 7, user: null, share: { cores: [0], memMiB: 1, gpus: [] } }]);
    expect(await waiting).toBe(true);
  });

  test("a wait cancelled (its launch's connection closed) ends false at once, and shares that come later do not wake it", async () => {
    const a = new NodeAllocation();
    const cancel = new AbortController();
    const waiting = a.waitFor(7, 60_000, cancel.signal);
    cancel.abort();
    expect(await waiting).toBe(false);
    a.setAll([{ jobId: 7, user: null, share: { cores: [0], memMiB: 1, gpus: [] } }]);
    expect(await waiting).toBe(false);
    expect(await a.waitFor(8, 60_000, cancel.signal)).toBe(false);
  });
});

describe("job.usage reports", () => {
  const usage = { cpuSec: 1.5, peakMemMiB: 20, oomKills: 0 };

  test("kept while the job is the node's or unsent, sent again after a reconnect, dropped once sent after it left", () => {
    let open = false;
    const held = new Set([1, 2]);
    const sent: number[] = [];
    const r = new UsageReports((m) => (open ? (sent.push(m.jobId), true) : false), (id) => held.has(id));
    r.report(1, usage); // channel closed: kept
    open = true;
    r.report(2, usage); // sent, still held: kept
    held.delete(2);
    r.left(2); // sent before it left: final
    r.resend();
    expect(sent).toEqual([2, 1]);
    held.delete(1);
    r.resend(); // sent after job 1 left: final
    r.resend();
    expect(sent).toEqual([2, 1, 1]);
  });

  test("a command job's usage waits for its exit and goes inside it, not on its own; an OOM kill goes at once", () => {
    const sent: number[] = [];
    const r = new UsageReports((m) => (sent.push(m.jobId), true), () => true);
    r.reportAtExit(1, usage);
    r.reportAtExit(2, { ...usage, oomKills: 1 });
    expect(sent).toEqual([2]);
    expect(r.takeAtExit(1)).toEqual(usage);
    expect(r.takeAtExit(1)).toBeUndefined();
    r.flush(1);
    r.resend();
    expect(sent).toEqual([2, 2]);
  });
});

describe("inventory flags", () => {
  test("are checked, naming the flag and what to write", () => {
    expect(memoryFlag("6G", "--memory")).toBe(6144);
    expect(memoryFlag("512", "--memory")).toBe(512);
    expect(() => memoryFlag("lots", "--memory")).toThrow(/--memory lots: .*e.g. 4G/);
    expect(gresFlag(["gpu:a100:2,gpu:1", "gpu:v100:1"])).toEqual([{ type: "a100", count: 2 }, { count: 1 }, { type: "v100", count: 1 }]);
    expect(gresFlag([])).toBeUndefined();
    expect(() => gresFlag(["mic:2"])).toThrow(/--gres mic:2: "mic" is not a resource ebb knows/);
    expect(() => gresFlag(["gpu:1000", "gpu:100"])).toThrow(/at most 1024 GPUs/);
    expect(featuresFlag("ib, fast,ib")).toEqual(["ib", "fast"]);
    expect(() => featuresFlag("a b")).toThrow(/"a b" is not a feature name/);
  });
});
