/**
 * A job's cgroup on this host, as the agent's process table uses it: the job's processes start
 * in it under its limits, and when they are gone it tells what they used (CPU seconds, peak
 * memory, OOM kills: what job.usage reports), then goes with forgetJob. Needs root and a host
 * whose cgroups can confine memory (v2 controllers or v1 hierarchies).
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
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

/** Where the v1 hierarchy of `controller` is mounted, if it is. */
const v1Mount = (controller: string) =>
  readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((l) => l.split(" "))
    .find((f) => f[f.indexOf("-") + 1] === "cgroup" && (f[f.indexOf("-") + 3] ?? "").split(",").includes(controller))?.[4];

test("an emptied v1 cgroup is a later job's only with nothing of its last job's in it: that job sees its own limits and counters; one whose job was killed for its memory, left a process in it or page cache charged to it, is not reused", async () => {
  const reuse = new Containment("reuse-test", join(dir, "reuse-groups"));
  const table = new ProcessTable(new GroupLog(join(dir, "reuse-groups")), () => {}, reuse);
  const mount = v1Mount("memory");
  try {
    /** Runs `script` as job `jobId` under `limits`; what it printed after its cgroups, its v1 memory cgroup (and that one's inode) and what it used. */
    const run = async (jobId: number, limits: { cpus: number[]; memMiB: number }, script: string) => {
      reuse.setLimits(jobId, limits);
      const p = table.spawn(jobId, ["/bin/sh", "-c", `cat /proc/self/cgroup; echo --; ${script}`], { cwd: dir, env: { PATH: process.env.PATH! }, stdio: ["pipe", "ignore"] });
      const [cgroups, out] = (await new Response(p.stdout!).text()).split("--\n");
      await p.exited;
      const path = /^\d+:memory:(.*)$/m.exec(cgroups!)?.[1];
      const memory = mount && path?.includes("/ebb-agent-reuse-test-") ? join(mount, path) : undefined;
      return { out: out!.trim(), memory, ino: memory === undefined ? undefined : statSync(memory).ino, used: reuse.usage(jobId)! };
    };
    const sparesOf = (memory: string) => readdirSync(dirname(memory)).filter((n) => n.startsWith("spare-")).map((n) => join(dirname(memory), n));
    const charged = (d: string) => Number(readFileSync(join(d, existsSync(join(d, "memory.memsw.usage_in_bytes")) ? "memory.memsw.usage_in_bytes" : "memory.usage_in_bytes"), "utf8"));
    /** Until the spare of inode `ino` has at most a page charged, as time leaves it (the test hastens the kernel's per-CPU charge stock back with force_empty). */
    const drained = async (memory: string, ino: number) => {
      for (let i = 0; i < 400; i++) {
        const spare = sparesOf(memory).find((d) => statSync(d).ino === ino);
        if (spare === undefined) throw new Error("the job's memory cgroup was not kept");
        if (charged(spare) <= 4096) return;
        writeFileSync(join(spare, "memory.force_empty"), "0");
        await Bun.sleep(50);
      }
      throw new Error("a spare memory cgroup was still charged after 20 s");
    };
    const other = availableParallelism() > 1 ? 1 : 0;

    // Job 5 peaks at ~40 MiB (tail holds a line of 40 MiB), with 64 MiB and CPU 0.
    const a = await run(5, { cpus: [0], memMiB: 64 }, "head -c 40M /dev/zero | tail >/dev/null");
    if (!a.memory) return; // jobs are not in v1 memory cgroups of the agent's here (cgroup v2)
    expect(a.used.peakMemMiB).toBeGreaterThanOrEqual(40);
    reuse.forgetJob(5);
    await drained(a.memory, a.ino!);
    // Job 6 gets job 5's memory cgroup (the only spare), with its own limit, CPUs and counters.
    const b = await run(6, { cpus: [other], memMiB: 32 }, "grep Cpus_allowed_list /proc/self/status");
    expect(b.ino).toBe(a.ino);
    expect(b.memory).toMatch(/\/job-6$/);
    expect(readFileSync(join(b.memory!, "memory.limit_in_bytes"), "utf8").trim()).toBe(String(32 * 2 ** 20));
    expect(b.out).toMatch(new RegExp(`^Cpus_allowed_list:\\s*${other}$`));
    expect(b.used.peakMemMiB).toBeLessThan(10);
    expect(b.used.oomKills).toBe(0);
    reuse.forgetJob(6);

    // Job 7 is killed for its memory: its cgroup, once nothing is charged to it, is still not the next job's (the count of kills stays).
    const c = await run(7, { cpus: [0], memMiB: 16 }, "head -c 100M /dev/zero | tail >/dev/null; echo $?");
    expect(c.out).toBe("137");
    expect(c.used.oomKills).toBeGreaterThanOrEqual(1);
    reuse.forgetJob(7);
    await drained(c.memory!, c.ino!);
    const d = await run(8, { cpus: [0], memMiB: 16 }, "true");
    expect(d.ino).not.toBe(c.ino);
    expect(d.used.oomKills).toBe(0);
    reuse.forgetJob(8);

    // Job 9 leaves a process behind, outside its process group: its cgroup is never a spare.
    const e = await run(9, { cpus: [0], memMiB: 64 }, "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!");
    const left = Number(e.out);
    expect(readFileSync(join(e.memory!, "tasks"), "utf8").split("\n")).toContain(String(left));
    reuse.forgetJob(9);
    expect(sparesOf(e.memory!).map((s) => statSync(s).ino)).not.toContain(e.ino);
    const f = await run(10, { cpus: [0], memMiB: 64 }, "true");
    expect(f.ino).not.toBe(e.ino);
    reuse.forgetJob(10);

    // Job 11 leaves 1 MiB of page cache charged (a file it wrote): its cgroup is not the next job's.
    const g = await run(11, { cpus: [0], memMiB: 24 }, `head -c 1M /dev/zero >${join(dir, "cached")}`);
    reuse.forgetJob(11);
    const h = await run(12, { cpus: [0], memMiB: 24 }, "true");
    expect(h.ino).not.toBe(g.ino);
  } finally {
    table.killAll();
    await reuse.ended;
  }
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
