/** Which ranks a warm rank may run (warm-pool.ts), and the claim it takes (warm-rank.ts): plain data. */
import { expect, test } from "bun:test";
import { startsWarm, warmProgram } from "../../src/roles/agent/warm-pool.ts";
import { parseClaim } from "../../src/roles/warm-rank.ts";

const EBB = ["ebb", "/run/ebb/agent-n1-7/ebb"];

test("a warm rank runs this ebb's `ebb exec [--] FILE ARGS` and nothing else", () => {
  expect(warmProgram(["ebb", "exec", "app.ts", "-x", "--y"], EBB)).toEqual({ file: "app.ts", args: ["-x", "--y"] });
  expect(warmProgram(["/run/ebb/agent-n1-7/ebb", "exec", "--", "app.ts"], EBB)).toEqual({ file: "app.ts", args: [] });
  for (const argv of [
    ["bun", "app.ts"], // bun's own start (a .env, bunfig.toml, import.meta.main) is not ebb exec's
    ["/usr/local/bin/ebb", "exec", "app.ts"], // another ebb
    ["ebb", "exec", "--bun", "app.ts"],
    ["ebb", "exec"],
    ["ebb", "exec", "--"],
    ["ebb", "run", "app.ts"],
    ["/usr/bin/env", "ebb", "exec", "app.ts"],
  ])
    expect(warmProgram(argv, EBB)).toBeUndefined();
});

test("a rank whose environment sets the runtime's start-up variables starts cold", () => {
  expect(startsWarm({ PATH: "/bin", HOME: "/home/a", NODE_ENV: "production", LDFLAGS: "-L/x" })).toBe(true);
  for (const name of ["LD_PRELOAD", "LD_LIBRARY_PATH", "BUN_JSC_useJIT", "MALLOC_ARENA_MAX", "GLIBC_TUNABLES", "NODE_OPTIONS", "TZ"]) expect(startsWarm({ PATH: "/bin", [name]: "" })).toBe(false);
});

test("the claim is checked field by field; an empty stdin is no claim", () => {
  const ok = { as: { uid: 1001, gid: 1001, groups: [1001, 27] }, cwd: "/home/a", env: { A: "1" }, file: "app.ts", args: ["x"] };
  expect(parseClaim(JSON.stringify(ok))).toEqual(ok);
  expect(parseClaim(JSON.stringify({ ...ok, as: undefined }))).toEqual({ ...ok, as: undefined });
  expect(parseClaim("")).toBeUndefined();
  for (const bad of [{ ...ok, as: { uid: -1, gid: 0, groups: [] } }, { ...ok, as: { uid: 1, gid: 1.5, groups: [] } }, { ...ok, as: { uid: 1, gid: 1, groups: ["0"] } }, { ...ok, env: { A: 1 } }, { ...ok, args: "x" }, { ...ok, cwd: 3 }, { ...ok, file: undefined }])
    expect(() => parseClaim(JSON.stringify(bad))).toThrow();
  expect(() => parseClaim("{")).toThrow();
});
