import { describe, expect, test } from "bun:test";
import { amountFor, defaultMemPerCpu, fitOn, hasFeatures, neverFits, parseGres, parseMemory, usableGpus, type NodeFree, type NodeResources, type ResourceRequest } from "../../src/domain/resources.ts";

const node = (over: Partial<NodeResources> = {}): NodeResources => ({ cores: 8, memMiB: 16_000, gpus: [], features: [], ...over });
const req = (over: Partial<ResourceRequest> = {}): ResourceRequest => ({ cpusPerTask: 1, exclusive: false, ...over });
const free = (over: Partial<NodeFree> = {}): NodeFree => ({ name: "n1", total: node(), cores: [0, 1, 2, 3, 4, 5, 6, 7], memMiB: 16_000, gpus: [], idle: true, ...over });

describe("domain/resources: what a request needs of a node", () => {
  test("default memory per core: the cluster's setting, else the node's memory over its cores", () => {
    expect(defaultMemPerCpu(node())).toBe(2000);
    expect(defaultMemPerCpu(node(), 500)).toBe(500);
    expect(defaultMemPerCpu(node({ cores: 0 }))).toBe(16_000);
  });

  test("cores are tasks x cpus per task; memory per node, else per core, else the default", () => {
    expect(amountFor(req({ cpusPerTask: 2 }), 3, node(), 1)).toEqual({ cores: 6, memMiB: 12_000, gpus: 0 });
    expect(amountFor(req({ memPerCpuMiB: 100 }), 4, node(), 1)).toEqual({ cores: 4, memMiB: 400, gpus: 0 });
    expect(amountFor(req({ memPerNodeMiB: 300, memPerCpuMiB: 100 }), 4, node(), 1)).toEqual({ cores: 4, memMiB: 300, gpus: 0 });
    expect(amountFor(req(), 1, node(), 1, 700).memMiB).toBe(700);
  });

  test("GPUs per node, per task, or per job spread over its nodes", () => {
    expect(amountFor(req({ gpusPerNode: 2, gpusPerTask: 1 }), 4, node(), 1).gpus).toBe(2);
    expect(amountFor(req({ gpusPerTask: 1 }), 4, node(), 1).gpus).toBe(4);
    expect(amountFor(req({ gpus: 5 }), 1, node(), 2).gpus).toBe(3);
  });

  test("features and usable GPUs of a type", () => {
    expect(hasFeatures(node({ features: ["ib", "avx512"] }), ["ib"])).toBe(true);
    expect(hasFeatures(node({ features: ["ib"] }), ["ib", "avx512"])).toBe(false);
    expect(hasFeatures(node(), undefined)).toBe(true);
    const f = free({ total: node({ gpus: ["a100", null, "a100"] }), gpus: [1, 2] });
    expect(usableGpus(f, "a100")).toEqual([2]);
    expect(usableGpus(f, undefined)).toEqual([1, 2]);
  });
});

describe("domain/resources: fitOn", () => {
  test("the lowest free cores and GPUs; null when it does not fit", () => {
    const f = free({ total: node({ gpus: [null, null] }), cores: [2, 3, 5], memMiB: 3000, gpus: [1], idle: false });
    expect(fitOn(f, req(), { cores: 2, memMiB: 1000, gpus: 1 })).toEqual({ node: "n1", cores: [2, 3], memMiB: 1000, gpus: [1] });
    expect(fitOn(f, req(), { cores: 4, memMiB: 1000, gpus: 0 })).toBeNull();
    expect(fitOn(f, req(), { cores: 1, memMiB: 3001, gpus: 0 })).toBeNull();
    expect(fitOn(f, req(), { cores: 1, memMiB: 1, gpus: 2 })).toBeNull();
    expect(fitOn(f, req({ constraint: ["ib"] }), { cores: 1, memMiB: 1, gpus: 0 })).toBeNull();
  });

  test("exclusive: the whole node, and only an idle one", () => {
    expect(fitOn(free(), req({ exclusive: true }), { cores: 1, memMiB: 1, gpus: 0 })).toEqual({ node: "n1", cores: [0, 1, 2, 3, 4, 5, 6, 7], memMiB: 16_000, gpus: [] });
    expect(fitOn(free({ idle: false }), req({ exclusive: true }), { cores: 1, memMiB: 1, gpus: 0 })).toBeNull();
  });
});

describe("domain/resources: neverFits, the refusal at submit", () => {
  const nodes = [{ name: "a", total: node() }, { name: "b", total: node({ cores: 4, gpus: ["v100"], features: ["ib"] }) }];
  test("null when a node holds one node's part, or when no node has joined yet", () => {
    expect(neverFits(req({ tasks: 8 }), nodes)).toBeNull();
    expect(neverFits(req({ tasks: 99 }), [])).toBeNull();
    expect(neverFits(req({ nodes: 2, tasksPerNode: 4 }), nodes)).toBeNull();
  });
  test("the reason names what no node has", () => {
    expect(neverFits(req({ nodes: 1, tasksPerNode: 9 }), nodes)).toBe("no node has 9 cores per node");
    expect(neverFits(req({ memPerNodeMiB: 20_000 }), nodes)).toBe("no node has 20000 MiB of memory per node");
    expect(neverFits(req({ gpusPerNode: 1, gpuType: "a100" }), nodes)).toBe("no node has 1 a100 GPUs per node");
    expect(neverFits(req({ constraint: ["gpu"] }), nodes)).toBe("no node has features gpu");
    expect(neverFits(req({ nodes: 2, tasksPerNode: 6 }), nodes)).toBe("only 1 node can hold one node's part of the job (6 tasks), it asks for 2");
  });
});

describe("domain/resources: Slurm's syntax", () => {
  test("memory sizes: MiB by default, K/M/G/T suffixes, rounded up", () => {
    expect(parseMemory("300G")).toBe(307_200);
    expect(parseMemory("512")).toBe(512);
    expect(parseMemory("1.5g")).toBe(1536);
    expect(parseMemory("1K")).toBe(1);
    expect(parseMemory("2T")).toBe(2 * 1024 * 1024);
    expect(parseMemory("4GB")).toBe(4096);
    expect(parseMemory("lots")).toEqual({ error: '"lots" is not a memory size; give a number with an optional K, M, G or T suffix, e.g. 4G' });
  });

  test("gres: gpu, gpu:N, gpu:TYPE:N; anything else is refused with the reason", () => {
    expect(parseGres("gpu")).toEqual({ name: "gpu", count: 1 });
    expect(parseGres("gpu:4")).toEqual({ name: "gpu", count: 4 });
    expect(parseGres("gpu:a100:2")).toEqual({ name: "gpu", type: "a100", count: 2 });
    expect(parseGres("gpu:a100")).toEqual({ name: "gpu", type: "a100", count: 1 });
    expect(parseGres("mps:100")).toEqual({ error: '"mps" is not a resource ebb knows; only gpu is' });
    expect(parseGres("gpu:a:b:2")).toEqual({ error: '"gpu:a:b:2": write gpu[:TYPE][:COUNT]' });
    expect(parseGres("gpu:0")).toEqual({ error: '"gpu:0": the count must be 1 to 1024' });
    expect(parseGres("1gpu")).toEqual({ error: '"1gpu" is not a generic resource; write NAME[:TYPE][:COUNT], e.g. gpu:a100:2' });
    expect("error" in (parseGres("gpu:a$b:1") as object)).toBe(true);
  });
});
