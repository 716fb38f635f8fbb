import { expect, test } from "bun:test";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { linksMpi } from "../../src/roles/agent/cfg-lib.ts";

/** An "ELF" file (only the magic matters here) of `size` bytes with `text` written at `at`. */
function elf(path: string, size: number, text?: string, at = 0): void {
  const b = Buffer.alloc(size);
  b.set([0x7f, 0x45, 0x4c, 0x46]);
  if (text) b.write(text, at, "latin1");
  writeFileSync(path, b);
}

test("an executable links MPI when its first 4 MiB name libmpi, across read chunks too; the answer follows the file", () => {
  const dir = mkdtempSync(join(tmpdir(), "ebb-linksmpi-"));
  const exe = join(dir, "prog");
  elf(exe, 600_000, "libmpi.so.12", (256 << 10) - 3); // the name straddles the first chunk's end
  expect(linksMpi(exe, undefined)).toBe(true);
  elf(exe, 600_001); // rewritten without it: not the remembered answer
  expect(linksMpi(exe, undefined)).toBe(false);
  elf(exe, (4 << 20) + 100, "libmpich.so", (4 << 20) + 10); // only past the first 4 MiB
  expect(linksMpi(exe, undefined)).toBe(false);
  const script = join(dir, "script");
  writeFileSync(script, "#!/bin/sh\n# libmpi\n");
  expect(linksMpi(script, undefined)).toBe(false);
  expect(linksMpi(join(dir, "missing"), undefined)).toBe(false);
  expect(linksMpi(process.execPath, undefined)).toBe(false);
});

test("a bare program name is looked up on the job's PATH, not the agent's", () => {
  const dir = mkdtempSync(join(tmpdir(), "ebb-linksmpi-path-"));
  const exe = join(dir, "ebb-test-mpi-prog");
  elf(exe, 4096, "libmpi.so.12", 100);
  chmodSync(exe, 0o755);
  expect(linksMpi("ebb-test-mpi-prog", `/nonexistent:${dir}`)).toBe(true);
  expect(linksMpi("ebb-test-mpi-prog", process.env.PATH)).toBe(false);
  expect(linksMpi("ebb-test-mpi-prog", undefined)).toBe(false);
});
