/** Array specs, dependencies, times and host lists as Slurm users write them. */
import { describe, expect, test } from "bun:test";
import { compressIndices, parseArraySpec } from "../../src/domain/array.ts";
import { dependencyJobs, parseDependency, parseJobRef, type DependencySpec } from "../../src/domain/dependency.ts";
import { compressHostlist, expandHostlist } from "../../src/util/hostlist.ts";
import { parseWhen } from "../../src/util/when.ts";

describe("array specs", () => {
  test("ranges, lists, steps and a limit", () => {
    expect(parseArraySpec("1-10%2")).toEqual({ indices: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], limit: 2, step: 1 });
    expect(parseArraySpec("1,3,5")).toEqual({ indices: [1, 3, 5], limit: undefined, step: 1 });
    expect(parseArraySpec("1-9:2")).toEqual({ indices: [1, 3, 5, 7, 9], limit: undefined, step: 2 });
    expect(parseArraySpec("7,0-2,2")).toEqual({ indices: [0, 1, 2, 7], limit: undefined, step: 1 });
    for (const bad of ["", "a", "1-", "3-1", "1-9:0", "1%0", "1-20000", "1--2"]) expect(parseArraySpec(bad)).toHaveProperty("error");
  });
  test("ids named again count again: the same ranges repeated cannot make the parser walk more than the cap of ids", () => {
    // Unfixed: 585 × "0-9999" (4,096 characters, what a request may send) walked 5.85 million ids, ~0.3 s of the controller's thread.
    expect(parseArraySpec(Array(585).fill("0-9999").join(","))).toEqual({ error: expect.stringMatching(/makes more than 10000 tasks \(an id named twice counts twice\)$/) });
    expect(parseArraySpec("0-999,0-999", 1001)).toEqual({ error: '"0-999,0-999" makes more than 1001 tasks (an id named twice counts twice)' });
    expect(parseArraySpec("0-1001", 1001)).toEqual({ error: '"0-1001" makes more than 1001 tasks' });
    expect((parseArraySpec("0-500,0-499", 1001) as { indices: number[] }).indices).toHaveLength(501);
  });
  test("the step is the first range's, as Slurm's SLURM_ARRAY_TASK_STEP (checked against sbatch 22.05)", () => {
    const steps = Object.fromEntries(["1,5,9", "2,4,8", "1-9:4", "1-3,5-9:2", "20,1-7:3", "0-9:3%2", "3"].map((s) => [s, (parseArraySpec(s) as { step: number }).step]));
    expect(steps).toEqual({ "1,5,9": 1, "2,4,8": 1, "1-9:4": 4, "1-3,5-9:2": 2, "20,1-7:3": 3, "0-9:3%2": 3, "3": 1 });
  });
  test("compressed as squeue shows them", () => {
    expect(compressIndices([1, 2, 3, 5, 7, 8])).toBe("1-3,5,7-8");
    expect(compressIndices([4])).toBe("4");
  });
});

describe("dependencies", () => {
  test("the jobs named are counted as each is looked up: an array of 1,001 tasks named 800 times is looked up 10 times, not 800", () => {
    const array = Array.from({ length: 1001 }, (_, i) => 100 + i);
    let lookups = 0;
    const idsOf = (ref: { job: number }) => (lookups++, ref.job === 1 ? array : [ref.job]);
    const spec = parseDependency(`afterok:${Array(800).fill(1).join(":")}`) as DependencySpec;
    expect(dependencyJobs(spec, idsOf, 10_000)).toBeUndefined();
    expect(lookups).toBe(10);
    expect(dependencyJobs(parseDependency("afterok:1:7?singleton?afterany:8") as DependencySpec, idsOf, 1003)).toEqual([{ type: "afterok", jobs: [...array, 7] }, { type: "singleton" }, { type: "afterany", jobs: [8] }]);
    expect(dependencyJobs(parseDependency("afterok:1:7,afterany:8") as DependencySpec, idsOf, 1002)).toBeUndefined();
  });
  test("types, several jobs, array tasks, all and any", () => {
    expect(parseDependency("afterok:12:13_2")).toEqual({ any: false, terms: [{ type: "afterok", jobs: [{ job: 12 }, { job: 13, task: 2 }] }] });
    expect(parseDependency("afternotok:1,singleton")).toEqual({ any: false, terms: [{ type: "afternotok", jobs: [{ job: 1 }] }, { type: "singleton" }] });
    expect(parseDependency("after:1?afterany:2")).toMatchObject({ any: true });
    for (const bad of ["", "afterok", "afterok:x", "before:1", "singleton:3", "afterok:1,after:2?after:3", "afterok:0"]) expect(parseDependency(bad)).toHaveProperty("error");
    expect(parseJobRef("12_3")).toEqual({ job: 12, task: 3 });
    expect(parseJobRef("x")).toBeUndefined();
  });
});

describe("times", () => {
  const now = new Date(2030, 0, 15, 10, 30, 0).getTime();
  test("relative, clock, dates and names", () => {
    expect(parseWhen("now", now)).toBe(now);
    expect(parseWhen("now+60", now)).toBe(now + 60_000);
    expect(parseWhen("now+2hours", now)).toBe(now + 7_200_000);
    expect(parseWhen("now-1day", now)).toBe(now - 86_400_000);
    expect(parseWhen("11:00", now)).toBe(new Date(2030, 0, 15, 11, 0).getTime());
    expect(parseWhen("09:00", now, { future: true })).toBe(new Date(2030, 0, 16, 9, 0).getTime());
    expect(parseWhen("09:00", now)).toBe(new Date(2030, 0, 15, 9, 0).getTime());
    expect(parseWhen("2030-02-01T08:15", now)).toBe(new Date(2030, 1, 1, 8, 15).getTime());
    expect(parseWhen("2030-02-01", now)).toBe(new Date(2030, 1, 1).getTime());
    expect(parseWhen("midnight", now)).toBe(new Date(2030, 0, 15).getTime());
    expect(parseWhen("tomorrow", now)).toBe(new Date(2030, 0, 16).getTime());
    expect(parseWhen("2030-02-01T08:15:00Z", now)).toBe(Date.UTC(2030, 1, 1, 8, 15));
    for (const bad of ["soon", "25:00", "now+3fortnights", "2030-13-01"]) expect(parseWhen(bad, now)).toHaveProperty("error");
  });
  test("as people say them: N units ago, now - N units, yesterday; a unit it does not know is named", () => {
    const now = new Date(2030, 0, 15, 10, 30).getTime();
    expect(parseWhen("2 hours ago", now)).toBe(now - 7_200_000);
    expect(parseWhen("2h ago", now)).toBe(now - 7_200_000);
    expect(parseWhen("an hour ago", now)).toBe(now - 3_600_000);
    expect(parseWhen("a day ago", now)).toBe(now - 86_400_000);
    expect(parseWhen("90  Minutes   Ago", now)).toBe(now - 5_400_000);
    expect(parseWhen("now - 2 hours", now)).toBe(now - 7_200_000);
    expect(parseWhen("now-2h", now)).toBe(now - 7_200_000);
    expect(parseWhen("yesterday", now)).toBe(new Date(2030, 0, 14).getTime());
    expect(parseWhen("2 fortnights ago", now)).toEqual({ error: '"2 fortnights ago": unknown unit "fortnights" (seconds, minutes, hours, days, weeks)' });
    for (const bad of ["ago", "2 ago", "hours ago", "-2 hours ago", "2 hours from now"]) expect(parseWhen(bad, now)).toHaveProperty("error");
  });
});

describe("host lists", () => {
  test("expand is the inverse of compress", () => {
    expect(expandHostlist("node[01-03,07],login")).toEqual(["node01", "node02", "node03", "node07", "login"]);
    expect(compressHostlist(expandHostlist("node[01-03,07]") as string[])).toBe("node[01-03,07]");
    for (const bad of ["node[01-", "node[a-b]", "node[3-1]", "n[[1]]"]) expect(expandHostlist(bad)).toHaveProperty("error");
  });
});
