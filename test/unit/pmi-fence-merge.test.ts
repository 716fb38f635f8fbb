/** FenceMerge (pmi/fence-merge.ts): a fence's puts merged up the step tree, dropped as soon as they pass a per-step cap. */
import { expect, test } from "bun:test";
import { FenceMerge } from "../../src/pmi/fence-merge.ts";
import { KVS_MAX_BYTES } from "../../src/pmi/limits.ts";

test("merges children's puts, an overwrite counting only its difference; past KVS_MAX_BYTES it holds nothing and keeps the refusal, whatever comes after", () => {
  const m = new FenceMerge();
  const big = "v".repeat(KVS_MAX_BYTES / 4);
  m.add({ a: big, b: big });
  m.add({ a: big, c: "x" });
  expect([m.error, Object.keys(m.kvs)]).toEqual([undefined, ["a", "b", "c"]]);
  m.add({ d: big, e: big });
  expect(m.error).toContain("per-step cap KVS_MAX_BYTES");
  expect(m.kvs).toEqual({});
  m.add({ f: "1" });
  expect(m.kvs).toEqual({});
});

test("a child's refusal is passed on and the merged puts dropped", () => {
  const m = new FenceMerge();
  m.add({ a: "1" });
  m.add({}, "PMI KVS full: below");
  m.add({ b: "2" });
  expect([m.error, m.kvs]).toEqual(["PMI KVS full: below", {}]);
});
