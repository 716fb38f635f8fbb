/**
 * The agent's sentinel (roles/agent/containment.ts): when the agent goes, it kills every process
 * group of the agent's record whose leader is still the one recorded (same start time), and no
 * other — through a record full of groups that ended long ago, a torn last line and a line that
 * is not a record.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Containment } from "../../src/roles/agent/containment.ts";

const dir = mkdtempSync(join(tmpdir(), "ebb-sentinel-"));
const started: number[] = [];

/** A process group of its own (setsid), its leader's pid, and its start time (/proc/PID/stat field 22). */
function group(): { pgid: number; start: string; exited: Promise<number> } {
  const p = Bun.spawn(["sleep", "300"], { detached: true, stdio: ["ignore", "ignore", "ignore"] });
  started.push(p.pid);
  const stat = readFileSync(`/proc/${p.pid}/stat`, "utf8");
  return { pgid: p.pid, start: stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!, exited: p.exited.then(() => p.signalCode === "SIGKILL" ? 9 : (p.exitCode ?? -1)) };
}

const alive = (pid: number) => {
  try {
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
};

afterAll(() => {
  for (const pid of started)
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      /* gone */
    }
  rmSync(dir, { recursive: true, force: true });
});

test("the sentinel kills the recorded groups whose leader is the one recorded, and only those", async () => {
  const ended: number[] = [];
  for (let i = 0; i < 100; i++) {
    const p = Bun.spawn(["true"]);
    await p.exited;
    ended.push(p.pid);
  }
  const mine = group();
  const reused = group(); // recorded with another start time: its pid was reused, not ours to kill
  const later = group();
  const record = join(dir, "process-groups");
  writeFileSync(
    record,
    [
      ...ended.map((pid, i) => `${pid} ${i + 1} 12345\n`),
      `${mine.pgid} 301 ${mine.start}\n`,
      "not a record line\n",
      `${reused.pgid} 302 ${Number(reused.start) - 1}\n`,
      `${later.pgid} 303 ${later.start}\n`,
      `${ended[0]} 304 1`, // torn: no newline
    ].join(""),
  );
  const c = new Containment("sentinel-test", record);
  expect(c.ended).toBeDefined();
  c.stop();
  expect(await c.ended!).toBe(0);
  // Killed by the sentinel (SIGKILL; a group it missed would keep sleeping and time the test out).
  expect(await mine.exited).toBe(9);
  expect(await later.exited).toBe(9);
  expect(alive(reused.pgid)).toBe(true);
});
