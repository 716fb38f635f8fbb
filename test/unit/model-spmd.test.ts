import { describe, expect, test } from "bun:test";
import { spmdPhase } from "../../src/model/spmd.ts";

const T = 1_000_000;
const s = (sec: number, mtct: number) => ({ time: T + sec * 1000, mtct });

describe("SPMD-phase model", () => {
  test("average over all samples, trend over the window", () => {
    const p = spmdPhase([s(0, 0.2), s(100, 0.2), s(250, 0.05), s(290, 0.03)], T + 300_000, 60)!;
    expect(p.average).toBeCloseTo(0.12, 10);
    expect(p.trend).toBeCloseTo(0.04, 10);
    expect(p.count).toBe(4);
  });

  test("no sample in the window: the trend is the newest sample", () => {
    const p = spmdPhase([s(0, 0.5), s(10, 0.3)], T + 1_000_000, 60)!;
    expect(p.trend).toBe(0.3);
  });

  test("future, negative and non-finite samples are ignored; none left: undefined", () => {
    expect(spmdPhase([s(500, 0.5), { time: T, mtct: -1 }, { time: T, mtct: Number.NaN }], T + 100_000, 60)).toBeUndefined();
    expect(spmdPhase([], T, 60)).toBeUndefined();
  });
});
