import { describe, expect, test } from "bun:test";
import { V1_MAX_VALUE } from "../../src/pmi/limits.ts";
import { expandProcessMapping, processMapping, processMappingOfRanks } from "../../src/pmi/mapping.ts";

describe("processMapping (block layout, tasks per node in allocation order)", () => {
  test("the reference's examples", () => {
    expect(processMapping([4, 4])).toBe("(vector,(0,2,4))");
    expect(processMappingOfRanks([0, 1, 0, 1, 0, 1, 0, 1])).toBe("(vector,(0,2,1))");
  });

  test("uneven counts fold only equal neighbours", () => {
    expect(processMapping([3, 3, 2])).toBe("(vector,(0,2,3),(2,1,2))");
    expect(processMapping([1, 4, 4, 1])).toBe("(vector,(0,1,1),(1,2,4),(3,1,1))");
    expect(processMapping([5])).toBe("(vector,(0,1,5))");
  });

  test("nodes without ranks get no id; no ranks at all gives the empty mapping", () => {
    expect(processMapping([2, 0, 2])).toBe("(vector,(0,2,2))");
    expect(processMapping([])).toBe("");
    expect(processMapping([0, 0])).toBe("");
    expect(() => processMapping([1, -1])).toThrow(RangeError);
  });

  test("empty string when it would not fit in a value", () => {
    const alternating = Array.from({ length: 200 }, (_, i) => 1 + (i % 2));
    const s = processMapping(alternating, 100_000);
    expect(s.length).toBeGreaterThan(V1_MAX_VALUE);
    expect(processMapping(alternating)).toBe("");
  });
});

describe("processMappingOfRanks (any layout, node of every rank)", () => {
  test("unsorted node names: ids follow rank order, not name order", () => {
    const nodes = ["n3", "n3", "n1", "n1", "n2", "n2"];
    expect(processMappingOfRanks(nodes)).toBe("(vector,(0,3,2))");
    expect(expandProcessMapping("(vector,(0,3,2))", 6)).toEqual([0, 0, 1, 1, 2, 2]);
  });

  test("a node that comes back later (elastic growth onto an old node)", () => {
    const s = processMappingOfRanks(["a", "a", "b", "b", "a", "c"]);
    expect(s).toBe("(vector,(0,2,2),(0,1,1),(2,1,1))");
    expect(expandProcessMapping(s, 6)).toEqual([0, 0, 1, 1, 0, 2]);
    // when the tail repeats the start, one period is enough: MPICH wraps around
    expect(processMappingOfRanks(["a", "a", "b", "b", "a"])).toBe("(vector,(0,2,2))");
    expect(expandProcessMapping("(vector,(0,2,2))", 5)).toEqual([0, 0, 1, 1, 0]);
  });

  test("cyclic layouts use MPICH's wrap-around", () => {
    const nodes = Array.from({ length: 12 }, (_, r) => `node${r % 3}`);
    expect(processMappingOfRanks(nodes)).toBe("(vector,(0,3,1))");
    const plane = Array.from({ length: 8 }, (_, r) => Math.floor(r / 2) % 2);
    expect(processMappingOfRanks(plane)).toBe("(vector,(0,2,2))");
  });

  test("every layout expands back to itself (seeded random layouts)", () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let t = 0; t < 300; t++) {
      const size = 1 + rnd(40);
      const nodes = Array.from({ length: size }, () => `h${rnd(1 + rnd(6))}`);
      const s = processMappingOfRanks(nodes, 10_000);
      const ids = new Map<string, number>();
      const expected = nodes.map((n) => ids.get(n) ?? (ids.set(n, ids.size), ids.size - 1));
      expect(expandProcessMapping(s, size)).toEqual(expected);
    }
  });
});

describe("expandProcessMapping follows MPICH's parser", () => {
  test("whitespace, wrap to the first block with start 0, rejects nonsense", () => {
    expect(expandProcessMapping(" ( vector , (0,2,1) ) ", 5)).toEqual([0, 1, 0, 1, 0]);
    expect(expandProcessMapping("(vector,(1,1,1),(0,1,1))", 4)).toEqual([1, 0, 0, 0]);
    expect(expandProcessMapping("(vector)", 2)).toBeUndefined();
    expect(expandProcessMapping("(vector,(0,0,3))", 2)).toBeUndefined();
    expect(expandProcessMapping("(hybrid,(0,1,1))", 1)).toBeUndefined();
  });
});
