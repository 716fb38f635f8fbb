/**
 * A grow's joining ranks arrive with their cards (ebb-join, docs/adaptation.md §7.1 step 3): one
 * node's StepAdapt, driven as its agent drives it (plain data in, up-messages out).
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StepAdapt, type StepAdaptContext } from "../../src/roles/agent/step-adapt.ts";
import type { StepSpec, StepUp } from "../../src/proto/step.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** This node runs world ranks `ranks` of a step whose ranks are `status` (joining: generation 3, adaptation 9). */
function node(status: "new" | "joining", ranks: number[]) {
  const dir = mkdtempSync(join(tmpdir(), "ebb-join-"));
  dirs.push(dir);
  const up: StepUp[] = [];
  const merged: Record<string, string>[] = [];
  const spec = {
    jobId: 5,
    stepId: 2,
    elastic: { status, generation: 3, rankBase: 4, worldSize: 6, sampleInterval: 60, ...(status === "joining" ? { window: { adaptId: 9 } } : {}) },
  } as unknown as StepAdaptContext["spec"] & StepSpec;
  const adapt = new StepAdapt({
    node: "n1",
    key: "5.2",
    spec,
    ranks,
    children: [],
    up: (m) => up.push(m),
    merge: (e) => merged.push(e),
    left: () => {},
    perf: () => {},
    program: () => {},
    shmDir: dir,
    openAs: (fn) => fn(),
  });
  return { adapt, up, merged, join: (rank: number, args: Record<string, string>) => adapt.extension(rank, "ebb-join", args)! };
}

test("each joining rank's card is filed under its own key and goes up with the node's arrival; adapt.cards answers the joins", async () => {
  const n = node("joining", [4, 5]);
  let answered = 0;
  const first = n.join(4, { card: '{"id":"a"}' }).then((r) => (answered++, r));
  // Whatever a rank would name, the key is the agent's: rank 5's card is rank 5's.
  const second = n.join(5, { card: '{"id":"b"}', key: "ebbc.3.4" }).then((r) => (answered++, r));
  expect(n.up).toEqual([{ t: "adapt.arrived", step: "5.2", adaptId: 9, round: 0, count: 2, cards: { "ebbc.3.4": '{"id":"a"}', "ebbc.3.5": '{"id":"b"}' } }]);
  await Bun.sleep(5);
  expect(answered).toBe(0);
  n.adapt.down({ t: "adapt.cards", step: "5.2", adaptId: 9, cards: { "ebbc.3.4": "A", "ebbc.3.5": "B" } });
  expect(await first).toEqual({});
  expect(await second).toEqual({});
  expect(n.merged).toEqual([{ "ebbc.3.4": "A", "ebbc.3.5": "B" }]);
  n.adapt.close();
});

test("ebb-join is refused to a rank that is not joining, without a card, with an oversized one, or twice", async () => {
  const old = node("new", [0]);
  expect(await old.join(0, { card: "x" })).toEqual({ rc: "-1", msg: "ebb-join: only a joining rank, before its window" });
  old.adapt.close();
  const n = node("joining", [4, 5]);
  expect(await n.join(4, {})).toEqual({ rc: "-1", msg: "ebb-join: card= (the rank's business card) is missing" });
  expect(await n.join(4, { card: "x".repeat(1025) })).toEqual({ rc: "-1", msg: "ebb-join: the card is longer than 1024 bytes (a KVS value's limit)" });
  void n.join(4, { card: "a" });
  expect(await n.join(4, { card: "b" })).toEqual({ rc: "-1", msg: "ebb-join: this rank already joined" });
  // Rank 5 has not arrived: no arrival yet.
  expect(n.up).toEqual([]);
  n.adapt.fail("the step is ending");
  n.adapt.close();
});
