import { describe, expect, test } from "bun:test";
import { Detector, Kind, KIND_NAMES, STRUCTURAL, formatTable, type CfgNodeRow } from "../../src/cfg/detector.ts";
import { OpType } from "../../src/cfg/types.ts";
import { mulberry32 } from "../../src/sim/random.ts";

const VECTOR = [2, 0, 6, 3, 1, 6, 3, 1, 6, 3, 1, 9, 7, 9, 7, 3, 1, 6, 3, 1, 6, 3, 1, 9, 7, 9, 7];

function run(d: Detector, ids: readonly number[]) {
  return ids.map((id, i) => {
    const r = d.step(id, OpType.P2p, i * 10, i * 10 + 1);
    return { kind: KIND_NAMES[r & 15] as string, structural: (r & STRUCTURAL) !== 0, head: d.currentHead };
  });
}

describe("process-local detector: the dissertation's Listing 10.1/10.2", () => {
  test("every step's classification", () => {
    const d = new Detector({ interval: 0 });
    const steps = run(d, VECTOR);
    const expected: [string, number, boolean][] = [
      ["outside", -1, false],
      ["outside", -1, false],
      ["outside", -1, false],
      ["outside", -1, false],
      ["outside", -1, false],
      ["loop-detected", 6, true],
      ["in-loop", 6, false],
      ["in-loop", 6, false],
      ["in-loop", 6, false],
      ["in-loop", 6, false],
      ["in-loop", 6, false],
      ["unexpected-exit", -1, true],
      ["outside", -1, false],
      ["loop-detected", 9, true],
      ["in-loop", 9, false],
      ["body-reentry", 6, true],
      ["in-loop", 6, false],
      ["in-loop", 6, false],
      ["in-loop", 6, false],
      ["in-loop", 6, false],
      ["in-loop", 6, false],
      ["in-loop", 6, false],
      ["in-loop", 6, false],
      ["head-reentry", 9, false],
      ["in-loop", 9, false],
      ["in-loop", 9, false],
      ["in-loop", 9, false],
    ];
    expect(steps.map((s) => [s.kind, s.head, s.structural])).toEqual(expected);
    // Events at steps 5, 11, 13 and 15 only (interval 0: nothing is coalesced).
    expect(d.drainEvents().map((e) => e.time / 10)).toEqual([5, 11, 13, 15]);
  });

  test("the final table", () => {
    const d = new Detector({ interval: 0 });
    run(d, VECTOR);
    const t = d.table();
    const row = (r: CfgNodeRow) => [r.site, r.head ? 1 : 0, r.body ? 1 : 0, r.re, r.rv, r.tail, r.headOf, r.reentrySource];
    expect(t.map(row)).toEqual([
      [2, 0, 0, 0, 0, null, null, null],
      [0, 0, 0, 0, 0, null, null, null],
      [6, 1, 0, 0, 4, 1, null, null],
      [3, 0, 1, 1, 5, null, 6, 7],
      [1, 0, 1, 0, 5, null, 6, null],
      [9, 1, 0, 0, 3, 7, null, null],
      [7, 0, 1, 0, 3, null, 9, null],
    ]);
    expect(formatTable(t).split("\n")[3]).toBe("id: 3; H: 0; B: 1; Re: 1; Rv: 5; tail: 7; head: 6");
  });

  test("structural events are reported at most once per sampling interval", () => {
    const d = new Detector({ interval: 1000 });
    run(d, VECTOR);
    const ev = d.drainEvents();
    // The first (step 5) is reported at once; 11, 13, 15 fall in the same interval and wait.
    expect(ev).toEqual([{ time: 50, bits: 1, count: 1 }]);
    d.step(6, OpType.P2p, 1100, 1101); // 7 -> 6: a new entry edge into loop 6 at its head
    d.step(3, OpType.P2p, 1110, 1111);
    d.step(1, OpType.P2p, 1120, 1121);
    d.step(6, OpType.P2p, 1130, 1131); // head visit after the timer: the pending report goes out
    const later = d.drainEvents();
    expect(later.length).toBe(1);
    expect(later[0]!.count).toBeGreaterThanOrEqual(3);
  });

  test("samples at the next loop-head visit after the timer, tagged with the head, with TLT/TMT", () => {
    const d = new Detector({ interval: 100 });
    // loop A B: A at t, 2 units of MPI; B at t+5, 3 units; iteration 10 units.
    for (let i = 0; i < 30; i++) {
      const t = i * 10;
      d.step(100, OpType.Collective, t, t + 2);
      d.step(200, OpType.P2p, t + 5, t + 8);
    }
    const s = d.drainSamples();
    expect(s.length).toBeGreaterThan(0);
    for (const x of s) {
      expect(x.head).toBe(100);
      expect(x.time % 10).toBe(0); // only at head visits
      expect(x.windowMpi / x.windowIterations).toBeCloseTo(5, 9);
      expect(x.windowTime / x.windowIterations).toBeCloseTo(10, 9);
    }
    expect(s[0]!.time).toBe(100); // detection at t=10; the timer expires at 100, a head visit
    const head = d.table().find((r) => r.site === 100)!;
    expect(head.tmt).toBeCloseTo(29 * 5, 9); // from its detection at t=10 on
    // offset of B from its head: 5 per visit.
    const b = d.table().find((r) => r.site === 200)!;
    expect(b.offset / b.offsetCount).toBeCloseTo(5, 9);
  });

  test("a loop inside a known loop's body is detected as nested (head becomes a body node)", () => {
    const d = new Detector({ interval: 0 });
    const seq = [1, 2, 3, 1, 2, 3, 1, 2, 4, 5, 4, 5, 4, 5, 3, 1, 2, 4, 5, 4, 5, 3];
    seq.forEach((id, i) => d.step(id, OpType.P2p, i, i));
    const t = new Map(d.table().map((r) => [r.site, r]));
    expect(t.get(1)!.head).toBe(true);
    expect(t.get(4)!.head).toBe(true);
    expect(t.get(4)!.tail).toBe(5);
    expect(t.get(5)!.headOf).toBe(4);
    expect(t.get(3)!.headOf).toBe(1);
  });

  test("capacity: further sites are skipped, never thrown", () => {
    const d = new Detector({ capacity: 2 });
    expect(d.step(1, 0, 0, 0) & 15).toBe(Kind.Outside);
    d.step(2, 0, 0, 0);
    expect(d.step(3, 0, 0, 0)).toBe(Kind.Skipped);
    expect(d.skipped).toBe(1);
    expect(d.nodes).toBe(2);
  });

  test("the CFG grows past its first arrays (64 nodes) and keeps every node's state", () => {
    // One loop over 1,000 call sites, three times: the arrays grow 64 -> 256 -> 1024 on the first pass.
    const d = new Detector({ interval: 0 });
    const sites = Array.from({ length: 1000 }, (_, i) => 1 + i * 7);
    const kinds = run(d, [...sites, ...sites, ...sites]).map((s) => s.kind);
    expect(kinds.slice(0, 1000).every((k) => k === "outside")).toBe(true);
    expect(kinds[1000]).toBe("loop-detected");
    expect(kinds.slice(1001).every((k) => k === "in-loop")).toBe(true);
    const rows = d.table();
    expect(rows.length).toBe(1000);
    expect(rows.find((r) => r.site === 1)).toMatchObject({ head: true, tail: sites.at(-1), rv: 2 });
    for (const r of rows.filter((x) => x.site !== 1)) expect(r).toMatchObject({ body: true, headOf: 1, rv: 2 });
    const full = new Detector({ capacity: 100 });
    run(full, sites.slice(0, 150));
    expect(full.nodes).toBe(100);
    expect(full.skipped).toBe(50);
  });

  test("bad options name the field", () => {
    expect(() => new Detector({ capacity: 0 })).toThrow(/capacity/);
    expect(() => new Detector({ interval: -1 })).toThrow(/interval/);
  });
});

describe("process-local detector: properties over seeded random call sequences", () => {
  for (const seed of [1, 2, 3, 42, 1234, 99991]) {
    test(`seed ${seed}: never throws, invariants hold`, () => {
      const rng = mulberry32(seed);
      const cap = 4 + Math.floor(rng.next() * 60);
      const d = new Detector({ capacity: cap, interval: rng.next() * 50 });
      const sites = 2 + Math.floor(rng.next() * 80);
      let t = 0;
      let steps = 0;
      let skipped = 0;
      // Mix of random ids and repeated random patterns (so loops actually form).
      const pattern = Array.from({ length: 1 + Math.floor(rng.next() * 8) }, () => Math.floor(rng.next() * sites));
      for (let i = 0; i < 5000; i++) {
        const id = rng.next() < 0.7 ? pattern[i % pattern.length]! : Math.floor(rng.next() * sites) * 7919;
        const dt = rng.next() * 3;
        const r = d.step(id, (id % 5) as OpType, t, t + dt);
        t += dt + rng.next() * 2;
        steps++;
        if (r === Kind.Skipped) skipped++;
        else expect(d.currentHead === -1 || d.table().some((x) => x.site === d.currentHead && x.head)).toBe(true);
      }
      const rows = d.table();
      const bySite = new Map(rows.map((r) => [r.site, r]));
      expect(rows.length).toBeLessThanOrEqual(cap);
      expect(rows.reduce((a, r) => a + r.rv + 1, 0)).toBe(steps - skipped);
      expect(d.skipped).toBe(skipped);
      for (const r of rows) {
        expect(r.rv).toBeGreaterThanOrEqual(0);
        expect(r.head).toBe(r.tail !== null);
        expect(r.body).toBe(r.headOf !== null);
        if (r.headOf !== null) {
          expect(bySite.get(r.headOf)!.head).toBe(true);
          expect(r.headOf).not.toBe(r.site);
        }
        expect(r.re > 0).toBe(r.reentrySource !== null);
        expect(r.tmt).toBeGreaterThanOrEqual(0);
        expect(r.last).toBeGreaterThanOrEqual(r.created);
        // Head chains end (no cycles).
        let x: number | null = r.site;
        let depth = 0;
        while (x !== null && depth < 100) {
          x = bySite.get(x)!.headOf;
          depth++;
        }
        expect(depth).toBeLessThan(100);
      }
      for (const s of d.drainSamples()) {
        expect(bySite.get(s.head)!.head).toBe(true);
        expect(s.windowIterations).toBeGreaterThan(0);
        expect(s.windowMpi).toBeLessThanOrEqual(s.windowTime + 3);
      }
    });
  }
});
