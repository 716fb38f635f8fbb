import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PATH_DIRS_SEARCHED, PathProbes, programPaths } from "../../src/roles/agent/path-probe.ts";

test("a program's paths to look up are execvp's: itself with a slash (from the directory), else each PATH directory's, an empty one the directory", () => {
  expect(programPaths("./a.out", "/home/al", "/bin")).toEqual([{ what: "program", path: "/home/al/a.out", onPath: "first" }]);
  expect(programPaths("/opt/x", "/home/al", "/bin")).toEqual([{ what: "program", path: "/opt/x", onPath: "first" }]);
  expect(programPaths("prog", "/home/al", "/usr/bin::bin").map((p) => [p.path, p.onPath])).toEqual([
    ["/usr/bin/prog", "first"],
    ["/home/al/prog", "later"],
    ["/home/al/bin/prog", "later"],
  ]);
  expect(programPaths("prog", "/", undefined).map((p) => p.path)).toEqual(["/usr/local/bin/prog", "/usr/bin/prog", "/bin/prog"]);
  // A batch script read from its descriptor, and no program: nothing of the user's to look up.
  expect([programPaths("/dev/fd/3", "/", "/bin"), programPaths("", "/", "/bin")]).toEqual([[], []]);
  // No more directories than the agent itself would search.
  expect(programPaths("p", "/", Array.from({ length: PATH_DIRS_SEARCHED + 5 }, (_, i) => `/d${i}`).join(":")).length).toBe(PATH_DIRS_SEARCHED);
});

const dir = mkdtempSync(join(tmpdir(), "ebb-look-up-"));
const probes = new PathProbes();
afterAll(() => {
  probes.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An "ELF" file (only the magic matters here) of `size` bytes with `text` written at `at`, executable. */
function elf(path: string, size: number, text?: string, at = 0): string {
  const b = Buffer.alloc(size);
  b.set([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x0a]);
  if (text) b.write(text, at, "latin1");
  writeFileSync(path, b);
  chmodSync(path, 0o755);
  return path;
}

/** What the look-up (a process of the caller's, kept or spawned) says of `name` run from `dir` on `PATH`: where it is, and whether that links MPI (asked anew: each test file is new). */
const mpiOf = async (name: string, PATH?: string) => {
  const found = (await probes.lookUp(undefined, programPaths(name, dir, PATH))).found;
  return found.length === 0 ? "not found" : (await askedAnew(found[0]!)) ? `${found[0]} links MPI` : `${found[0]}`;
};

/** What a new agent's look-up says of `path`, remembering nothing. */
async function askedAnew(path: string): Promise<boolean> {
  const fresh = new PathProbes();
  try {
    return await fresh.linksMpi(undefined, path);
  } finally {
    fresh.close();
  }
}

test("the look-up says whether the program found links MPI: an ELF file naming libmpi in its first 4 MiB, the first of its name on PATH that may be executed; the agent reads none of it", async () => {
  elf(join(dir, "prog"), 600_000, "libmpi.so.12", (256 << 10) - 3);
  expect(await mpiOf("./prog")).toBe(`${dir}/prog links MPI`);
  elf(join(dir, "prog"), 600_001);
  expect(await mpiOf("./prog")).toBe(`${dir}/prog`);
  elf(join(dir, "late"), (4 << 20) + 100, "libmpich.so", (4 << 20) + 10); // only past the first 4 MiB
  expect(await mpiOf("./late")).toBe(`${dir}/late`);
  writeFileSync(join(dir, "script"), "#!/bin/sh\n# libmpi\n");
  chmodSync(join(dir, "script"), 0o755);
  expect(await mpiOf("./script")).toBe(`${dir}/script`);
  expect(await mpiOf("./missing")).toBe("not found");
  // On PATH: the first executable file of the name, as execvp; one that may not be executed is passed over.
  mkdirSync(join(dir, "a"));
  mkdirSync(join(dir, "b"));
  elf(join(dir, "b", "ebb-test-mpi-prog"), 4096, "libmpi.so.12", 100);
  expect(await mpiOf("ebb-test-mpi-prog", `/nonexistent:${join(dir, "b")}`)).toBe(`${dir}/b/ebb-test-mpi-prog links MPI`);
  writeFileSync(join(dir, "a", "ebb-test-mpi-prog"), "plain");
  expect(await mpiOf("ebb-test-mpi-prog", `${join(dir, "a")}:${join(dir, "b")}`)).toBe(`${dir}/b/ebb-test-mpi-prog links MPI`);
  elf(join(dir, "a", "ebb-test-mpi-prog"), 4096);
  expect(await mpiOf("ebb-test-mpi-prog", `${join(dir, "a")}:${join(dir, "b")}`)).toBe(`${dir}/a/ebb-test-mpi-prog`);
  expect(await mpiOf("ebb-test-mpi-prog", "/usr/bin:/bin")).toBe("not found");
});

test("a user's answer whether a program links MPI is kept for its path: asked once for many launches", async () => {
  const prog = elf(join(dir, "kept"), 4096, "libmpi.so.12", 100);
  expect(await probes.linksMpi(undefined, prog)).toBe(true);
  elf(prog, 4096);
  expect({ kept: await probes.linksMpi(undefined, prog), anew: await askedAnew(prog) }).toEqual({ kept: true, anew: false });
});

test("the look-up says which plain paths are not there and where the program is, and answers every path in order", async () => {
  const there = { what: "working directory", path: dir };
  const gone = { what: "output file", path: join(dir, "nothing", "x") };
  const r = await probes.lookUp(undefined, [there, gone, ...programPaths("sh", dir, "/nonexistent:/bin:/usr/bin")]);
  expect(r).toEqual({ missing: [gone], found: ["/bin/sh"] });
});
