/** -m/--distribution: the flag's forms (cli/distribution.ts) and the rank numbering they give (sched/layout.ts). */
import { describe, expect, test } from "bun:test";
import { distributionFlag, distributionVars } from "../../src/cli/distribution.ts";
import { blockWithin, nodeOfRanks, planeLayout, ranksByNode } from "../../src/sched/layout.ts";
import { expandProcessMapping, processMappingOfRanks } from "../../src/pmi/mapping.ts";
import { processMappingOf } from "../../src/roles/agent/step-pmi.ts";

describe("ranksByNode", () => {
  test("block: each node's ranks consecutive, in node order", () => {
    expect(ranksByNode([3, 2])).toEqual([[0, 1, 2], [3, 4]]);
    expect(ranksByNode([2, 0, 1])).toEqual([[0, 1], [], [2]]);
  });

  test("cyclic: rank r on node r mod N while every node has room; a full node is skipped", () => {
    expect(ranksByNode([3, 3], { kind: "cyclic" })).toEqual([[0, 2, 4], [1, 3, 5]]);
    expect(ranksByNode([2, 2, 2], { kind: "cyclic" })).toEqual([[0, 3], [1, 4], [2, 5]]);
    expect(ranksByNode([3, 2], { kind: "cyclic" })).toEqual([[0, 2, 4], [1, 3]]);
    expect(ranksByNode([4, 1], { kind: "cyclic" })).toEqual([[0, 2, 3, 4], [1]]);
    expect(nodeOfRanks([3, 3, 3], { kind: "cyclic" })).toEqual([0, 1, 2, 0, 1, 2, 0, 1, 2]);
  });

  test("plane=N: N ranks to each node in turn (Slurm's example: 10 tasks, 2 nodes, plane=4)", () => {
    const tasks = planeLayout(2, 10, 4);
    expect(tasks).toEqual([6, 4]);
    expect(ranksByNode(tasks, { kind: "plane", size: 4 })).toEqual([[0, 1, 2, 3, 8, 9], [4, 5, 6, 7]]);
    expect(ranksByNode([4, 4], { kind: "plane", size: 2 })).toEqual([[0, 1, 4, 5], [2, 3, 6, 7]]);
    expect(planeLayout(4, 8, 4)).toEqual([4, 4, 0, 0]);
    // plane=1 is cyclic
    expect(ranksByNode([3, 2], { kind: "plane", size: 1 })).toEqual(ranksByNode([3, 2], { kind: "cyclic" }));
  });

  test("every rank exactly once, and the counts kept (all layouts of up to 4 nodes of 0-3 tasks)", () => {
    for (let code = 0; code < 4 ** 4; code++) {
      const tasks = [0, 1, 2, 3].map((i) => Math.floor(code / 4 ** i) % 4);
      const total = tasks.reduce((a, b) => a + b, 0);
      for (const dist of [undefined, { kind: "cyclic" as const }, { kind: "plane" as const, size: 2 }]) {
        const byNode = ranksByNode(tasks, dist);
        expect(byNode.map((r) => r.length)).toEqual(tasks);
        expect(byNode.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i));
      }
    }
  });

  test("block over nodes of unequal room is Slurm 22.05's: a task to each node with room, round after round; then round after round over all (over-subscribed)", () => {
    // slurm_step_layout.c's _task_layout_block (no Pack), as Slurm runs it, checked against blockWithin's closed form.
    const slurm = (caps: number[], tasks: number) => {
      const out = caps.map(() => 0);
      let over = false;
      for (let j = 0, placed = 0; placed < tasks; j++) {
        let room = false;
        for (let i = 0; i < caps.length && placed < tasks; i++)
          if (j < caps[i]! || over) {
            out[i]!++;
            placed++;
            if (j + 1 < caps[i]!) room = true;
          }
        if (!room) over = true;
      }
      return out;
    };
    for (let code = 0; code < 5 ** 4; code++) {
      const caps = [0, 1, 2, 3].map((i) => Math.floor(code / 5 ** i) % 5);
      for (let tasks = 1; tasks <= 20; tasks++) expect(blockWithin(caps, tasks)).toEqual(slurm(caps, tasks));
    }
    // -N 4 -n 8 --ntasks-per-node=2 in a job of 4,2,1,1 CPUs: caps 2,2,1,1, run 3,3,1,1 (side by side).
    expect(blockWithin([2, 2, 1, 1], 8)).toEqual([3, 3, 1, 1]);
    expect(blockWithin([4, 1, 4], 7)).toEqual([3, 1, 3]);
  });

  test("PMI_process_mapping of a cyclic step is MPICH's one-period vector, and expands back to the layout", () => {
    const nodes = nodeOfRanks([2, 2, 2], { kind: "cyclic" });
    expect(processMappingOfRanks(nodes)).toBe("(vector,(0,3,1))");
    expect(expandProcessMapping("(vector,(0,3,1))", 6)).toEqual(nodes);
    const uneven = nodeOfRanks([3, 2], { kind: "cyclic" });
    expect(processMappingOfRanks(uneven)).toBe("(vector,(0,2,1))");
    expect(expandProcessMapping(processMappingOfRanks(uneven), 5)).toEqual(uneven);
    const full = nodeOfRanks([4, 1], { kind: "cyclic" });
    expect(expandProcessMapping(processMappingOfRanks(full), 5)).toEqual(full);
    const plane = nodeOfRanks(planeLayout(2, 10, 4), { kind: "plane", size: 4 });
    expect(expandProcessMapping(processMappingOfRanks(plane), 10)).toEqual(plane);
  });

  test("the agent's map (one round for equal counts, else every rank's node folded) is what MPICH expands to the layout", () => {
    expect(processMappingOf({ tasks: [64, 64, 64], distribution: { kind: "cyclic" } })).toBe("(vector,(0,3,1))");
    expect(processMappingOf({ tasks: [4, 4], distribution: { kind: "plane", size: 2 } })).toBe("(vector,(0,2,2))");
    expect(processMappingOf({ tasks: [4, 4] })).toBe("(vector,(0,2,4))");
    for (const tasks of [[3, 3], [3, 2], [4, 1], [6, 4], [2, 2, 2], [5], [1, 3, 2, 2]])
      for (const distribution of [{ kind: "cyclic" as const }, { kind: "plane" as const, size: 2 }, { kind: "plane" as const, size: 3 }]) {
        const total = tasks.reduce((a, b) => a + b, 0);
        expect(expandProcessMapping(processMappingOf({ tasks, distribution }), total)).toEqual(nodeOfRanks(tasks, distribution));
      }
  });
});

describe("distributionFlag", () => {
  test("the node level: block (ebb's default), cyclic, plane=N", () => {
    expect(distributionFlag("block")).toEqual({ dist: undefined, text: "block", warnings: [] });
    expect(distributionFlag("*")).toEqual({ dist: undefined, text: "block", warnings: [] });
    expect(distributionFlag("cyclic")).toEqual({ dist: { kind: "cyclic" }, text: "cyclic", warnings: [] });
    expect(distributionFlag("Cyclic:Block")).toEqual({ dist: { kind: "cyclic" }, text: "cyclic:block", warnings: [] });
    expect(distributionFlag("plane=4")).toEqual({ dist: { kind: "plane", size: 4 }, text: "plane", warnings: [] });
    expect(distributionFlag("plane", "SLURM_DISTRIBUTION", "3").dist).toEqual({ kind: "plane", size: 3 });
    expect(distributionVars(distributionFlag("plane=4"))).toEqual({ SLURM_DISTRIBUTION: "plane", SLURM_DIST_PLANESIZE: "4" });
    expect(distributionVars(distributionFlag("cyclic:cyclic"))).toEqual({ SLURM_DISTRIBUTION: "cyclic:cyclic" });
  });

  test("the socket and core levels' cyclic, and Pack/NoPack, are accepted with what ebb does instead", () => {
    expect(distributionFlag("block:cyclic").warnings).toEqual(["--distribution=block:cyclic: the :cyclic level is ignored: ebb binds each rank of a node to its own consecutive cores (--cpu-bind=cores), without sockets"]);
    expect(distributionFlag("*:*:fcyclic").warnings).toHaveLength(1);
    expect(distributionFlag("block:block").warnings).toEqual([]);
    expect(distributionFlag("cyclic,Pack").warnings).toEqual(["--distribution=cyclic,Pack: ,Pack is ignored: ebb spreads a step's tasks evenly over its nodes"]);
    expect(distributionFlag("cyclic,NoPack").warnings).toEqual([]);
    // SLURM_DISTRIBUTION keeps them in lower case, as Slurm 22.05's srun sets it (block,nopack; cyclic:cyclic,pack).
    expect([distributionFlag("block,NoPack").text, distributionFlag("cyclic:cyclic,Pack").text, distributionFlag("block:block:block,Pack").text]).toEqual(["block,nopack", "cyclic:cyclic,pack", "block:block:block,pack"]);
  });

  test("what ebb cannot do, or is no distribution, is refused with the reason", () => {
    const refusal = (v: string) => {
      try {
        distributionFlag(v, "-m");
        return "accepted";
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(refusal("arbitrary")).toBe("-m=arbitrary: ebb does not read SLURM_HOSTFILE; give the nodes with --nodelist and the ranks are numbered block or cyclic over them");
    expect(refusal("plane")).toBe("-m=plane: plane takes its size, plane=N (or SLURM_DIST_PLANESIZE)");
    expect(refusal("plane=0")).toBe("-m=plane=0: plane=N takes N of 1 or more");
    expect(refusal("spread")).toContain("the node level is block, cyclic, plane=N, arbitrary or *");
    expect(refusal("block:socket")).toContain("the socket and core levels are *, block, cyclic or fcyclic");
    expect(refusal("block:block:block:block")).toContain("the socket and core levels");
    expect(refusal("block,pack,nopack")).toContain("expected LEVELS[,Pack|,NoPack]");
  });
});
