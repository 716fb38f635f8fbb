import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HostSampler, loggedInUsers } from "../../src/roles/agent/host-sample.ts";
import { resolveHostRules, type HostRules } from "../../src/model/host-rules.ts";

const dir = mkdtempSync(join(tmpdir(), "ebb-host-sample-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One glibc utmp record (384 bytes): type, pid, line, user. */
function utmpRecord(type: number, pid: number, user: string, line = "pts/0"): Buffer {
  const b = Buffer.alloc(384);
  b.writeInt32LE(type, 0);
  b.writeInt32LE(pid, 4);
  b.write(line, 8, 32);
  b.write(user, 44, 32);
  return b;
}

test("users: distinct names of utmp's live user sessions; dead processes and other records do not count", () => {
  const utmp = join(dir, "utmp");
  writeFileSync(utmp, Buffer.concat([utmpRecord(2, 0, "reboot"), utmpRecord(7, process.pid, "alice"), utmpRecord(7, process.pid, "alice", "pts/1"), utmpRecord(7, process.pid, "bob"), utmpRecord(7, 2 ** 22 + 7, "carol"), utmpRecord(8, process.pid, "dave")]));
  expect(loggedInUsers(join(dir, "no-logind"), [join(dir, "missing"), utmp])).toBe(2);
  expect(loggedInUsers(join(dir, "no-logind"), [join(dir, "missing")])).toBe(0);
});

test("users: logind's sessions where systemd keeps them (user class, not closing)", () => {
  const sessions = join(dir, "sessions");
  mkdirSync(sessions);
  writeFileSync(join(sessions, "1"), "UID=1000\nUSER=alice\nACTIVE=1\nSTATE=active\nCLASS=user\n");
  writeFileSync(join(sessions, "2"), "USER=alice\nSTATE=online\nCLASS=user\n");
  writeFileSync(join(sessions, "3"), "USER=gdm\nSTATE=online\nCLASS=greeter\n");
  writeFileSync(join(sessions, "4"), "USER=bob\nSTATE=closing\nCLASS=user\n");
  writeFileSync(join(sessions, "1.ref"), "");
  expect(loggedInUsers(sessions, [])).toBe(1);
});

test("cpu.other from a cgroup: its CPU seconds over the machine's, between two samples; the first sample has none", () => {
  const r = resolveHostRules({ hostStates: { rules: { "cpu.other": { busy: 0.5, cgroup: "x" } } } }, "n") as HostRules;
  const s = new HostSampler(r, { jobsCpuSeconds: () => 0 });
  expect(s.cgroupPath).toMatch(/\/x$/);
  // The cgroup does not exist: no value, never a made-up 0.
  expect(s.sample(1)).toEqual({});
  expect(s.sample(2)).toEqual({});
});

test("machine cpu.other: between 0 and 1, with the jobs' CPU taken out", async () => {
  const r = resolveHostRules({ hostStates: { rules: { "cpu.other": { busy: 0.5 }, load1: { busy: 100 }, "net.bytes": { busy: 1e12 } } } }, "n") as HostRules;
  let jobs = 0;
  const s = new HostSampler(r, { jobsCpuSeconds: () => jobs });
  expect(Object.keys(s.sample(Date.now() / 1000))).toEqual(["load1"]);
  // This process spins for a while as if it were the only job; the jobs' CPU says it was.
  const t0 = process.cpuUsage();
  const end = Date.now() + 300;
  while (Date.now() < end) {}
  const spent = process.cpuUsage(t0);
  jobs = (spent.user + spent.system) / 1e6;
  const v = s.sample(Date.now() / 1000);
  expect(v["cpu.other"]).toBeGreaterThanOrEqual(0);
  expect(v["cpu.other"]).toBeLessThanOrEqual(1);
  expect(v["net.bytes"]).toBeGreaterThanOrEqual(0);
  // Jobs that used more than the whole machine meanwhile leave nothing to others.
  const spin = Date.now() + 100;
  while (Date.now() < spin) {}
  jobs += 1000;
  expect(s.sample(Date.now() / 1000)["cpu.other"]).toBe(0);
});
