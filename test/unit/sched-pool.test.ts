import { describe, expect, test } from "bun:test";
import type { NodeResources, NodeShare, ResourceRequest } from "../../src/domain/resources.ts";
import { Pool } from "../../src/sched/pool.ts";

const cpu = (cores: number, memMiB = cores * 1000, gpus: (string | null)[] = [], features: string[] = []): NodeResources => ({ cores, memMiB, gpus, features });
const nodes = (...rs: NodeResources[]) => rs.map((resources, i) => ({ name: `n${i + 1}`, up: true, resources }));
const share = (node: string, cores: number[], memMiB: number, gpus: number[] = []): NodeShare => ({ node, cores, memMiB, gpus });
const req = (over: Partial<ResourceRequest>): ResourceRequest => ({ cpusPerTask: 1, exclusive: false, ...over });
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe("pool: what is free per node, from the nodes and the running jobs' shares", () => {
  test("shares held, nodes held whole by a job without shares, and nodes that are down", () => {
    const pool = Pool.of([...nodes(cpu(8), cpu(8), cpu(8)), { name: "n4", up: false, resources: cpu(8) }], [{ nodeNames: ["n1"], shares: [share("n1", [0, 1, 2], 3000)] }, { nodeNames: ["n2"] }]);
    expect(pool.free("n1")).toEqual({ name: "n1", total: cpu(8), cores: range(3, 7), memMiB: 5000, gpus: [], idle: false });
    expect(pool.free("n2")!.cores).toEqual([]);
    expect(pool.free("n3")!.idle).toBe(true);
    expect(pool.free("n4")).toBeUndefined();
    expect(pool.idle).toBe(1);
  });

  test("take then give restores what was free", () => {
    const pool = Pool.of(nodes(cpu(4, 4000, ["a100", "a100"])), []);
    const before = pool.free("n1");
    const p = pool.place(req({ tasks: 2, gpusPerTask: 1 }))!;
    pool.take(p.shares);
    expect(pool.free("n1")).toEqual({ ...before!, cores: [2, 3], memMiB: 2000, gpus: [], idle: false });
    expect(pool.idle).toBe(0);
    pool.give(p.shares);
    expect(pool.free("n1")).toEqual(before);
    expect(pool.idle).toBe(1);
  });
});

describe("pool: best-fit placement", () => {
  test("a task goes to the node it leaves with the least free, not the first or the emptiest", () => {
    // n1: 2 of 8 cores free, n2: 6 free, n3: idle.
    const running = [{ nodeNames: ["n1"], shares: [share("n1", range(0, 5), 6000)] }, { nodeNames: ["n2"], shares: [share("n2", [0, 1], 2000)] }];
    const pool = Pool.of(nodes(cpu(8), cpu(8), cpu(8)), running);
    expect(pool.place(req({ tasks: 1, cpusPerTask: 2 }))).toEqual({ nodes: ["n1"], shares: [share("n1", [6, 7], 2000)], tasks: [1] });
    expect(pool.place(req({ tasks: 1, cpusPerTask: 4 }))!.nodes).toEqual(["n2"]);
    expect(pool.place(req({ tasks: 7 }))!.nodes).toEqual(["n3"]);
    expect(pool.place(req({ tasks: 1, cpusPerTask: 9 }))).toBeUndefined();
  });

  test("a job without GPUs keeps off a GPU node while another node holds it", () => {
    const pool = Pool.of(nodes(cpu(8, 8000, [null, null]), cpu(8)), []);
    expect(pool.place(req({ tasks: 1 }))!.nodes).toEqual(["n2"]);
    expect(pool.place(req({ tasks: 1, gpusPerNode: 1 }))).toEqual({ nodes: ["n1"], shares: [share("n1", [0], 1000, [0])], tasks: [1] });
  });

  test("tasks only: on as few nodes as hold them, the rest where it fits best", () => {
    // n1 8 free, n2 8 free, n3 4 free: 12 tasks take a whole 8 and then n3's 4, not n2.
    const pool = Pool.of(nodes(cpu(8), cpu(8), cpu(8)), [{ nodeNames: ["n3"], shares: [share("n3", range(0, 3), 4000)] }]);
    const p = pool.place(req({ tasks: 12 }))!;
    expect(p.nodes).toEqual(["n1", "n3"]);
    expect(p.tasks).toEqual([8, 4]);
    expect(p.shares[1]).toEqual(share("n3", range(4, 7), 4000));
    expect(pool.place(req({ tasks: 21 }))).toBeUndefined();
    expect(pool.place(req({ tasks: 20 }))!.tasks).toEqual([8, 8, 4]);
  });

  test("a node count with tasks per node takes that shape on each node; tasks over nodes spread evenly, or with fill each node filled leaving one for each after it, as cons_tres", () => {
    const pool = Pool.of(nodes(cpu(8), cpu(8), cpu(8)), [{ nodeNames: ["n2"], shares: [share("n2", range(0, 4), 5000)] }]);
    // n2 has 3 free: the best fit for 3 tasks, then n1 (name order among equals).
    const p = pool.place(req({ nodes: 2, tasksPerNode: 3 }))!;
    expect(p.nodes).toEqual(["n1", "n2"]);
    expect(p.tasks).toEqual([3, 3]);
    expect(pool.place(req({ nodes: 3, tasksPerNode: 4 }))).toBeUndefined();
    const even = pool.place(req({ nodes: 2, tasks: 3 }))!;
    expect(even.tasks).toEqual([1, 2]);
    // With fill (sbatch's block distribution): n2 (3 free) holds the 1 of an even spread, n1 the 2; then n1 fills first.
    const filled = pool.place(req({ nodes: 2, tasks: 3, fill: true }))!;
    expect([filled.nodes, filled.tasks]).toEqual([["n1", "n2"], [2, 1]]);
    expect(pool.place(req({ tasks: 2 }), { nodes: 2 })!.tasks).toEqual([1, 1]);
    // Slurm 22.05 (cons_tres) on idle 4-core nodes, side by side; --exclusive and -c 2 spread evenly there too.
    const idle = Pool.of(nodes(cpu(4), cpu(4), cpu(4)), []);
    const layout = (over: Partial<ResourceRequest>) => idle.place(req({ fill: true, ...over }))!.tasks;
    expect([layout({ nodes: 3, tasks: 6 }), layout({ nodes: 3, tasks: 7 }), layout({ nodes: 2, tasks: 4 }), layout({ nodes: 3, tasks: 4 }), layout({ nodes: 2, tasks: 7 })]).toEqual([[4, 1, 1], [4, 2, 1], [3, 1], [2, 1, 1], [4, 3]]);
    expect([layout({ nodes: 3, tasks: 6, cpusPerTask: 2 }), layout({ nodes: 2, tasks: 4, exclusive: true }), layout({ nodes: 2, tasks: 3, cpusPerTask: 2 })]).toEqual([[2, 2, 2], [2, 2], [2, 1]]);
    expect(idle.place(req({ nodes: 3, tasks: 6, fill: true }))!.shares.map((s) => s.cores.length)).toEqual([4, 1, 1]);
    expect(idle.place(req({ nodes: 3, tasks: 6 }))!.tasks).toEqual([2, 2, 2]);
  });

  test("memory per node and per core, GPU type, features", () => {
    const pool = Pool.of(nodes(cpu(8, 8000, [null, "a100", "a100"], ["ib"]), cpu(8, 16000)), [{ nodeNames: ["n1"], shares: [share("n1", [0], 5000)] }]);
    expect(pool.place(req({ tasks: 1, memPerNodeMiB: 6000 }))!.nodes).toEqual(["n2"]);
    expect(pool.place(req({ tasks: 1, memPerNodeMiB: 6000, constraint: ["ib"] }))).toBeUndefined();
    expect(pool.place(req({ tasks: 1, memPerCpuMiB: 3000, constraint: ["ib"] }))!.shares).toEqual([share("n1", [1], 3000)]);
    expect(pool.place(req({ tasks: 1, gpusPerNode: 2, gpuType: "a100" }))!.shares).toEqual([share("n1", [1], 1000, [1, 2])]);
    expect(pool.place(req({ tasks: 1, gpusPerNode: 3, gpuType: "a100" }))).toBeUndefined();
  });

  test("exclusive: idle nodes only, taken whole; the smallest that holds it first", () => {
    const pool = Pool.of(nodes(cpu(16), cpu(8), cpu(8)), [{ nodeNames: ["n2"], shares: [share("n2", [0], 1000)] }]);
    expect(pool.place(req({ tasks: 4, exclusive: true }))).toEqual({ nodes: ["n3"], shares: [share("n3", range(0, 7), 8000)], tasks: [4] });
    expect(pool.place(req({ nodes: 2, exclusive: true }))!.nodes).toEqual(["n1", "n3"]);
    expect(pool.place(req({ nodes: 3, exclusive: true }))).toBeUndefined();
    expect(pool.place(req({ tasks: 20, exclusive: true }))!.tasks).toEqual([16, 4]);
  });

  test("exclude and nodelist", () => {
    const pool = Pool.of(nodes(cpu(8), cpu(8), cpu(8)), []);
    expect(pool.place(req({ tasks: 1 }), { exclude: new Set(["n1"]) })!.nodes).toEqual(["n2"]);
    expect(pool.place(req({ nodes: 2, tasksPerNode: 1 }), { nodelist: ["n3"] })!.nodes).toEqual(["n1", "n3"]);
    expect(pool.place(req({ tasks: 1 }), { nodelist: ["n9"] })).toBeUndefined();
  });
});

describe("pool: a reservation's budget", () => {
  test("a job past the reservation's start keeps within what it leaves over; one that ends before takes the reserved cores first", () => {
    // n1: 8 cores, a running job holds 0-3 and ends before the reservation; the head reserves 6 cores then.
    const held = [{ nodeNames: ["n1"], shares: [share("n1", [0, 1, 2, 3], 0)] }];
    const now = Pool.of(nodes(cpu(8, 0)), held);
    const then = Pool.of(nodes(cpu(8, 0)), []);
    const head = then.place(req({ tasks: 6 }))!;
    expect(head.shares[0]!.cores).toEqual(range(0, 5));
    now.reserve(head.shares, then);
    // Free now 4-7; past the start only 6, 7 may be held.
    expect(now.place(req({ tasks: 3 }), { past: true })).toBeUndefined();
    expect(now.place(req({ tasks: 2 }), { past: true })!.shares[0]!.cores).toEqual([6, 7]);
    const before = now.place(req({ tasks: 2 }))!;
    expect(before.shares[0]!.cores).toEqual([4, 5]);
    now.take(before.shares);
    // The budget is intact: 6 and 7 are still there for a job past the start.
    expect(now.place(req({ tasks: 2 }), { past: true })!.shares[0]!.cores).toEqual([6, 7]);
    // An exclusive job past the start never gets a reserved node.
    expect(Pool.of(nodes(cpu(8, 0)), []).place(req({ exclusive: true, nodes: 1 }), { past: true })).toBeDefined();
    const idleReserved = Pool.of(nodes(cpu(8, 0)), []);
    idleReserved.reserve([share("n1", [0], 0)], Pool.of(nodes(cpu(8, 0)), []));
    expect(idleReserved.place(req({ exclusive: true, nodes: 1 }), { past: true })).toBeUndefined();
  });
});
