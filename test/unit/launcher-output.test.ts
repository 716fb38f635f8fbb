/** The launcher's file sinks (roles/launcher/output.ts): a step's output in one file, or in a file per rank or node (srun -o out-%t, -o out-%n). */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileSink, LINE_HELD_MAX, rankFileSink } from "../../src/roles/launcher/output.ts";

const dir = mkdtempSync(join(tmpdir(), "ebb-output-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const read = (name: string) => readFileSync(join(dir, name), "utf8");

describe("file sinks", () => {
  test("a file per rank: every rank's file made at the start (an empty one for a rank that prints nothing), errors in one shared file, lines whole and labelled", () => {
    writeFileSync(join(dir, "task-1.out"), "an earlier run's\n");
    const sink = rankFileSink((r) => join(dir, `task-${r}.out`), () => join(dir, "all.err"), 3, { label: true });
    sink.io(0, 1, "zero ");
    sink.io(1, 2, "one failed\n");
    sink.io(0, 1, "done\nand a tail");
    sink.io(2, 2, "two failed\n");
    sink.flush();
    sink.close();
    expect(readdirSync(dir).sort()).toEqual(["all.err", "task-0.out", "task-1.out", "task-2.out"]);
    expect([read("task-0.out"), read("task-1.out"), read("task-2.out")]).toEqual(["0: zero done\n0: and a tail\n", "", ""]);
    expect(read("all.err")).toBe("1: one failed\n2: two failed\n");
  });

  test("a file per node, appended to; one file for all (fileSink) with its errors apart", () => {
    const node = (r: number) => join(dir, `node-${r < 2 ? 0 : 1}.out`);
    for (const run of ["first", "second"]) {
      const sink = rankFileSink(node, undefined, 4, { label: false, append: true });
      for (const r of [0, 1, 2, 3]) sink.io(r, r === 3 ? 2 : 1, `${run} ${r}\n`);
      sink.close();
    }
    expect([read("node-0.out"), read("node-1.out")]).toEqual(["first 0\nfirst 1\nsecond 0\nsecond 1\n", "first 2\nfirst 3\nsecond 2\nsecond 3\n"]);
    const one = fileSink(join(dir, "one.out"), { label: false, error: join(dir, "one.err") });
    one.io(5, 1, "out\n");
    one.io(6, 2, "err\n");
    one.notice("rank 6 exited with code 1");
    one.close();
    expect([read("one.out"), read("one.err")]).toEqual(["out\n", "err\nebb: error: rank 6 exited with code 1\n"]);
  });
});

describe("a line longer than LINE_HELD_MAX", () => {
  test("is written in pieces as it comes, not held whole: unlabelled byte for byte, labelled a labelled line a piece", () => {
    for (const label of [false, true]) {
      const name = `long-${label}.out`;
      const sink = fileSink(join(dir, name), { label });
      const chunk = "y".repeat(LINE_HELD_MAX / 4 + 3);
      for (let i = 0; i < 9; i++) sink.io(0, 1, chunk);
      const before = readFileSync(join(dir, name), "utf8");
      expect(before.replaceAll(/0: |\n/g, "").length).toBe(2 * LINE_HELD_MAX);
      sink.io(0, 1, "z\nshort");
      sink.flush();
      sink.close();
      const total = 9 * chunk.length;
      const rest = total - 2 * LINE_HELD_MAX;
      const expected = label ? `0: ${"y".repeat(LINE_HELD_MAX)}\n0: ${"y".repeat(LINE_HELD_MAX)}\n0: ${"y".repeat(rest)}z\n0: short\n` : `${"y".repeat(total)}z\nshort`;
      expect(read(name)).toBe(expected);
    }
  });

  test("a piece never ends between the two halves of a character outside the BMP: the file holds the rank's text exactly", () => {
    const sink = fileSink(join(dir, "astral.out"), { label: false });
    // The 😀 (two UTF-16 units) straddles the cut at LINE_HELD_MAX.
    const text = `${"x".repeat(LINE_HELD_MAX - 1)}😀${"x".repeat(10)}`;
    sink.io(0, 1, text);
    sink.flush();
    sink.close();
    expect(read("astral.out")).toBe(text);
  });
});
