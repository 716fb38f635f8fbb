import { describe, expect, test } from "bun:test";
import { mappingVector, nodeOfRanks, remap, statusOf } from "../../src/sched/remap.ts";
import { expandProcessMapping } from "../../src/pmi/mapping.ts";

const place = (nodes: string[], per = 1) => ({ nodes, tasks: nodes.map(() => per) });

describe("rank mapping", () => {
  test("grow: staying ranks keep their rank, joining ranks are appended on the added nodes", () => {
    const m = remap(place(["n3", "n1"], 2), 4, ["n0", "n7"]);
    expect(m.after.nodes).toEqual(["n3", "n1", "n0", "n7"]);
    expect([m.staying, m.leaving, m.joining]).toEqual([4, 0, 4]);
    expect(nodeOfRanks(m.after)).toEqual([0, 0, 1, 1, 2, 2, 3, 3]);
    for (let r = 0; r < 4; r++) expect(statusOf(r, m)).toBe("staying");
  });

  test("shrink: the last nodes leave, so leaving ranks are the highest", () => {
    const m = remap(place(["b", "d", "a", "c"], 2), 3);
    expect(m.removed).toEqual(["c"]);
    expect(m.after.nodes).toEqual(["b", "d", "a"]);
    expect([m.staying, m.leaving, m.joining]).toEqual([6, 2, 0]);
    expect([0, 5, 6, 7].map((r) => statusOf(r, m))).toEqual(["staying", "staying", "leaving", "leaving"]);
  });

  test("shrink to one node and grow back, with arbitrary node order", () => {
    const one = remap(place(["n9", "n2", "n5"]), 1);
    expect(one.after.nodes).toEqual(["n9"]);
    expect(one.leaving).toBe(2);
    const back = remap(one.after, 3, ["n1", "n8"]);
    expect(back.after.nodes).toEqual(["n9", "n1", "n8"]);
    expect([back.staying, back.joining]).toEqual([1, 2]);
  });

  test("refuses inconsistent requests", () => {
    expect(() => remap(place(["a"]), 0)).toThrow("at least one node");
    expect(() => remap(place(["a"]), 3, ["b"])).toThrow("needs 2 added nodes");
    expect(() => remap(place(["a", "b"]), 3, ["a"])).toThrow("already in the allocation");
  });
});

describe("process-mapping vectors", () => {
  test("the three vectors of a grow and a shrink", () => {
    expect(remap(place(["a", "b"], 4), 3, ["c"]).vectors).toEqual({ preexisting: "(vector,(0,2,4))", joining: "(vector,(0,1,4))", result: "(vector,(0,3,4))" });
    expect(remap({ nodes: ["a", "b", "c"], tasks: [8, 8, 4] }, 2).vectors).toEqual({ preexisting: "(vector,(0,2,8),(2,1,4))", joining: "", result: "(vector,(0,2,8))" });
  });

  test("vectors place every rank where the layout does (checked with MPICH's own expansion rule)", () => {
    for (const tasks of [[1], [2, 2, 2], [8, 8, 4], [3, 1, 1, 2], [1, 2, 3, 4]]) {
      const v = mappingVector(tasks);
      const size = tasks.reduce((a, b) => a + b, 0);
      expect(expandProcessMapping(v, size)).toEqual(nodeOfRanks({ nodes: tasks.map(String), tasks }));
    }
  });
});
