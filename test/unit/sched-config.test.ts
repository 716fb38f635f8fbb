import { describe, expect, test } from "bun:test";
import { DEFAULT_CONFIG, jobConfig, resolveConfig } from "../../src/sched/config.ts";

describe("scheduler config", () => {
  test("defaults are the dissertation's thresholds and a 60 s interval", () => {
    const c = resolveConfig();
    expect(c).toMatchObject({ policy: "ebb", upper: 0.1, lower: 0.01, interval: 60, payoff: true });
  });

  test("bad values are refused with the field named", () => {
    expect(() => resolveConfig({ interval: 0 })).toThrow(/interval/);
    expect(() => resolveConfig({ lower: 0.2, upper: 0.1 })).toThrow(/lower/);
    expect(() => resolveConfig({ policy: "nope" as never })).toThrow(/policy/);
  });

  test("per-job overrides are clamped to the admin limits, refused without one", () => {
    const { config, clamped } = jobConfig(DEFAULT_CONFIG, { upper: 0.9, settle: 30, window: 100 }, { upper: [0.05, 0.5], settle: [60, 600] });
    expect(config.upper).toBe(0.5);
    expect(config.settle).toBe(60);
    expect(config.window).toBe(DEFAULT_CONFIG.window);
    expect(clamped).toHaveLength(3);
    expect(clamped.join("\n")).toContain("window 100 refused");
  });

  test("an override may not invert the thresholds; payoff may be turned off only if allowed", () => {
    expect(jobConfig(DEFAULT_CONFIG, { lower: 0.3 }, { lower: [0, 1] }).config.lower).toBe(DEFAULT_CONFIG.lower);
    expect(jobConfig(DEFAULT_CONFIG, { payoff: false }).config.payoff).toBe(true);
    expect(jobConfig(DEFAULT_CONFIG, { payoff: false }, { payoffOptional: true }).config.payoff).toBe(false);
  });
});
