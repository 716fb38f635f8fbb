/**
 * A job's cgroup on this host, as the agent's process table uses it: the job's processes start
 * in it under its limits, and when they are gone it tells what they used (CPU seconds, peak
 * memory, OOM kills: what job.usage reports), then goes with forgetJob. Needs root and a host
 * whose cgroups can confine memory (v2 controllers or v1 hierarchies).
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cgroup2Mount, Containment } from "../../src/roles/agent/containment.ts";
import { GroupLog } from "../../src/roles/agent/group-log.ts";
import { ProcessTable } from "../../src/roles/agent/procs.ts";

const dir = mkdtempSync(join(tmpdir(), "ebb-cgroup-usage-"));
const record = join(dir, "groups");
const containment = new Containment("usage-test", record);
const emptied: number[] = [];
const procs = new ProcessTable(new GroupLog(record), (jobId) => emptied.push(jobId), containment);

afterAll(async () => {
  procs.killAll();
  await containment.ended;
  rmSync(dir, { recursive: true, force: true });
});

const MEM_MIB = 64;

test("a job's cgroup counts its CPU time, its peak memory (at most its limit) and the process the kernel killed for going over", async () => {
  expect(process.getuid!()).toBe(0);
  expect(containment.confinesMemory).toBe(true);
  containment.setLimits(1, { cpus: [0], memMiB: MEM_MIB });
  // Some CPU first (a shell loop), then 200 MiB through tail's buffer.
  const p = procs.spawn(1, ["/bin/sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; head -c 200M /dev/zero | tail; echo $? >&2"], { cwd: dir, env: { PATH: process.env.PATH! }, stdio: ["ignore", "pipe"] });
  const err = await new Response(p.stderr!).text();
  await p.exited;
  expect(err.trim().split("\n").at(-1)).toBe("137"); // tail, SIGKILLed
  expect(emptied).toEqual([1]);
  const used = containment.usage(1)!;
  expect(used.oomKills).toBeGreaterThanOrEqual(1);
  expect(used.peakMemMiB).toBeGreaterThan(MEM_MIB / 2);
  expect(used.peakMemMiB).toBeLessThanOrEqual(MEM_MIB);
  expect(used.cpuSec).toBeGreaterThan(0);
  containment.forgetJob(1);
  expect(containment.usage(1)).toBeUndefined();
});

test("a job's v1 cpuset confines it to its CPUs and leaves load balancing to the root (no rebuild of the scheduling domains per job)", async () => {
  containment.setLimits(3, { cpus: [0], memMiB: MEM_MIB });
  const p = procs.spawn(3, ["/bin/sh", "-c", "cat /proc/self/cgroup; grep Cpus_allowed_list /proc/self/status"], { cwd: dir, env: { PATH: process.env.PATH! }, stdio: ["pipe", "ignore"] });
  const out = await new Response(p.stdout!).text();
  await p.exited;
  expect(out).toMatch(/^Cpus_allowed_list:\s*0$/m);
  const cpuset = /^\d+:cpuset:(.*)$/m.exec(out)?.[1];
  // Only where the job's cpuset is a v1 one of the agent's, under a root that balances all CPUs.
  if (!cpuset?.includes("/ebb-agent-usage-test-") || readFileSync("/sys/fs/cgroup/cpuset/cpuset.sched_load_balance", "utf8").trim() !== "1") return;
  expect(readFileSync(join("/sys/fs/cgroup/cpuset", cpuset, "cpuset.sched_load_balance"), "utf8").trim()).toBe("0");
  expect(readFileSync(join("/sys/fs/cgroup/cpuset", cpuset, "cpuset.cpus"), "utf8").trim()).toBe("0");
  containment.forgetJob(3);
});

test("a job fenced off GPUs does not start outside its cgroup: where the cgroup is gone, the start fails instead", async () => {
  // A device file of a major no driver holds, as the fence's e2e test makes them.
  const gpu = join(dir, "gpu9");
  expect(Bun.spawnSync(["mknod", gpu, "c", "240", "9"]).exitCode).toBe(0);
  containment.setLimits(4, { cpus: [0], memMiB: MEM_MIB });
  containment.setDenied(4, [{ kind: "c", major: 240, minor: 9 }]);
  const first = procs.spawn(4, ["/bin/sh", "-c", `cat ${gpu} 2>&1 | sed "s/.*: //"; cat /proc/self/cgroup`], { cwd: dir, env: { PATH: process.env.PATH! }, stdio: ["pipe", "ignore"] });
  const out = await new Response(first.stdout!).text();
  await first.exited;
  expect(out).toStartWith("Operation not permitted\n");
  // The host took the job's cgroup away (its processes are gone, so the kernel lets it).
  const v2 = /^0::(.*)$/m.exec(out)![1]!;
  rmdirSync(join(cgroup2Mount()!, v2));
  expect(() => procs.spawn(4, ["/bin/true"], { cwd: dir, env: { PATH: process.env.PATH! }, stdio: ["ignore", "ignore"] })).toThrow(/fences the job off the GPUs it does not hold/);
  containment.forgetJob(4);
});

test("the job's cgroups are the agent's: made under its own directories, gone when it stops", async () => {
  containment.setLimits(2, { cpus: [0], memMiB: MEM_MIB });
  const p = procs.spawn(2, ["/bin/sh", "-c", "cat /proc/self/cgroup"], { cwd: dir, env: { PATH: process.env.PATH! }, stdio: ["pipe", "ignore"] });
  const lines = (await new Response(p.stdout!).text()).trim().split("\n");
  await p.exited;
  // Every hierarchy that confines it (v1 memory and cpuset here, or v2) names the agent's job cgroup.
  const confining = lines.filter((l) => /^\d+:(memory|cpuset|):/.test(l) && l.includes("/ebb-agent-usage-test-"));
  expect(confining.length).toBeGreaterThan(0);
  for (const l of confining) expect(l).toMatch(new RegExp(`/ebb-agent-usage-test-${process.pid}/job-2$`));
  procs.killAll();
  await containment.ended;
  const leftovers = (root: string): string[] => {
    try {
      return readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isDirectory() && e.name.startsWith(`ebb-agent-usage-test-${process.pid}`)).map((e) => e.name);
    } catch {
      return [];
    }
  };
  expect(existsSync(containment.base ?? "/nonexistent")).toBe(false);
  expect(["/sys/fs/cgroup/memory", "/sys/fs/cgroup/cpuset"].flatMap(leftovers)).toEqual([]);
});
