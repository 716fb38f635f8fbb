import { describe, expect, test } from "bun:test";
import { nodeOfRanks, remap, statusOf } from "../../src/sched/remap.ts";

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
    // A large job growing onto many nodes: the first added node it holds is named.
    const held = Array.from({ length: 40 }, (_, i) => `n${i + 1}`);
    const added = Array.from({ length: 20 }, (_, i) => `n${i + 50}`);
    expect(() => remap(place(held), 60, [...added.slice(0, 19), "n7"])).toThrow("node n7 is already in the allocation");
    expect(() => remap(place(held), 61, ["n99", "n12", ...added.slice(0, 18), "n3"])).toThrow("node n12 is already");
    expect(remap(place(held), 60, added).after.nodes).toEqual([...held, ...added]);
  });
});
