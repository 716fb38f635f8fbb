import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readKernelFile } from "../../src/roles/agent/kernel-file.ts";

describe("readKernelFile", () => {
  test("reads a kernel file whole, as readFileSync does", () => {
    expect(readKernelFile("/proc/self/cgroup")).toBe(readFileSync("/proc/self/cgroup", "utf8"));
  });

  test("reads a file of many records to its end, though the kernel gives it a page at a time", () => {
    // /proc/self/maps of a Bun process is over a page, given in reads shorter than the buffer.
    const maps = readKernelFile("/proc/self/maps")!;
    expect(maps.length).toBeGreaterThan(4096);
    expect(maps.endsWith("\n")).toBe(true);
  });

  test("reads a file longer than its buffer whole (it grows), and a short one after it", () => {
    const dir = mkdtempSync(join(tmpdir(), "kernel-file-"));
    try {
      const text = Array.from({ length: 3000 }, (_, i) => `line ${i}`).join("\n");
      writeFileSync(join(dir, "long"), text);
      expect(readKernelFile(join(dir, "long"))).toBe(text);
      writeFileSync(join(dir, "short"), "0\n");
      expect(readKernelFile(join(dir, "short"))).toBe("0\n");
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  test("is undefined for a file that is not there", () => {
    expect(readKernelFile("/proc/self/no-such-file")).toBeUndefined();
  });
});
