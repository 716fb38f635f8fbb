import { expect, test } from "bun:test";
import type { StepUp } from "../../src/proto/step.ts";
import { adaptMessage, adaptReportOf, AdaptReductions, type AdaptReport } from "../../src/tbon/adapt-reduce.ts";

test("each adaptation up-message reads as a report and is written back the same", () => {
  const msgs: StepUp[] = [
    { t: "adapt.counted", step: "3.0", adaptId: 2, round: 1, max: 40 },
    { t: "adapt.checked", step: "3.0", adaptId: 2, round: 1, racer: true },
    { t: "adapt.checked", step: "3.0", adaptId: 2, round: 2, racer: false },
    { t: "adapt.arrived", step: "3.0", adaptId: 2, round: 2, count: 6 },
    { t: "adapt.committed", step: "3.0", adaptId: 2, count: 8 },
  ];
  for (const m of msgs) expect(adaptMessage("3.0", adaptReportOf(m)!)).toEqual(m);
  expect(adaptReportOf({ t: "launched", step: "3.0", count: 1 })).toBeUndefined();
});

test("counts and racers combine by max, arrivals and commits by sum, each per adaptation and round", () => {
  const sent: AdaptReport[] = [];
  const r = new AdaptReductions([1, 2], (x) => sent.push(x));
  r.local("counted", 5, 1, 10);
  r.local("arrived", 5, 1, 3);
  r.child(1, { kind: "counted", adaptId: 5, round: 1, value: 30 });
  r.child(1, { kind: "arrived", adaptId: 5, round: 1, value: 4 });
  r.child(1, { kind: "counted", adaptId: 5, round: 2, value: 99 });
  expect(sent).toEqual([]);
  r.child(2, { kind: "counted", adaptId: 5, round: 1, value: 20 });
  r.child(2, { kind: "arrived", adaptId: 5, round: 1, value: 5 });
  expect(sent).toEqual([
    { kind: "counted", adaptId: 5, round: 1, value: 30 },
    { kind: "arrived", adaptId: 5, round: 1, value: 12 },
  ]);
});

test("a lost child is not waited for, and clear forgets what was reduced", () => {
  const sent: AdaptReport[] = [];
  const r = new AdaptReductions([1, 2], (x) => sent.push(x));
  r.local("checked", 1, 1, 0);
  r.child(2, { kind: "checked", adaptId: 1, round: 1, value: 1 });
  r.childLost(1);
  expect(sent).toEqual([{ kind: "checked", adaptId: 1, round: 1, value: 1 }]);
  // Already reduced: until cleared, the same key is not sent again.
  r.local("checked", 1, 1, 1);
  expect(sent).toHaveLength(1);
  r.clear();
  r.local("checked", 1, 1, 0);
  r.child(2, { kind: "checked", adaptId: 1, round: 1, value: 0 });
  expect(sent).toEqual([
    { kind: "checked", adaptId: 1, round: 1, value: 1 },
    { kind: "checked", adaptId: 1, round: 1, value: 0 },
  ]);
});
