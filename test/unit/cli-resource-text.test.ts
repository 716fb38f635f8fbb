/** How the listings print cores, memory and GPUs: requests, shares, node columns, usage. */
import { describe, expect, test } from "bun:test";
import type { JobView, NodeView } from "../../src/api/schemas.ts";
import { gpuTime, mib, nodeColumns, requestText, resourcesColumn, shareText, usageText } from "../../src/cli/resource-text.ts";

const job = (over: Partial<JobView>) => ({ state: "RUNNING", resources: null, shares: [], usage: null, ...over }) as JobView;

describe("resource text", () => {
  test("memory in MiB reads as M, G or T", () => {
    expect([512, 1024, 1536, 16 * 1024, 300 * 1024, 2 * 1024 * 1024, 1.5 * 1024 * 1024].map(mib)).toEqual(["512M", "1G", "1.5G", "16G", "300G", "2T", "1.5T"]);
  });

  test("a request in words, defaults said", () => {
    expect(requestText(null)).toBe("whole nodes");
    expect(requestText({ tasks: 1, cpusPerTask: 1, exclusive: false })).toBe("1 task x 1 core, the default memory per core, shared nodes");
    expect(requestText({ nodes: 1, tasks: 1, cpusPerTask: 20, memPerNodeMiB: 307200, gpusPerNode: 2, exclusive: false })).toBe("1 task x 20 cores, 300G per node, 2 GPUs per node, shared nodes");
    expect(requestText({ tasks: 4, tasksPerNode: 2, cpusPerTask: 2, memPerCpuMiB: 512, gpusPerTask: 1, gpuType: "a100", constraint: ["ib", "avx512"], exclusive: true })).toBe(
      "4 tasks x 2 cores, 2 per node, 512M per core, 1 GPU (a100) per task, features ib&avx512, whole nodes (exclusive)",
    );
  });

  test("an allocation per node, and the compact column of the queue", () => {
    const shares = [
      { node: "node01", cores: "0-3", cpus: 4, memMiB: 8192, gpus: [0, 1] },
      { node: "node02", cores: "0-1,6", cpus: 3, memMiB: 4096, gpus: [] },
    ];
    expect(shares.map((s) => shareText(s))).toEqual(["node01       cores 0-3 (4)  mem 8G  gpus 0,1", "node02       cores 0-1,6 (3)  mem 4G"]);
    expect(resourcesColumn(job({ shares }))).toBe("7c 12G 2g");
    // Pending: what it asks for, as far as the request says.
    expect(resourcesColumn(job({ state: "PENDING", resources: { nodes: 2, tasks: 8, cpusPerTask: 2, memPerNodeMiB: 1024, gpusPerNode: 1, exclusive: false } }))).toBe("16c 2G 2g");
    expect(resourcesColumn(job({ state: "PENDING", resources: { tasks: 1, cpusPerTask: 1, exclusive: false } }))).toBe("1c");
    expect(resourcesColumn(job({ state: "PENDING", resources: { tasks: 2, cpusPerTask: 1, memPerCpuMiB: 100, gpusPerTask: 1, exclusive: false } }))).toBe("2c 200M 2g");
    expect(resourcesColumn(job({ state: "PENDING", resources: { nodes: 2, tasks: 2, cpusPerTask: 1, exclusive: true } }))).toBe("excl");
    expect(resourcesColumn(job({ state: "PENDING" }))).toBe("");
  });

  test("a node's allocated/free/total, and usage", () => {
    const n = { cpus: 8, memoryMb: 16384, gpus: ["a100", "a100", null], allocated: { cpus: 3, memMiB: 3072, gpus: [1] }, free: { cpus: 5, memMiB: 13312, gpus: [0, 2] } } as NodeView;
    expect(nodeColumns(n)).toEqual({ cpus: "3/5/8", memory: "3G/13G/16G", gpus: "1/2/3 a100" });
    expect(nodeColumns({ ...n, gpus: [], allocated: { ...n.allocated, gpus: [] }, free: { ...n.free, gpus: [] } }).gpus).toBe("-");
    expect(usageText(null)).toBe("");
    expect(usageText({ cpuSec: 3723.4, peakMemMiB: 3277 })).toBe("CPU time 1:02:03, peak memory 3.2G");
    expect([gpuTime({ gpuSeconds: 7230.4 }), gpuTime({ gpuSeconds: 0 })]).toEqual(["2:00:30", ""]);
  });
});
