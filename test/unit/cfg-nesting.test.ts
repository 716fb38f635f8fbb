/**
 * Loop nesting and inclusive MPI time, from call traces to the job's CFG (plain data): the
 * shapes that broke `ebb show` (a halo function called several times per time step, a loop
 * whose body holds two loops, recursion), then properties over seeded random programs: at every
 * level (a rank's loops, a node's, any grouping of nodes, the job's) the parents form a forest
 * whose roots reach every loop, and the current loop is an outermost distributed one.
 */
import { describe, expect, test } from "bun:test";
import { Detector, type CfgNodeRow } from "../../src/cfg/detector.ts";
import { mergeCfg, observeCfg, type JobCfg } from "../../src/cfg/merge.ts";
import { forestParents } from "../../src/cfg/nest.ts";
import { rankLoops, reduceNode, type NodeCfg, type RankCfg } from "../../src/cfg/node.ts";
import { OpType } from "../../src/cfg/types.ts";
import { efficiency } from "../../src/model/efficiency.ts";
import { JobCfgs } from "../../src/roles/controller/cfg.ts";
import { mulberry32, type Rng } from "../../src/sim/random.ts";

/** A program: calls at fixed sites (a call's site is where it is written, as a return address). */
type Stmt =
  | { call: number; type: OpType; mpi: number }
  | { compute: number }
  | { loop: number; body: Stmt[] }
  | { fn: number }
  | { branch: Stmt[][] };

interface Program {
  main: Stmt[];
  fns: Stmt[][];
}

/** Runs a program on one rank's detector; `rng` picks loop counts written as negative (random) and branches. */
function runRank(p: Program, rng: Rng, limit = 4000): Detector {
  const d = new Detector({ interval: 0 });
  let t = 0;
  let steps = 0;
  let depth = 0;
  const exec = (body: readonly Stmt[]): void => {
    for (const s of body) {
      if (steps >= limit) return;
      if ("call" in s) {
        d.step(s.call, s.type, t, t + s.mpi);
        t += s.mpi;
        steps++;
      } else if ("compute" in s) t += s.compute;
      else if ("loop" in s) {
        const n = s.loop >= 0 ? s.loop : 1 + Math.floor(rng.next() * -s.loop);
        for (let i = 0; i < n && steps < limit; i++) exec(s.body);
      } else if ("fn" in s) {
        if (depth > 6) continue;
        depth++;
        exec(p.fns[s.fn]!);
        depth--;
      } else exec(s.branch[Math.floor(rng.next() * s.branch.length)]!);
    }
  };
  exec(p.main);
  return d;
}

const P = OpType.P2p;
const C = OpType.Collective;

/** Every rank runs `p`; ranks are split over `nodes` nodes; the job's CFG as the controller folds it. */
function job(p: Program, ranks: number, nodes: number, seed = 1): { node: NodeCfg[]; job: JobCfg; tables: RankCfg[] } {
  const tables: RankCfg[] = [];
  for (let r = 0; r < ranks; r++) tables.push({ rank: r, rows: runRank(p, mulberry32(seed * 1000 + r)).table() });
  const per = Math.ceil(ranks / nodes);
  const node = Array.from({ length: nodes }, (_, i) => reduceNode(tables.slice(i * per, (i + 1) * per)));
  return { node, job: observeCfg(undefined, mergeCfg(node), ranks), tables };
}

/** Parents name loops of the list, and every loop's chain ends at a root (no cycle). */
function expectForest(loops: readonly { key: string; parent: string | null }[]): void {
  const byKey = new Map(loops.map((l) => [l.key, l]));
  expect(byKey.size).toBe(loops.length);
  for (const l of loops) {
    let x: { key: string; parent: string | null } | undefined = l;
    let hops = 0;
    while (x && x.parent !== null && hops <= loops.length) {
      expect(byKey.has(x.parent)).toBe(true);
      x = byKey.get(x.parent);
      hops++;
    }
    expect(hops).toBeLessThanOrEqual(loops.length - 1);
    expect(x?.parent).toBeNull();
  }
}

const halo: Program = {
  // time step: compute 10, the halo function three times, then the time step's allreduce; the
  // trace ends inside a step (as a report does), where the halo loop's head ran last
  main: [{ loop: 40, body: [{ compute: 10 }, { fn: 0 }, { fn: 0 }, { fn: 0 }, { call: 900, type: C, mpi: 2 }] }, { compute: 10 }, { fn: 0 }],
  fns: [[{ call: 101, type: P, mpi: 1 }, { call: 102, type: P, mpi: 1 }]],
};

describe("nesting of the loops that broke ebb show", () => {
  test("a halo function called three times per time step: the time step is the root, the halo loop its child", () => {
    const { job: j, tables } = job(halo, 4, 2);
    expectForest(j.loops);
    const step = j.loops.find((l) => l.key.includes("collective@900"))!;
    const inner = j.loops.find((l) => l.key === "p2p")!;
    expect(step.parent).toBeNull();
    expect(inner.parent).toBe(step.key);
    // Each rank's own view: the head chain, not the re-entry, decides.
    for (const t of tables) expect(rankLoops(t).find((l) => l.key === "p2p")!.parentKey).toBe(step.key);
    // Inclusive MPI time: an iteration of the time step is 10 compute + 3 x 2 halo + 2 allreduce.
    expect(step.mpiTime / step.iterations).toBeCloseTo(8, 9);
    expect(step.loopTime / step.iterations).toBeCloseTo(18, 9);
    expect(step.mtct).toBeCloseTo(0.8, 9);
    // The scheduler reads the time step, not the halo loop whose head ran last.
    expect(inner.last).toBeGreaterThan(step.last);
    expect(j.current).toBe(step.key);
    // Efficiency over the outermost loop: the inclusive share, nested time not counted twice.
    expect(efficiency(2, j.loops)!.commShare).toBeCloseTo(8 / 18, 9);
  });

  test("a loop whose body holds two distributed loops and an allreduce: both nested in it", () => {
    const p: Program = {
      main: [
        {
          loop: 30,
          body: [
            { compute: 20 },
            { loop: 3, body: [{ call: 201, type: P, mpi: 1 }, { call: 202, type: P, mpi: 1 }] },
            { compute: 5 },
            { loop: 4, body: [{ call: 301, type: C, mpi: 1 }] },
            { call: 900, type: C, mpi: 3 },
          ],
        },
      ],
      fns: [],
    };
    const { job: j } = job(p, 4, 2);
    expectForest(j.loops);
    const outer = j.loops.find((l) => l.key.includes("collective@900"))!;
    const a = j.loops.find((l) => l.key === "p2p")!;
    const b = j.loops.find((l) => l.key === "collective@301")!;
    expect([outer.parent, a.parent, b.parent]).toEqual([null, outer.key, outer.key]);
    expect(j.loops.every((l) => l.distributed)).toBe(true);
    expect(j.current).toBe(outer.key);
    // 6 + 4 + 3 MPI per iteration of 25 compute.
    expect(outer.mtct).toBeCloseTo(13 / 25, 9);
  });

  test("two loops in a loop with no call of its own: the first is the parent of the second (Fig. 10.2), no cycle", () => {
    const p: Program = {
      main: [{ loop: 30, body: [{ compute: 20 }, { loop: 3, body: [{ call: 201, type: P, mpi: 1 }, { call: 202, type: P, mpi: 1 }] }, { loop: 4, body: [{ call: 301, type: C, mpi: 1 }] }] }],
      fns: [],
    };
    const { job: j } = job(p, 4, 2);
    expectForest(j.loops);
    const a = j.loops.find((l) => l.key === "p2p")!;
    const b = j.loops.find((l) => l.key === "collective@301")!;
    expect([a.parent, b.parent]).toEqual([null, a.key]);
    expect(j.current).toBe(a.key);
    // The first loop's span holds the whole outer iteration: its MPI time is 6 + 4 per 20 compute.
    expect(a.mpiTime / a.loopTime).toBeCloseTo(10 / 30, 1);
  });

  test("recursion: a recursive exchange inside a time step is nested in it", () => {
    // rec(): sendrecv; rec() (up to the depth limit); allreduce — the same two sites at every depth.
    const p: Program = {
      main: [{ loop: 20, body: [{ compute: 10 }, { fn: 0 }, { call: 900, type: C, mpi: 2 }] }],
      fns: [[{ call: 501, type: P, mpi: 1 }, { branch: [[{ fn: 0 }], [{ fn: 0 }], [{ fn: 0 }], []] }, { call: 502, type: C, mpi: 1 }]],
    };
    for (const seed of [1, 2, 3, 4]) {
      const { job: j } = job(p, 4, 2, seed);
      expectForest(j.loops);
      const step = j.loops.find((l) => l.key.includes("collective@900"));
      if (step) {
        expect(step.parent).toBeNull();
        for (const l of j.loops) if (l !== step) expect(l.parent).toBe(step.key);
      }
      if (j.current !== null) expect(j.loops.find((l) => l.key === j.current)!.parent).toBeNull();
    }
  });
});

/** A random program: loops (fixed or random counts), functions called from several places, recursion, branches. */
function randomProgram(rng: Rng): Program {
  const sites = 2 + Math.floor(rng.next() * 12);
  const nfns = Math.floor(rng.next() * 4);
  const stmt = (depth: number): Stmt => {
    const x = rng.next();
    if (x < 0.45 || depth > 3) return { call: 1 + Math.floor(rng.next() * sites), type: Math.floor(rng.next() * 5) as OpType, mpi: rng.next() * 3 };
    if (x < 0.55) return { compute: rng.next() * 10 };
    if (x < 0.8) return { loop: rng.next() < 0.5 ? 1 + Math.floor(rng.next() * 6) : -(1 + Math.floor(rng.next() * 6)), body: block(depth + 1) };
    if (x < 0.92 && nfns > 0) return { fn: Math.floor(rng.next() * nfns) };
    return { branch: [block(depth + 1), block(depth + 1)] };
  };
  const block = (depth: number): Stmt[] => Array.from({ length: 1 + Math.floor(rng.next() * 4) }, () => stmt(depth));
  const fns = Array.from({ length: nfns }, () => block(1));
  return { main: [{ loop: 50 + Math.floor(rng.next() * 100), body: block(0) }], fns };
}

/** The controller's invariants of a job's CFG. */
function expectJob(j: JobCfg): void {
  expectForest(j.loops);
  if (j.current === null) return;
  const parent = forestParents(j.loops);
  const cur = j.loops.find((l) => l.key === j.current)!;
  expect(cur.distributed).toBe(true);
  for (let p = parent.get(cur.key) ?? null; p !== null; p = parent.get(p) ?? null) expect(j.loops.find((l) => l.key === p)!.distributed).toBe(false);
}

describe("nesting is a forest at every level (seeded random call traces)", () => {
  for (let seed = 1; seed <= 60; seed++) {
    test(`seed ${seed}`, () => {
      const rng = mulberry32(seed);
      const p = randomProgram(rng);
      const ranks = 1 + Math.floor(rng.next() * 8);
      const nodes = 1 + Math.floor(rng.next() * ranks);
      const { node, job: j, tables } = job(p, ranks, nodes, seed);
      // A rank: loops of one key share one parent, and the keys' parents form a forest.
      for (const t of tables) {
        const byKey = new Map<string, string | null>();
        for (const l of rankLoops(t)) {
          if (byKey.has(l.key)) expect(l.parentKey).toBe(byKey.get(l.key)!);
          byKey.set(l.key, l.parentKey);
        }
        expectForest([...byKey].map(([key, parent]) => ({ key, parent })));
      }
      for (const n of node) expectForest(n.loops);
      expectJob(j);
      // Any grouping of the nodes (the launch tree's levels) gives a forest, and the same one.
      const shuffled = [...node].sort(() => rng.next() - 0.5);
      const cut = Math.floor(rng.next() * (shuffled.length + 1));
      const regrouped = mergeCfg([mergeCfg(shuffled.slice(0, cut)), mergeCfg(shuffled.slice(cut))]);
      expectForest(regrouped.loops);
      expect(regrouped.loops.map((l) => [l.key, l.parent])).toEqual(j.loops.map((l) => [l.key, l.parent]));
      // Inclusive MPI time never exceeds the loop's span.
      for (const l of j.loops) expect(l.mpiTime).toBeLessThanOrEqual(l.loopTime + 1e-6);
    });
  }

  test("tables with arbitrary links (a damaged or hostile file) still reduce to a forest", () => {
    const rng = mulberry32(77);
    for (let c = 0; c < 300; c++) {
      const n = 1 + Math.floor(rng.next() * 12);
      const site = () => 1 + Math.floor(rng.next() * (n + 2));
      const tables: RankCfg[] = Array.from({ length: 1 + Math.floor(rng.next() * 4) }, (_, rank) => ({
        rank,
        rows: Array.from({ length: n }, (_, i): CfgNodeRow => {
          const head = rng.next() < 0.5;
          const body = rng.next() < 0.6;
          return {
            site: i + 1,
            type: Math.floor(rng.next() * 5) as OpType,
            head,
            body,
            re: rng.next() < 0.3 ? 1 : 0,
            rv: Math.floor(rng.next() * 20),
            tail: head ? site() : null,
            headOf: body ? site() : null,
            reentrySource: rng.next() < 0.4 ? site() : null,
            created: 0,
            last: 100,
            detected: 10,
            detectedVisits: 1,
            tmt: 5,
            tmtLast: 5,
            offset: rng.next() * 10,
            offsetCount: 1,
          };
        }),
      }));
      const node = reduceNode(tables);
      expectForest(node.loops);
      expectJob(observeCfg(undefined, mergeCfg([node, reduceNode(tables.map((t) => ({ ...t, rank: t.rank + 4 })))]), 8));
    }
  });
});

test("a job's CFG stored by an older build with two loops each other's parent is read back as a forest", () => {
  const series = { n: 1, mean: 1, m2: 0, min: 1, max: 1, recent: [1] };
  const loop = (key: string, parent: string) => ({
    key, head: 1, ranks: [0], visitCounts: [[5, 1]], visits: 5, iterations: 4, loopTime: 10, mpiTime: 2, last: 1, parent, reentries: 0,
    distributed: true, iterTime: 2.5, mpiPerIter: 0.5, mtct: 0.25, iter: series, mpi: series,
  });
  const doc = { steps: [], ntasks: 1, samples: [], cfg: { ntasks: 1, current: "a", loops: [loop("a", "b"), loop("b", "a")] } };
  const cfgs = new JobCfgs({ save: () => {}, all: () => [{ jobId: 7, data: doc }] });
  cfgs.restore();
  const loops = cfgs.get(7)!.loops;
  expectForest(loops);
  expect(loops.map((l) => [l.key, l.parent])).toEqual([["a", null], ["b", "a"]]);
});
