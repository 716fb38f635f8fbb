import { expect, test } from "bun:test";
import { programPaths } from "../../src/roles/agent/path-probe.ts";
import { PATH_DIRS_SEARCHED } from "../../src/roles/direct-drop.ts";

test("a program's paths to look up are execvp's: itself with a slash (from the directory), else each PATH directory's, an empty one the directory", () => {
  expect(programPaths("./a.out", "/home/al", "/bin")).toEqual([{ what: "program", path: "/home/al/a.out" }]);
  expect(programPaths("/opt/x", "/home/al", "/bin")).toEqual([{ what: "program", path: "/opt/x" }]);
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
