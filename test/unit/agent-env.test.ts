/**
 * A rank's node list variables, made once per step's node list: the same texts for every rank of a
 * step (and every agent of `ebb up`, which share its spec) as made afresh for each.
 */
import { expect, test } from "bun:test";
import type { StepSpec } from "../../src/proto/step.ts";
import { rankVars, stepNodeNames } from "../../src/roles/agent/env.ts";

const root = { user: "root", uid: 0, gid: 0 };
const spec = (n: number) => ({ nodes: Array.from({ length: n }, (_, i) => ({ name: `node${String(i + 1).padStart(4, "0")}`, addr: `127.0.0.1:${40000 + i}` })), tasks: Array(n).fill(1) }) as unknown as StepSpec;

test("one frozen array of a step's node names per spec, in node order", () => {
  const s = spec(3);
  const names = stepNodeNames(s);
  expect(names).toEqual(["node0001", "node0002", "node0003"]);
  expect(stepNodeNames(s)).toBe(names);
  expect(Object.isFrozen(names)).toBe(true);
  expect(stepNodeNames(spec(3))).not.toBe(names);
});

test("every rank of a 1,024-node step gets the node lists it would get from lists of its own", () => {
  const s = spec(1024);
  const names = stepNodeNames(s);
  const place = (i: number, nodes: readonly string[], tasks: number[]) => ({ stepId: 0, nodes, tasks, nodeIndex: i, localId: 0, rank: i, size: 1024, cpusOnNode: 2, owner: root });
  for (const i of [0, 511, 1023]) {
    const shared = rankVars(place(i, names, s.tasks), "http://c", "127.0.0.1");
    const fresh = rankVars(place(i, [...names], [...s.tasks]), "http://c", "127.0.0.1");
    expect(shared).toEqual(fresh);
    expect(shared.SLURM_STEP_NODELIST).toBe("node[0001-1024]");
    expect(shared.EBB_NODELIST?.split(",")).toHaveLength(1024);
    expect(shared.SLURM_TASKS_PER_NODE).toBe("1(x1024)");
    expect(shared.EBB_NODENAME).toBe(names[i]!);
  }
});
