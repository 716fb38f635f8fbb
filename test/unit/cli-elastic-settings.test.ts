/** `--elastic-settings K=V,...`: parsed into the API's settings, every mistake named. */
import { describe, expect, test } from "bun:test";
import { parseElasticSettings, UsageError } from "../../src/cli/common.ts";

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
