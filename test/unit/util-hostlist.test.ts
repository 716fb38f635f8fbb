/** Slurm host lists (SLURM_JOB_NODELIST, --nodelist): expansion in Slurm's full syntax, and back. */
import { describe, expect, test } from "bun:test";
import { compressHostlist, expandHostlist } from "../../src/util/hostlist.ts";

describe("expandHostlist", () => {
  test.each([
    ["node01", ["node01"]],
    ["node[01-03,07],login", ["node01", "node02", "node03", "node07", "login"]],
    ["n[8-10]", ["n8", "n9", "n10"]],
    ["n[08-10]", ["n08", "n09", "n10"]],
    ["n[098-101]", ["n098", "n099", "n100", "n101"]],
    ["rack[1-2]-n[01-02]", ["rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"]],
    ["a[1-2]b[3]c", ["a1b3c", "a2b3c"]],
    ["[1-3]", ["1", "2", "3"]],
    ["cn[1,3]-ib, cn5-ib", ["cn1-ib", "cn3-ib", "cn5-ib"]],
    ["n[1-2],n2,n[2-3]", ["n1", "n2", "n3"]],
    ["host-1.example.org,host-2.example.org", ["host-1.example.org", "host-2.example.org"]],
    ["", []],
  ])("%p", (text, names) => {
    expect(expandHostlist(text)).toEqual(names);
  });

  test.each([
    ["n[1-2", "has unbalanced brackets"],
    ["n1-2]", "has unbalanced brackets"],
    ["n[1-[2]]", "has a bracket inside a bracket"],
    ["n[]", "has an empty bracket"],
    ["n[a-b]", "is not a number or a range"],
    ["n[3-1]", "is not a range from low to high"],
    ["n[1-9999999]", "has more than 100000 numbers"],
    ["a[1-1000]b[1-1000]", "names more than 100000 hosts"],
  ])("%p is refused: %s", (text, why) => {
    const r = expandHostlist(text);
    expect("error" in r && r.error).toContain(why);
  });

  test("compress and expand are inverses on Slurm-shaped lists", () => {
    const names = ["node01", "node02", "node03", "node07", "gpu1", "gpu2", "login"];
    expect(compressHostlist(names)).toBe("node[01-03,07],gpu[1-2],login");
    expect(expandHostlist(compressHostlist(names))).toEqual(names);
  });

  test("one name is itself, digits past a double's precision too", () => {
    for (const name of ["node01", "login", "n12345678901234567890"]) expect(compressHostlist([name])).toBe(name);
  });
});
