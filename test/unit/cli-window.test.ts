/** The time window of ebb history and ebb usage: --since and --until as ISO times, a window that ends before it starts refused. */
import { expect, test } from "bun:test";
import { UsageError } from "../../src/cli/errors.ts";
import { windowFlags } from "../../src/cli/window.ts";

test("--since and --until as ISO times; no --until: none (now); no --since: midnight", () => {
  expect(windowFlags({ since: "2030-01-31T08:00:00Z", until: "2030-02-01T00:00:00Z" })).toEqual({ since: "2030-01-31T08:00:00.000Z", until: "2030-02-01T00:00:00.000Z" });
  expect(windowFlags({ since: "2030-01-31T08:00:00Z" })).toEqual({ since: "2030-01-31T08:00:00.000Z" });
  const midnight = new Date();
  midnight.setHours(0, 0, 0, 0);
  expect(windowFlags({}).since).toBe(midnight.toISOString());
});

test("a window that ends before it starts, or a time that is none, is a usage error naming the flag", () => {
  expect(() => windowFlags({ since: "2030-02-01T00:00:00Z", until: "2030-01-31T00:00:00Z" })).toThrow(new UsageError("--until (2030-01-31T00:00:00.000Z) is not after --since (2030-02-01T00:00:00.000Z); give a --since before it"));
    expect(() => windowFlags({ until: "2000-01-01" })).toThrow(/^--until \(2000-01-01T\S+\) is not after --since \(\S+, midnight by default\); give a --since before it$/);
  expect(() => windowFlags({ since: "2030-02-01T00:00:00Z", until: "2030-02-01T00:00:00Z" })).toThrow(UsageError);
  expect(() => windowFlags({ since: "the day before" })).toThrow(/^--since: /);
  expect(() => windowFlags({ until: "soonish" })).toThrow(/^--until: /);
});
