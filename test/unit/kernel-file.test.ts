import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readKernelRecord } from "../../src/util/kernel-file.ts";

test("a kernel file of one record reads whole in one read, as readFileSync reads it", () => {
  const line = readKernelRecord("/proc/self/stat");
  expect(line.startsWith(`${process.pid} (`)).toBe(true);
  expect(line.endsWith("\n")).toBe(true);
  expect(readKernelRecord("/proc/self/statm").split(" ").length).toBe(readFileSync("/proc/self/statm", "utf8").split(" ").length);
});

test("an empty file reads as empty; one that fills the buffer is read again whole", () => {
  const dir = mkdtempSync(join(tmpdir(), "ebb-test-kernel-file-"));
  try {
    writeFileSync(join(dir, "empty"), "");
    expect(readKernelRecord(join(dir, "empty"))).toBe("");
    const big = "x".repeat(40_000);
    writeFileSync(join(dir, "big"), big);
    expect(readKernelRecord(join(dir, "big"))).toBe(big);
    const exact = "y".repeat(16 << 10);
    writeFileSync(join(dir, "exact"), exact);
    expect(readKernelRecord(join(dir, "exact"))).toBe(exact);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a file that is not there throws as readFileSync does", () => {
  expect(() => readKernelRecord("/proc/self/no-such-file")).toThrow(expect.objectContaining({ code: "ENOENT" }));
});
