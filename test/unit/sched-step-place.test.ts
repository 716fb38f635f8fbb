import { describe, expect, test } from "bun:test";
import { placeExact } from "../../src/sched/step-place.ts";

const one = { nodes: 1, tasks: 1, cpusPerTask: 1, named: [] };

describe("placeExact: an exact step on its job's free CPUs", () => {
  test("a one-task step takes the job's first node with a free CPU", () => {
    expect(placeExact([2, 2], one)).toEqual({ picked: [0], layout: [1], cpus: [1] });
    expect(placeExact([0, 2], one)).toEqual({ picked: [1], layout: [1], cpus: [1] });
  });

  test("no free CPU: it waits (undefined)", () => {
    expect(placeExact([0, 0], one)).toBeUndefined();
    expect(placeExact([], one)).toBeUndefined();
  });

  test("cpusPerTask counts: 3 free CPUs hold one task of 2, not two", () => {
    expect(placeExact([3], { ...one, cpusPerTask: 2 })).toEqual({ picked: [0], layout: [1], cpus: [2] });
    expect(placeExact([3], { ...one, tasks: 2, cpusPerTask: 2 })).toBeUndefined();
    expect(placeExact([1, 2], { ...one, cpusPerTask: 2 })).toEqual({ picked: [1], layout: [1], cpus: [2] });
  });

  test("tasks spread over the free CPUs of the picked nodes (block, the excess moved on)", () => {
    expect(placeExact([1, 3], { ...one, nodes: 2, tasks: 4 })).toEqual({ picked: [0, 1], layout: [1, 3], cpus: [1, 3] });
    expect(placeExact([1, 2], { ...one, nodes: 2, tasks: 4 })).toBeUndefined();
  });

  test("first nodes too small: the nodes with the most room", () => {
    expect(placeExact([1, 4, 2], { ...one, tasks: 3 })).toEqual({ picked: [1], layout: [3], cpus: [3] });
  });

  test("named nodes come first and must have room", () => {
    expect(placeExact([4, 4, 4], { ...one, nodes: 2, tasks: 2, named: [2] })).toEqual({ picked: [0, 2], layout: [1, 1], cpus: [1, 1] });
    expect(placeExact([4, 4, 0], { ...one, named: [2] })).toBeUndefined();
  });

  test("tasks per node and plane keep their layouts, and must fit", () => {
    expect(placeExact([2, 2], { ...one, nodes: 2, tasks: 4, tasksPerNode: 2 })).toEqual({ picked: [0, 1], layout: [2, 2], cpus: [2, 2] });
    expect(placeExact([1, 3], { ...one, nodes: 2, tasks: 4, tasksPerNode: 2 })).toBeUndefined();
    expect(placeExact([4, 4], { ...one, nodes: 2, tasks: 3, plane: 2 })).toEqual({ picked: [0, 1], layout: [2, 1], cpus: [2, 1] });
  });

  test("more nodes than the job has never fit", () => {
    expect(placeExact([4], { ...one, nodes: 2, tasks: 2 })).toBeUndefined();
  });
});
