/**
 * `ebb sim` tells its own speed: the EVENTS/S column (and `eventsPerSecond` in --json) of every
 * policy's replay, and on long runs a progress line with the events per second of the replay under
 * way (sim-progress.ts, driven here by a clock the test moves: no timing in the assertions).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Progress } from "../../src/cli/sim-progress.ts";
import { runProcess } from "../support/cluster.ts";

function fake(tty: boolean, forced: boolean) {
  let now = 5_000;
  const lines: string[] = [];
  const p = new Progress(tty, forced, () => now, (t) => lines.push(t));
  return { p, lines, at: (ms: number) => (now = 5_000 + ms) };
}

describe("progress line", () => {
  test("off the terminal, only with --progress: nothing in the first 10 s, then a line every 10 s with the jobs done, the events and events/s", () => {
    const quiet = fake(false, false);
    quiet.at(60_000);
    quiet.p.update("ebb", 0.5, 1_000);
    expect(quiet.lines).toEqual([]);

    const f = fake(false, true);
    f.at(500);
    f.p.update("ebb", 0.01, 100);
    f.at(9_000);
    f.p.update("ebb", 0.2, 90_000);
    expect(f.lines).toEqual([]);
    f.at(10_500);
    f.p.update("ebb", 0.25, 200_000);
    // The rate counts from this policy's first report (at 0.5 s): 200,000 events in 10 s.
    expect(f.lines).toEqual(["ebb sim: ebb 25% of the jobs done, 200,000 events, 20,000 events/s\n"]);
    f.at(15_000);
    f.p.update("ebb", 0.3, 250_000);
    expect(f.lines).toHaveLength(1);
    f.at(20_500);
    f.p.update("ebb", 0.4, 300_000);
    expect(f.lines[1]).toBe("ebb sim: ebb 40% of the jobs done, 300,000 events, 15,000 events/s\n");
  });

  test("a new policy's replay counts its own events and time", () => {
    const f = fake(false, true);
    f.at(0);
    f.p.update("easy", 0.9, 40_000);
    f.at(8_000);
    f.p.update("ebb", 0, 10);
    f.at(12_000);
    f.p.update("ebb", 0.1, 16_000);
    expect(f.lines).toEqual(["ebb sim: ebb 10% of the jobs done, 16,000 events, 4,000 events/s\n"]);
  });

  test("no line in a replay's first second: its first report, 10 s after the last line, gives no rate of a handful of events", () => {
    const f = fake(false, true);
    f.at(0);
    f.p.update("ebb", 0, 10);
    f.at(20_000);
    f.p.update("ebb", 1, 90_000);
    expect(f.lines).toHaveLength(1);
    f.at(30_000);
    f.p.update("easy", 0, 1);
    f.at(30_900);
    f.p.update("easy", 0.1, 9_000);
    expect(f.lines).toHaveLength(1);
    f.at(32_000);
    f.p.update("easy", 0.2, 20_000);
    expect(f.lines[1]).toBe("ebb sim: easy 20% of the jobs done, 20,000 events, 10,000 events/s\n");
  });

  test("on a terminal the line is rewritten in place, at most 4 times a second, and wiped at the end", () => {
    const f = fake(true, false);
    f.at(0);
    f.p.update("ebb", 0, 0);
    f.at(1_000);
    f.p.update("ebb", 0.1, 5_000);
    f.at(1_100);
    f.p.update("ebb", 0.11, 5_500);
    f.at(1_300);
    f.p.update("ebb", 0.12, 6_500);
    expect(f.lines).toEqual(["\rebb sim: ebb 10% of the jobs done, 5,000 events, 5,000 events/s\x1b[K", "\rebb sim: ebb 12% of the jobs done, 6,500 events, 5,000 events/s\x1b[K"]);
    f.p.clear();
    expect(f.lines.at(-1)).toBe("\r\x1b[K");
  });
});

test("ebb sim prints each replay's events per second (a column, and eventsPerSecond in --json)", async () => {
  const ROOT = join(import.meta.dir, "../..");
  const sim = (...args: string[]) => runProcess([process.execPath, join(ROOT, "src/main.ts"), "sim", "--swf", join(ROOT, "../shared/workloads/hpc2n_excerpt.swf"), "--limit", "200", "--policy", "easy,ebb", ...args]);
  const text = await sim();
  expect(text.code).toBe(0);
  const header = text.stdout.split("\n").find((l) => l.startsWith("POLICY"))!;
  expect(header).toContain("EVENTS/S");
  const json = await sim("--json");
  expect(json.code).toBe(0);
  const results = (JSON.parse(json.stdout) as { results: { policy: string; events: number; eventsPerSecond: number }[] }).results;
  expect(results.map((r) => r.policy)).toEqual(["easy", "ebb"]);
  for (const r of results) {
    expect(r.events).toBeGreaterThan(0);
    expect(r.eventsPerSecond).toBeGreaterThan(0);
  }
});
