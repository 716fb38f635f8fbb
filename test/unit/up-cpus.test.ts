/** `ebb up`'s CPUs per node: the nodes' first cores spread over the host, whatever cpus-per-node is. */
import { expect, test } from "bun:test";
import { nodeCpuIds } from "../../src/cli/up-cpus.ts";

const host = (n: number) => Array.from({ length: n }, (_, i) => i);
const firsts = (nodes: number, cpus: number, h: number) => Array.from({ length: nodes }, (_, i) => nodeCpuIds(i, cpus, host(h))[0]);

test("as many nodes as host CPUs start on distinct CPUs, for cores per node below, equal to and multiples of the host's", () => {
  for (const h of [1, 2, 3, 4, 6, 8, 12])
    for (const cpus of [1, 2, 3, 4, 5, 8, 16]) expect({ h, cpus, distinct: new Set(firsts(h, cpus, h)).size }).toEqual({ h, cpus, distinct: h });
});

test("2 host CPUs, 4 cores a node (ebb up --cpus-per-node 4 on a 2-CPU machine): nodes alternate, not all on CPU 0", () => {
  expect(firsts(4, 4, 2)).toEqual([0, 1, 0, 1]);
});

test("each node has every host CPU once, in order from its first, and the default shape is unchanged", () => {
  expect(nodeCpuIds(1, 3, host(8))).toEqual([3, 4, 5, 6, 7, 0, 1, 2]);
  expect(firsts(4, 2, 8)).toEqual([0, 2, 4, 6]);
  expect(firsts(6, 2, 8).slice(4)).toEqual([1, 3]);
  expect(nodeCpuIds(3, 2, [4, 5, 6, 7])).toEqual([7, 4, 5, 6]);
});
