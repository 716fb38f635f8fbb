import { expect, test } from "bun:test";
import { kvsPieces, sendPieces } from "../../src/pmi/kvs-pieces.ts";

test("a fence's puts are cut into pieces of at most the cap, in order, nothing lost; an entry over the cap goes alone", () => {
  const kvs: Record<string, string> = {};
  for (let i = 0; i < 100; i++) kvs[`k${i}`] = "v".repeat(i % 7 === 0 ? 300 : 40);
  const pieces = kvsPieces(kvs, 200);
  expect(pieces.length).toBeGreaterThan(10);
  for (const p of pieces) {
    const units = Object.entries(p).reduce((a, [k, v]) => a + k.length + v.length, 0);
    expect(units <= 200 || Object.keys(p).length === 1).toBe(true);
  }
  expect(pieces.flatMap((p) => Object.entries(p))).toEqual(Object.entries(kvs));
  expect(kvsPieces({}, 200)).toEqual([{}]);
});

test("a key named __proto__ is an entry of its piece, not its prototype", () => {
  const kvs = JSON.parse('{"__proto__":"x","a":"b"}') as Record<string, string>;
  const [piece] = kvsPieces(kvs);
  expect(Object.keys(piece!)).toEqual(["__proto__", "a"]);
  expect(JSON.stringify(piece)).toBe('{"__proto__":"x","a":"b"}');
});

test("pieces are sent one per event-loop turn, the last marked, and stop when no longer wanted", async () => {
  const sent: [string[], boolean][] = [];
  sendPieces([{ a: "1" }, { b: "2" }, { c: "3" }], (p, last) => sent.push([Object.keys(p), last]));
  expect(sent).toEqual([[["a"], false]]);
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  expect(sent).toEqual([[["a"], false], [["b"], false], [["c"], true]]);
  let wanted = true;
  const more: string[][] = [];
  sendPieces([{ a: "1" }, { b: "2" }], (p) => more.push(Object.keys(p)), () => wanted);
  wanted = false;
  await new Promise((r) => setImmediate(r));
  expect(more).toEqual([["a"]]);
});
