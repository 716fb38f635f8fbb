/**
 * Every command's help fits the terminal: `ebb CMD --help` and `ebb help`, run as processes with
 * COLUMNS=80, print no line over 80 columns; with COLUMNS=120 the same help uses the width.
 */
import { expect, test } from "bun:test";
import { COMMANDS } from "../../src/cli/commands.ts";
import { ROOT, runProcess } from "../support/cluster.ts";

const help = (args: string[], columns: number) => runProcess([process.execPath, `${ROOT}/src/main.ts`, ...args], { env: { ...process.env, COLUMNS: String(columns), NO_COLOR: "1" } });
const longest = (text: string) => Math.max(...text.split("\n").map((l) => l.length));

test("with COLUMNS=80, every command's --help (and ebb help) fits 80 columns", async () => {
  const over: string[] = [];
  for (const args of [["help"], ...Object.keys(COMMANDS).map((c) => [c, "--help"])]) {
    const r = await help(args, 80);
    expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
    expect(r.stdout).toContain("USAGE");
    for (const line of r.stdout.split("\n")) if (line.length > 80) over.push(`ebb ${args.join(" ")}: ${line}`);
  }
  expect(over).toEqual([]);
}, 120_000);

test("the help follows the width it is given", async () => {
  const narrow = await help(["submit", "--help"], 80);
  const wide = await help(["submit", "--help"], 120);
  expect(longest(narrow.stdout)).toBeLessThanOrEqual(80);
  expect(longest(wide.stdout)).toBeGreaterThan(80);
  expect(longest(wide.stdout)).toBeLessThanOrEqual(120);
  expect(wide.stdout.split("\n").length).toBeLessThan(narrow.stdout.split("\n").length);
});
