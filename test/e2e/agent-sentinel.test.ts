/**
 * The agent's sentinel (roles/agent/sentinel.ts): when the agent goes, it kills every process
 * group of the agent's record whose leader is still the one recorded (same start time), and no
 * other — through a record full of groups that ended long ago, a torn last line and a line that
 * is not a record. Signals sent to its whole group (Slurm ending a step) and an agent PATH without
 * its tools do not stop it before that work. One sentinel shared by the agents of a process
 * (`ebb up`'s) does each one's work, once the last of them stops.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Containment } from "../../src/roles/agent/containment.ts";
import { Sentinel } from "../../src/roles/agent/sentinel.ts";
import { waitFor } from "../support/cluster.ts";

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

/** The containment's sentinel's pid, once it ignores HUP, INT and TERM (its trap has run). */
async function sentinelOf(c: Containment): Promise<number> {
  const pid = c.sentinelPid!;
  const ignoring = 1n << 0n | 1n << 1n | 1n << 14n;
  for (let i = 0; i < 200; i++) {
    const sigIgn = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    if (sigIgn && (BigInt(`0x${sigIgn}`) & ignoring) === ignoring) return pid;
    await Bun.sleep(25);
  }
  throw new Error(`sentinel ${pid} never ignored HUP, INT and TERM`);
}

test("HUP, INT and TERM to its whole group (as Slurm signals a step) do not stop the sentinel: it still cleans up after its agent", async () => {
  const record = join(dir, "signalled");
  const victim = group();
  writeFileSync(record, `${victim.pgid} 401 ${victim.start}\n`);
  const c = new Containment("sentinel-signals", record);
  const pid = await sentinelOf(c);
  for (const signal of ["SIGHUP", "SIGINT", "SIGTERM"] as const) process.kill(-pid, signal);
  await Bun.sleep(300);
  expect(alive(pid)).toBe(true);
  expect(alive(victim.pgid)).toBe(true);
  c.stop();
  expect(await c.ended!).toBe(0);
  expect(await victim.exited).toBe(9);
  // Where the host has cgroup v2, the agent's cgroup went with it.
  if (c.base) expect(existsSync(c.base)).toBe(false);
});

test("an agent whose PATH lacks the sentinel's tools still gets a sentinel that waits and cleans up", async () => {
  const record = join(dir, "no-path");
  const victim = group();
  writeFileSync(record, `${victim.pgid} 501 ${victim.start}\n`);
  // An agent process of its own, started with a PATH where no cat, rmdir or sleep is found.
  const code = `
    import { Containment } from ${JSON.stringify(new URL("../../src/roles/agent/containment.ts", import.meta.url).pathname)};
    const c = new Containment("sentinel-no-path", ${JSON.stringify(record)});
    const early = await Promise.race([c.ended.then((code) => "ended " + code), Bun.sleep(500).then(() => "waiting")]);
    c.stop();
    console.log(JSON.stringify({ early, code: await c.ended, base: c.base ?? null }));
  `;
  const p = Bun.spawn([process.execPath, "-e", code], { env: { PATH: "/nonexistent", EBB_LOG: "error" }, stdout: "pipe", stderr: "inherit" });
  const out = JSON.parse((await new Response(p.stdout).text()).trim());
  expect(out).toMatchObject({ early: "waiting", code: 0 });
  expect(await victim.exited).toBe(9);
  if (out.base) expect(existsSync(out.base)).toBe(false);
});

test("a sentinel shared by two agents cleans up after both, once both have stopped", async () => {
  const [recordA, recordB] = [join(dir, "shared-a"), join(dir, "shared-b")];
  const [victimA, victimB] = [group(), group()];
  writeFileSync(recordA, `${victimA.pgid} 601 ${victimA.start}\n`);
  writeFileSync(recordB, `${victimB.pgid} 602 ${victimB.start}\n`);
  const shared = new Sentinel(dir);
  // What it guards is in its command line, for ps and for tests that wait for it to end.
  // (Read once it has exec'd: until then its command line is its parent's copy, or empty.)
  const argv = await waitFor("the sentinel's exec", () => {
    const a = readFileSync(`/proc/${shared.pid}/cmdline`, "utf8").split("\0");
    return a.includes("ebb-sentinel") && a;
  });
  expect(argv).toContain(dir);
  const a = new Containment("sentinel-shared-a", recordA, shared);
  const b = new Containment("sentinel-shared-b", recordB, shared);
  expect(a.sentinelPid).toBe(shared.pid!);
  expect(b.sentinelPid).toBe(shared.pid!);
  a.stop();
  await Bun.sleep(300);
  // B still runs: nothing is cleaned yet.
  expect(alive(shared.pid!)).toBe(true);
  expect(alive(victimA.pgid)).toBe(true);
  b.stop();
  expect(await shared.ended!).toBe(0);
  expect(await victimA.exited).toBe(9);
  expect(await victimB.exited).toBe(9);
  for (const c of [a, b]) if (c.base) expect(existsSync(c.base)).toBe(false);
});
