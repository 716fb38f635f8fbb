/** A submission's resource fields become the request the scheduler places, with Slurm's defaults. */
import { describe, expect, test } from "bun:test";
import { requestFrom } from "../../src/domain/request.ts";

describe("requestFrom", () => {
  test("nothing asked: one task of one core on a shared node, no GPUs, memory left to the default", () => {
    expect(requestFrom({})).toEqual({ tasks: 1, cpusPerTask: 1, exclusive: false });
  });

  test("nodes alone: one task per node; with tasks per node, that many on each", () => {
    expect(requestFrom({ nodes: 3 })).toEqual({ nodes: 3, tasks: 3, cpusPerTask: 1, exclusive: false });
    expect(requestFrom({ nodes: 2, tasksPerNode: 4 })).toEqual({ nodes: 2, tasks: 8, tasksPerNode: 4, cpusPerTask: 1, exclusive: false });
    // -n with --ntasks-per-node: Slurm's ceil(n / per node) nodes, each holding the count per node (-n 3 --ntasks-per-node=2: 2(x2)).
    expect(requestFrom({ tasks: 6, tasksPerNode: 4 })).toEqual({ nodes: 2, tasks: 6, tasksPerNode: 4, cpusPerTask: 1, exclusive: false });
    expect(requestFrom({ tasks: 3, tasksPerNode: 2 })).toEqual({ nodes: 2, tasks: 3, tasksPerNode: 2, cpusPerTask: 1, exclusive: false });
  });

  test("a range's lower bound and the listed nodes set the least nodes", () => {
    expect(requestFrom({ minNodes: 2, maxNodes: 4 }).nodes).toBe(2);
    expect(requestFrom({ nodelist: ["a", "b", "c"] }).nodes).toBe(3);
    expect(requestFrom({ nodes: 1, nodelist: ["a", "b"] }).nodes).toBe(2);
  });

  test("cores, memory, GPUs and features are carried over", () => {
    expect(requestFrom({ nodes: 1, tasks: 1, cpusPerTask: 20, mem: 307200, gpusPerNode: 2, gpuType: "a100", constraint: ["ib", "avx512"] })).toEqual({
      nodes: 1,
      tasks: 1,
      cpusPerTask: 20,
      cpusPerTaskSet: true,
      memPerNodeMiB: 307200,
      gpusPerNode: 2,
      gpuType: "a100",
      constraint: ["ib", "avx512"],
      exclusive: false,
    });
    expect(requestFrom({ tasks: 4, memPerCpu: 512, gpusPerTask: 1 })).toEqual({ tasks: 4, cpusPerTask: 1, memPerCpuMiB: 512, gpusPerTask: 1, exclusive: false });
    expect(requestFrom({ gpus: 3 })).toMatchObject({ gpus: 3 });
  });

  test("cores and memory per GPU (--cpus-per-gpu, --mem-per-gpu) become the task shape, and are kept as asked", () => {
    // One task on a node's GPUs: it gets all their cores; the memory is per node.
    expect(requestFrom({ gpusPerNode: 2, cpusPerGpu: 8, memPerGpu: 40960 })).toEqual({ tasks: 1, cpusPerTask: 16, memPerNodeMiB: 81920, gpusPerNode: 2, cpusPerGpu: 8, memPerGpuMiB: 40960, exclusive: false });
    // A node's GPUs' cores shared out over its tasks (rounded up).
    expect(requestFrom({ nodes: 2, tasksPerNode: 4, gpusPerNode: 4, cpusPerGpu: 6 })).toMatchObject({ cpusPerTask: 6, tasks: 8 });
    expect(requestFrom({ nodes: 1, tasks: 3, gpusPerNode: 2, cpusPerGpu: 4 })).toMatchObject({ cpusPerTask: 3 });
    // The job's GPUs over its nodes.
    expect(requestFrom({ gpus: 4, cpusPerGpu: 4, memPerGpu: 1024 })).toMatchObject({ cpusPerTask: 16, memPerNodeMiB: 4096 });
    expect(requestFrom({ nodes: 2, gpus: 4, cpusPerGpu: 4 })).toMatchObject({ cpusPerTask: 8, tasks: 2 });
    // Per-task GPUs: each task its own GPUs' cores; memory per node when the node's tasks are known, else per core.
    expect(requestFrom({ tasks: 4, gpusPerTask: 2, cpusPerGpu: 3, memPerGpu: 1000 })).toMatchObject({ cpusPerTask: 6, memPerCpuMiB: 334 });
    expect(requestFrom({ nodes: 2, tasksPerNode: 2, gpusPerTask: 1, cpusPerGpu: 4, memPerGpu: 1000 })).toMatchObject({ cpusPerTask: 4, memPerNodeMiB: 2000 });
    // Memory per GPU with cores per task: the cores stay as given.
    expect(requestFrom({ cpusPerTask: 5, gpusPerTask: 1, memPerGpu: 1000 })).toMatchObject({ cpusPerTask: 5, cpusPerTaskSet: true, memPerCpuMiB: 200 });
    // An elastic job with GPUs per node: a node of that shape.
    expect(requestFrom({ elastic: true, minNodes: 1, maxNodes: 4, gpusPerNode: 1, cpusPerGpu: 2 })).toMatchObject({ exclusive: false, tasksPerNode: 1, cpusPerTask: 2 });
  });

  test("--mincpus: at least that many cores a node, over the node's tasks; never fewer than -c gives", () => {
    expect(requestFrom({ nodes: 1, minCpus: 24 })).toEqual({ nodes: 1, tasks: 1, cpusPerTask: 24, minCpus: 24, exclusive: false });
    expect(requestFrom({ nodes: 2, tasksPerNode: 4, minCpus: 10 })).toMatchObject({ cpusPerTask: 3, tasks: 8 });
    expect(requestFrom({ cpusPerTask: 20, minCpus: 15 })).toMatchObject({ cpusPerTask: 20, cpusPerTaskSet: true });
    expect(requestFrom({ gpusPerNode: 1, cpusPerGpu: 4, minCpus: 8 })).toMatchObject({ cpusPerTask: 8 });
  });

  test("-c 1 is told from no -c (Slurm sets SLURM_CPUS_PER_TASK only when -c was given)", () => {
    expect(requestFrom({ cpusPerTask: 1 })).toEqual({ tasks: 1, cpusPerTask: 1, cpusPerTaskSet: true, exclusive: false });
    expect(requestFrom({}).cpusPerTaskSet).toBeUndefined();
  });

  test("--exclusive takes whole nodes", () => {
    expect(requestFrom({ nodes: 2, exclusive: true })).toEqual({ nodes: 2, tasks: 2, cpusPerTask: 1, exclusive: true });
  });

  test("an elastic job is exclusive whole nodes unless it gives a per-node shape", () => {
    expect(requestFrom({ elastic: true, minNodes: 1, maxNodes: 4 })).toEqual({ nodes: 1, tasks: 1, tasksPerNode: 1, cpusPerTask: 1, exclusive: true });
    expect(requestFrom({ elastic: true, maxNodes: 4 }).nodes).toBe(4);
    for (const shape of [{ tasksPerNode: 2 }, { cpusPerTask: 4 }, { mem: 1024 }, { memPerCpu: 256 }, { gpusPerNode: 1 }, { gpusPerTask: 1 }]) expect(requestFrom({ elastic: true, minNodes: 2, maxNodes: 4, ...shape }).exclusive).toBe(false);
    expect(requestFrom({ elastic: true, minNodes: 2, maxNodes: 4, tasksPerNode: 2, cpusPerTask: 4 })).toEqual({ nodes: 2, tasks: 4, tasksPerNode: 2, cpusPerTask: 4, cpusPerTaskSet: true, exclusive: false });
    expect(requestFrom({ elastic: true, minNodes: 2, cpusPerTask: 4, exclusive: true }).exclusive).toBe(true);
  });

  test("an overcommitted job is allocated as one task per node (Slurm's --overcommit)", () => {
    expect(requestFrom({ tasks: 16, overcommit: true })).toEqual({ tasks: 1, cpusPerTask: 1, exclusive: false });
    expect(requestFrom({ nodes: 2, tasks: 16, overcommit: true })).toEqual({ nodes: 2, tasks: 2, tasksPerNode: 1, cpusPerTask: 1, exclusive: false });
  });
});
