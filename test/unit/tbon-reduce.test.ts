import { expect, test } from "bun:test";
import { TreeReduce } from "../../src/tbon/reduce.ts";

test("a value goes up once this node and every child have given theirs", () => {
  const sent: Array<[string, number]> = [];
  const r = new TreeReduce<number>([4, 5], Math.max, (k, v) => sent.push([k, v]));
  r.child("a", 4, 7);
  r.local("a", 3);
  expect(sent).toEqual([]);
  r.child("a", 5, 9);
  expect(sent).toEqual([["a", 9]]);
  r.child("a", 5, 100);
  r.local("a", 100);
  expect(sent).toEqual([["a", 9]]);
});

test("keys are independent, and a lost child is not waited for", () => {
  const sent: Array<[string, number]> = [];
  const r = new TreeReduce<number>([1, 2], (a, b) => a + b, (k, v) => sent.push([k, v]));
  r.local("x", 1);
  r.local("y", 10);
  r.child("y", 1, 10);
  r.child("x", 2, 5);
  r.childLost(1);
  expect(sent).toEqual([["x", 6]]);
  r.child("y", 2, 10);
  expect(sent).toEqual([["x", 6], ["y", 30]]);
});

test("a leaf reduces its own value at once", () => {
  const sent: string[] = [];
  new TreeReduce<boolean>([], (a, b) => a || b, (k, v) => sent.push(`${k}=${v}`)).local("k", true);
  expect(sent).toEqual(["k=true"]);
});

test("combining functions that take more arguments (Math.max) see only two values", () => {
  const sent: number[] = [];
  const r = new TreeReduce<number>([1, 2, 3], Math.max, (_k, v) => sent.push(v));
  r.local("k", 4);
  for (const [c, v] of [[1, 2], [2, 9], [3, 1]] as const) r.child("k", c, v);
  expect(sent).toEqual([9]);
});
