/** The controller's config file and scheduler flags: the README's example is valid, mistakes are named. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tuning } from "../../src/cli/daemon.ts";
import { readControllerConfig } from "../../src/roles/controller/config.ts";
import { DEFAULT_LIMITS } from "../../src/sched/config.ts";

const dir = mkdtempSync(join(tmpdir(), "ebb-config-"));
function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe("controller config file", () => {
  test("the README's example parses, and the limits it shows are the defaults", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const json = /```json\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf("### The elastic scheduler")))![1]!;
    const c = readControllerConfig(file("readme.json", json));
    expect(c.scheduler?.policy).toBe("ebb");
    expect(c.limits).toEqual({ ...DEFAULT_LIMITS } as typeof c.limits);
    const t = tuning({ config: file("readme2.json", json) });
    expect(t.scheduler.interval).toBe(30);
    expect(t.heartbeatMs).toBe(2000);
    expect({ privateData: t.privateData, userResizeScalesLimit: t.userResizeScalesLimit }).toEqual({ privateData: [], userResizeScalesLimit: false });
    const set = tuning({ config: file("private.json", `{"privateData": ["jobs", "usage"], "userResizeScalesLimit": true}`) });
    expect({ privateData: set.privateData, userResizeScalesLimit: set.userResizeScalesLimit }).toEqual({ privateData: ["jobs", "usage"], userResizeScalesLimit: true });
  });

  test("the README's partitions, limits and priority example parses; the flags' options carry it", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const json = /```json\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf("### Partitions, priorities and limits")))![1]!;
    const t = tuning({ config: file("readme-partitions.json", json) });
    expect(t.partitions?.map((p) => p.name)).toEqual(["main", "gpu", "debug"]);
    expect(t.userLimits).toEqual({ maxJobs: 20, maxSubmitJobs: 500, maxCpus: 256 });
    expect(t.priority.shares).toEqual({ alice: 2 });
    expect(t.priority.type).toBe("multifactor");
    expect(tuning({}).priority.weights).toEqual({ fairshare: 10000, age: 1000, jobSize: 0 });
  });

  const bad: Array<[string, string, RegExp]> = [
    ["a partition's bad hostlist", `{"partitions": [{"name": "a", "nodes": "n[1-"}]}`, /partitions\.0\.nodes: /],
    ["two default partitions", `{"partitions": [{"name": "a", "nodes": "ALL", "default": true}, {"name": "b", "nodes": "ALL", "default": true}]}`, /more than one partition is the default/],
    ["a negative limit", `{"userLimits": {"maxJobs": -1}}`, /userLimits\.maxJobs/],
    ["an unknown priority type", `{"priority": {"type": "fifo"}}`, /priority\.type/],
    ["not JSON", "{scheduler:", /not valid JSON/],
    ["a threshold that is not a number", `{"scheduler": {"upper": "high"}}`, /scheduler\.upper: .*number/i],
    ["an unknown policy", `{"scheduler": {"policy": "sjf"}}`, /scheduler\.policy: /],
    ["an unknown key", `{"schedular": {}}`, /schedular/],
    ["a range upside down", `{"limits": {"upper": [1, 0.1]}}`, /limits\.upper: a range is \[low, high\]/],
    ["an inverted pair of thresholds", `{"scheduler": {"upper": 0.01, "lower": 0.1}}`, /scheduler.lower: lower threshold must be below the upper one/],
    ["private data Slurm has but ebb does not", `{"privateData": ["jobs", "accounts"]}`, /privateData\.1: .*"jobs"\|"nodes"\|"usage"/],
    ["userResizeScalesLimit that is not a boolean", `{"userResizeScalesLimit": "yes"}`, /userResizeScalesLimit: .*boolean/],
  ];
  for (const [what, text, message] of bad) {
    test(`${what}: a usage error naming the file and the field`, () => {
      const p = file(`${what.replace(/\W+/g, "-")}.json`, text);
      expect(() => tuning({ config: p })).toThrow(message);
      expect(() => tuning({ config: p })).toThrow(p);
    });
  }

  test("a missing file says so; flags override the file and are checked too", () => {
    expect(() => tuning({ config: join(dir, "nope.json") })).toThrow(/nope\.json: no such file/);
    const p = file("base.json", `{"scheduler": {"interval": 30, "upper": 0.2}}`);
    expect(tuning({ config: p, "ers-interval": "5" }).scheduler).toEqual({ interval: 5, upper: 0.2 });
    expect(() => tuning({ upper: "x" })).toThrow(/--upper x: expected a number/);
    expect(() => tuning({ policy: "sjf" })).toThrow(/--policy sjf: expected one of fcfs, easy, ebb/);
    expect(() => tuning({ lower: "0.5" })).toThrow(/scheduler settings: lower: lower threshold must be below the upper one/);
    // Flags keep the file's bounds.
    expect(() => tuning({ heartbeat: "4000" })).toThrow("--heartbeat 4000: must be at most 3600");
    expect(() => tuning({ heartbeat: "0.01" })).toThrow("--heartbeat 0.01: must be at least 0.05");
    expect(() => tuning({ "sample-interval": "100000" })).toThrow("--sample-interval 100000: must be at most 86400");
    expect(tuning({ "sample-interval": "86400" }).sampleInterval).toBe(86400);
    expect(() => tuning({ "adapt-report-grace": "0.5" })).toThrow("--adapt-report-grace 0.5: must be at least 1");
    expect(() => tuning({ "adapt-report-grace": "3601" })).toThrow("--adapt-report-grace 3601: must be at most 3600");
    expect(tuning({ "adapt-report-grace": "3" }).adaptReportGraceMs).toBe(3000);
    expect(tuning({ config: file("grace.json", `{"adaptReportGrace": 20}`) }).adaptReportGraceMs).toBe(20_000);
    expect(tuning({}).adaptReportGraceMs).toBeUndefined();
  });
});
