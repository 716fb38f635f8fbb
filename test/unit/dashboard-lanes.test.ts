/**
 * The dashboard's timeline with shared nodes: a node row holds several jobs at once, each stretch
 * in a lane of its own. This runs the page's own lane code (between its "lanes: begin" and
 * "lanes: end" marks) on plain data.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

type Stretch = { job: number; node: string; s: number; u: number | null };
type Row = { y: number; h: number; laneH: number; lanes: number };
const page = readFileSync(join(import.meta.dir, "../../src/api/dashboard/index.html"), "utf8");
const code = /\/\* lanes: begin[^]*?\*\/([^]*)\/\* lanes: end \*\//.exec(page)![1]!;
const { laneLayout, rowGeometry, bandBox } = new Function(`${code}\nreturn { laneLayout, rowGeometry, bandBox };`)() as {
  laneLayout(s: Stretch[]): { lane: Map<Stretch, number>; lanes: Map<string, number> };
  rowGeometry(names: string[], lanes: Map<string, number>, top: number): { rows: Map<string, Row>; bottom: number };
  bandBox(row: Row, lane: number): { y: number; h: number };
};

const lanesOf = (stretches: Stretch[]) => {
  const { lane, lanes } = laneLayout(stretches);
  return { lanes: Object.fromEntries(lanes), byJob: stretches.map((a) => `${a.job}@${a.node}:${lane.get(a)}`) };
};

test("jobs one after another on a node share one lane; jobs at once get a lane each", () => {
  const one = [
    { job: 1, node: "n1", s: 0, u: 10 },
    { job: 2, node: "n1", s: 10, u: 20 },
    { job: 3, node: "n1", s: 20, u: null },
  ];
  expect(lanesOf(one)).toEqual({ lanes: { n1: 1 }, byJob: ["1@n1:0", "2@n1:0", "3@n1:0"] });
  const two = [
    { job: 1, node: "n1", s: 0, u: null },
    { job: 2, node: "n1", s: 5, u: null },
    { job: 2, node: "n2", s: 5, u: null },
  ];
  expect(lanesOf(two)).toEqual({ lanes: { n1: 2, n2: 1 }, byJob: ["1@n1:0", "2@n1:1", "2@n2:0"] });
});

test("a stretch takes the lowest lane free when it starts, and a later one never moves those before it", () => {
  const before = [
    { job: 1, node: "n", s: 0, u: 30 },
    { job: 2, node: "n", s: 5, u: 12 },
    { job: 3, node: "n", s: 8, u: null },
    { job: 4, node: "n", s: 12, u: null },
    { job: 5, node: "n", s: 30, u: null },
  ];
  expect(lanesOf(before)).toEqual({ lanes: { n: 3 }, byJob: ["1@n:0", "2@n:1", "3@n:2", "4@n:1", "5@n:0"] });
  const later = [...before.map((a) => ({ ...a })), { job: 6, node: "n", s: 40, u: null }];
  expect(lanesOf(later).byJob.slice(0, 5)).toEqual(lanesOf(before).byJob);
  expect(lanesOf(later)).toEqual({ lanes: { n: 4 }, byJob: ["1@n:0", "2@n:1", "3@n:2", "4@n:1", "5@n:0", "6@n:3"] });
  // Same start: the lower job id first, whatever the order given.
  expect(lanesOf([{ job: 9, node: "n", s: 0, u: null }, { job: 7, node: "n", s: 0, u: null }]).byJob).toEqual(["9@n:1", "7@n:0"]);
});

test("rows are as tall as their lanes; a row of one lane is as before (18 px), many lanes share 56 px", () => {
  const { rows, bottom } = rowGeometry(["a", "b", "c", "d"], new Map([["b", 3], ["c", 16]]), 22);
  expect(Object.fromEntries(rows)).toEqual({
    a: { y: 22, h: 18, laneH: 14, lanes: 1 },
    b: { y: 40, h: 46, laneH: 14, lanes: 3 },
    c: { y: 86, h: 68, laneH: 4, lanes: 16 },
    d: { y: 154, h: 18, laneH: 14, lanes: 1 },
  });
  expect(bottom).toBe(172);
  expect(bandBox(rows.get("a")!, 0)).toEqual({ y: 24, h: 14 });
  expect([0, 1, 2].map((l) => bandBox(rows.get("b")!, l))).toEqual([{ y: 42, h: 13 }, { y: 56, h: 13 }, { y: 70, h: 13 }]);
});
