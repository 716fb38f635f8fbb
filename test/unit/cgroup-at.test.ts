import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { holdCgroupDir, makeCgroup, readCgroupRecord, releaseCgroupDir, removeCgroup, renameCgroup, writeCgroupFile } from "../../src/roles/agent/cgroup-at.ts";

const base = mkdtempSync(join(tmpdir(), "ebb-test-cgroup-at-"));
const outside = mkdtempSync(join(tmpdir(), "ebb-test-cgroup-at-out-"));
afterAll(() => {
  releaseCgroupDir(base);
  rmSync(base, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const code = (fn: () => unknown) => {
  try {
    fn();
    return undefined;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code;
  }
};

test("under a held directory: made, written, read, renamed and removed relative to it, with node:fs's error codes", () => {
  expect(holdCgroupDir(base)).toBe(true);
  const job = join(base, "job-1");
  makeCgroup(job);
  expect(code(() => makeCgroup(job))).toBe("EEXIST");
  writeFileSync(join(job, "memory.max"), "");
  writeCgroupFile(join(job, "memory.max"), "1048576");
  expect(readFileSync(join(job, "memory.max"), "utf8")).toBe("1048576");
  expect(readCgroupRecord(join(job, "memory.max"))).toBe("1048576");
  // A cgroup file exists: the write does not make one.
  expect(code(() => writeCgroupFile(join(job, "nothing"), "1"))).toBe("ENOENT");
  expect(existsSync(join(job, "nothing"))).toBe(false);
  expect(code(() => readCgroupRecord(join(job, "nothing")))).toBe("ENOENT");
  expect(code(() => removeCgroup(job))).toBe("ENOTEMPTY");
  renameCgroup(job, join(base, "spare-0"));
  expect(existsSync(job)).toBe(false);
  rmSync(join(base, "spare-0", "memory.max"));
  removeCgroup(join(base, "spare-0"));
  expect(existsSync(join(base, "spare-0"))).toBe(false);
  expect(code(() => removeCgroup(job))).toBe("ENOENT");
});

test("a path under no held directory goes by its path, with the same results", () => {
  const dir = join(outside, "job-2");
  makeCgroup(dir);
  writeFileSync(join(dir, "cpu.stat"), "");
  writeCgroupFile(join(dir, "cpu.stat"), "usage_usec 5\n");
  expect(readCgroupRecord(join(dir, "cpu.stat"))).toBe("usage_usec 5\n");
  expect(code(() => writeCgroupFile(join(dir, "nothing"), "1"))).toBe("ENOENT");
  // A name that only starts like the held directory's is not under it.
  expect(code(() => makeCgroup(`${base}x/job-3`))).toBe("ENOENT");
});

test("a record that fills the buffer is read whole", () => {
  const big = "x".repeat(40_000);
  writeFileSync(join(base, "big"), big);
  expect(readCgroupRecord(join(base, "big"))).toBe(big);
});
