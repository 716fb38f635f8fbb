import { describe, expect, test } from "bun:test";
import { resolveConfig, type PolicyName } from "../../src/sched/config.ts";
import { generateAvailability, parseAvailability, type HostChange } from "../../src/sim/availability.ts";
import { simulate } from "../../src/sim/engine.ts";
import { amdahlWork, type SimJob } from "../../src/sim/job.ts";
import { metrics } from "../../src/sim/metrics.ts";

function rigid(id: number, submit: number, nodes: number, runtime: number, estimate = runtime): SimJob {
  return { id, submit, nodes, minNodes: nodes, maxNodes: nodes, malleable: false, estimate, work: amdahlWork(runtime * nodes, 0), resizeCost: () => 0 };
}
/** Perfectly parallel, `runtime` at `nodes`, may run on 1..nodes; 5 s per resize. */
function elastic(id: number, submit: number, nodes: number, runtime: number, estimate = runtime): SimJob {
  return { id, submit, nodes, minNodes: 1, maxNodes: nodes, malleable: true, estimate, work: amdahlWork(runtime * nodes, 0), resizeCost: () => 5 };
}
const run = (jobs: SimJob[], nodes: number, availability: HostChange[], policy: PolicyName = "easy") => simulate(jobs, { nodes, config: resolveConfig({ policy }), availability, check: true });

describe("availability format", () => {
  test("lines, comments, ranges and default speeds; sorted by time", () => {
    const text = "# a comment\n\n100 n2 owner\n50 1-3 overloaded 0.4 # three nodes\n200 2 free\n300 4 busy\n";
    const c = parseAvailability(text, 4);
    expect(c.map((x) => [x.time, x.node, x.state, x.speed])).toEqual([
      [50, 1, "overloaded", 0.4],
      [50, 2, "overloaded", 0.4],
      [50, 3, "overloaded", 0.4],
      [100, 2, "owner", 0.1],
      [200, 2, "free", 1],
      [300, 4, "busy", 1],
    ]);
    expect(c[3]!.rule).toBe("availability line 3");
  });

  const bad: [string, RegExp][] = [
    ["10 1", /^line 1: expected TIME NODE STATE \[SPEED\], got 2 fields$/],
    ["# x\n-5 1 owner", /^line 2, TIME "-5": expected seconds/],
    ["ten 1 owner", /^line 1, TIME "ten"/],
    ["10 0 owner", /^line 1, NODE "0": the cluster has nodes 1\.\.4/],
    ["10 3-9 owner", /^line 1, NODE "3-9": the cluster has nodes 1\.\.4/],
    ["10 3-2 owner", /^line 1, NODE "3-2": the range ends before it starts/],
    ["10 x owner", /^line 1, NODE "x": expected a node number/],
    ["10 1 away", /^line 1, STATE "away": expected one of free, busy, overloaded, owner/],
    ["10 1 free 0.5", /^line 1, SPEED "0.5": a free node runs jobs at full pace/],
    ["10 1 overloaded 1.5", /^line 1, SPEED "1.5": expected the share/],
    ["10 1 overloaded 0.5 x", /^line 1: expected TIME NODE STATE \[SPEED\], got 5 fields$/],
    ["10 1-2 owner\n10 2 free", /^line 2, NODE "2": node 2 changes twice at 10 s \(also line 1\)$/],
  ];
  for (const [text, why] of bad) test(`refused: ${JSON.stringify(text)}`, () => expect(() => parseAvailability(text, 4)).toThrow(why));

  test("the generator: seeded, only workstations change, owners come and go, none back after `until`", () => {
    const g = { nodes: 64, seed: 3, workstations: 0.25, ownerEvery: 4000, ownerStay: 1000, ownerSpeed: 0.1, until: 100_000 };
    const a = generateAvailability(g);
    expect(generateAvailability(g)).toEqual(a);
    expect(generateAvailability({ ...g, seed: 4 })).not.toEqual(a);
    const nodes = new Set(a.map((c) => c.node));
    expect(nodes.size).toBeGreaterThan(5);
    expect(nodes.size).toBeLessThan(32);
    for (const n of nodes) {
      const mine = a.filter((c) => c.node === n);
      // owner, free, owner, free...: every stay ends.
      mine.forEach((c, i) => expect(c.state).toBe(i % 2 === 0 ? "owner" : "free"));
      expect(mine.at(-1)!.state).toBe("free");
      for (const c of mine) if (c.state === "owner" && c.time > 0) expect(c.time).toBeLessThan(g.until);
    }
    // A larger fraction keeps the smaller one's workstations.
    const more = new Set(generateAvailability({ ...g, workstations: 0.5 }).map((c) => c.node));
    for (const n of nodes) expect(more.has(n)).toBe(true);
  });
});

describe("availability in the replay", () => {
  test("a busy node starts nothing: the second job waits for the free one", () => {
    const r = run([rigid(1, 0, 1, 100), rigid(2, 0, 1, 50)], 2, parseAvailability("0 2 busy", 2));
    expect(r.jobs.map((j) => [j.id, j.start, j.end])).toEqual([
      [1, 0, 100],
      [2, 100, 150],
    ]);
    expect(r.hosts!.takenNotFree).toBe(0);
  });

  test("a job whose last node goes overloaded swaps it for a free one in one adaptation when the gain pays, full pace after", () => {
    // 4 nodes; the job runs on n1,n2 for 10,000 s (its limit 20,000 s). At 100 s n2 goes overloaded:
    // remaining 19,900 s (by its limit) x (1 - 0.5 / 1) gained > 10 s: n2 for n3 in one swap (5 s), then 9,900 s.
    const r = run([elastic(1, 0, 2, 10_000, 20_000)], 4, parseAvailability("100 2 overloaded", 4));
    expect(r.hosts!.moves).toBe(1);
    expect(r.hosts!.declined).toBe(0);
    expect(r.jobs[0]!.resizes).toBe(1);
    expect([r.jobs[0]!.end, r.jobs[0]!.killed]).toEqual([10_005, false]);
    expect(metrics(r).moves).toBe(1);
  });

  test("a job whose middle node goes overloaded moves off it: shrink, grow back onto a free node, full pace after", () => {
    // 5 nodes; the job runs on n1,n2,n3. At 100 s n2 goes overloaded: shrink to n1 (5 s), grow back onto n3, n4 (5 s).
    const r = run([elastic(1, 0, 3, 10_000, 20_000)], 5, parseAvailability("100 2 overloaded", 5));
    expect(r.hosts!.moves).toBe(1);
    expect(r.jobs[0]!.resizes).toBe(2);
    expect([r.jobs[0]!.end, r.jobs[0]!.killed]).toEqual([10_010, false]);
  });

  test("and stays when the gain does not pay, running at the overloaded node's pace (held to its limit, as live)", () => {
    // At 9,990 s: remaining 10 s (its limit) x 0.5 = 5 s gained <= 20 s of cost. At half pace its
    // last 10 s of work would take 20 s: it is killed at its limit, 10,000 s.
    const r = run([elastic(1, 0, 2, 10_000)], 4, parseAvailability("9990 2 overloaded", 4));
    expect(r.hosts!.moves).toBe(0);
    expect(r.hosts!.declined).toBe(1);
    expect(r.jobs[0]!.resizes).toBe(0);
    expect([r.jobs[0]!.end, r.jobs[0]!.killed]).toEqual([10_000, true]);
  });

  test("an owner's node-hours count up to the last job's end; a rigid job on it is declined and slowed", () => {
    const r = run([rigid(1, 0, 2, 1000, 3000)], 2, parseAvailability("500 2 owner 0.5\n5000 2 free", 2));
    // 500 s done, then 500 s of work at half pace.
    expect(r.jobs[0]!.end).toBeCloseTo(1500, 6);
    expect(r.hosts!.declined).toBe(1);
    expect(r.hosts!.nodeHours.owner).toBeCloseTo(1000 / 3600, 9);
  });
});
