/** `--elastic-settings K=V,...`: parsed into the API's settings, every mistake named. */
import { describe, expect, test } from "bun:test";
import { elasticFields, numberFlag, parseElasticSettings, UsageError } from "../../src/cli/common.ts";

describe("--elastic-settings", () => {
  test("numbers and a yes/no payoff", () => {
    expect(parseElasticSettings("upper=0.2, lower=0.005,settle=30,minSamples=4,window=600,payoff=no")).toEqual({
      upper: 0.2,
      lower: 0.005,
      settle: 30,
      minSamples: 4,
      window: 600,
      payoff: false,
    });
    expect(parseElasticSettings("payoff=yes")).toEqual({ payoff: true });
    expect(parseElasticSettings(undefined)).toBeUndefined();
  });

  const bad: Array<[string, RegExp]> = [
    ["upper", /"upper" is not KEY=VALUE/],
    ["uper=0.2", /unknown key uper \(keys: upper, lower, window, minSamples, settle, payoff\)/],
    ["upper=high", /upper: .*number/i],
    ["upper=", /upper: .*number/i],
    ["minSamples=1.5", /minSamples: .*int/i],
    ["settle=-1", /settle: /],
    ["payoff=maybe", /payoff=maybe: expected yes or no/],
  ];
  for (const [text, message] of bad) {
    test(`${text} -> a usage error naming the problem`, () => {
      expect(() => parseElasticSettings(text)).toThrow(UsageError);
      expect(() => parseElasticSettings(text)).toThrow(message);
    });
  }
});

describe("number flags", () => {
  test("decimals within bounds pass; the rest is refused with the flag, the value and the bound", () => {
    expect(numberFlag("0.5", "--x", { min: 0.1 })).toBe(0.5);
    expect(numberFlag("2e1", "--x")).toBe(20);
    expect(numberFlag(undefined, "--x")).toBeUndefined();
    expect(() => numberFlag("abc", "--x")).toThrow("--x abc: expected a number");
    expect(() => numberFlag("-1", "--x", { min: 0 })).toThrow("--x -1: expected a number");
    expect(() => numberFlag("0.01", "--x", { min: 0.1 })).toThrow("--x 0.01: must be at least 0.1");
    expect(() => numberFlag("0", "--x", { above: 0 })).toThrow("--x 0: must be more than 0");
    expect(() => numberFlag("2", "--x", { max: 1 })).toThrow("--x 2: must be at most 1");
  });

  test("--sample-interval is checked like every other number flag", () => {
    expect(elasticFields({ "sample-interval": "1.5" }).sampleInterval).toBe(1.5);
    expect(() => elasticFields({ "sample-interval": "0.01" })).toThrow("--sample-interval 0.01: must be at least 0.1");
    expect(() => elasticFields({ "sample-interval": "soon" })).toThrow(UsageError);
  });
});
