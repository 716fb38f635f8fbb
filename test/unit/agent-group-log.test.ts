import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatGroup, GroupLog, parseGroups } from "../../src/roles/agent/group-log.ts";

const dir = mkdtempSync(join(tmpdir(), "ebb-group-log-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the process-group record's lines", () => {
  test("round-trip, the later line of a group winning", () => {
    const text = formatGroup(100, { jobId: 7, start: "5000" }) + formatGroup(200, { jobId: 8, start: "6000" }) + formatGroup(100, { jobId: 9, start: "7000" });
    expect(text).toBe("100 7 5000\n200 8 6000\n100 9 7000\n");
    expect([...parseGroups(text)]).toEqual([
      [100, { jobId: 9, start: "7000" }],
      [200, { jobId: 8, start: "6000" }],
    ]);
  });

  test("a torn last write and foreign lines are skipped", () => {
    expect([...parseGroups("100 7 5000\n200 8 60")]).toEqual([[100, { jobId: 7, start: "5000" }]]);
    expect([...parseGroups("{}\n\n-1 2 3\n1 2\nx y z\n300 9 1\n")]).toEqual([[300, { jobId: 9, start: "1" }]]);
  });
});

describe("GroupLog", () => {
  test("appends, reads back, and compacts to the groups it is given", () => {
    const path = join(dir, "groups");
    const g = new GroupLog(path);
    expect([...g.read()]).toEqual([]);
    g.append(100, { jobId: 1, start: "10" });
    g.append(200, { jobId: 2, start: "20" });
    expect(g.length).toBe(2);
    expect(readFileSync(path, "utf8")).toBe("100 1 10\n200 2 20\n");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    g.rewrite(new Map([[200, { jobId: 2, start: "20" }]]));
    expect(g.length).toBe(1);
    g.append(300, { jobId: 3, start: "30" });
    expect([...new GroupLog(path).read().keys()]).toEqual([200, 300]);
  });

  test("holds no descriptor of the record between appends (each one is copied into every child spawned)", () => {
    const path = join(dir, "groups-fds");
    const g = new GroupLog(path);
    g.append(100, { jobId: 1, start: "10" });
    const held = readdirSync("/proc/self/fd").filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === path;
      } catch {
        return false;
      }
    });
    expect(held).toEqual([]);
  });

  test("reads the JSON record written before this format, and drops it once rewritten", () => {
    const path = join(dir, "groups2");
    const legacy = join(dir, "groups2.json");
    writeFileSync(legacy, JSON.stringify({ "400": { jobId: 4, start: "40" } }));
    appendFileSync(path, "500 5 50\n");
    const g = new GroupLog(path, legacy);
    expect([...g.read()]).toEqual([
      [400, { jobId: 4, start: "40" }],
      [500, { jobId: 5, start: "50" }],
    ]);
    g.rewrite(new Map());
    expect(existsSync(legacy)).toBe(false);
    expect(readFileSync(path, "utf8")).toBe("");
  });
});
