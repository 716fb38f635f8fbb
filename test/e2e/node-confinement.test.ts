/**
 * A node's inventory and a job's confinement to its share, with real agents and processes: cores,
 * memory and GPUs declared on the agents (`--cpus --memory --gres`) reach the controller and the
 * jobs' environment; ranks are bound to their slice of the job's cores and cannot leave the job's
 * cpuset; a job over its memory is killed by the kernel and ends OUT_OF_MEMORY with the reason,
 * while a job on another node goes on.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { commandLines, pidAlive, startCluster, waitFor, type TestCluster } from "../support/cluster.ts";

let c: TestCluster;
const cpus = (await Bun.file("/proc/self/status").text()).match(/^Cpus_allowed_list:\s*(\S+)/m)?.[1];

beforeAll(async () => {
  // The machine's CPUs 0 and 1 (the tests need two); node02 offers one core, the first of them.
  expect(cpus).toBe("0-1");
  c = await startCluster({ agents: 0 });
  // The GPUs' device files: character devices of a major no driver holds, so an open that the fence
  // lets through fails with ENXIO ("No such device or address") and one it refuses with EPERM.
  const used = new Set([...readFileSync("/proc/devices", "utf8").split("Block devices:")[0]!.matchAll(/^\s*(\d+) /gm)].map((m) => Number(m[1])));
  const major = [240, 241, 242, 243, 244].find((m) => !used.has(m))!;
  for (const i of [0, 1, 2]) expect(Bun.spawnSync(["mknod", join(c.dir, `gpu${i}`), "c", String(major), String(i)]).exitCode).toBe(0);
  c.startAgent("node01", ["--cpus", "2", "--memory", "200M", "--gres", "gpu:a100:2,gpu:1", "--gpu-devices", [0, 1, 2].map((i) => join(c.dir, `gpu${i}`)).join(","), "--features", "fast,ib"]);
  c.startAgent("node02", ["--cpus", "1"]);
  await c.waitNodes(2, "IDLE", 90_000);
});
afterAll(async () => {
  await c?.stop();
});

const run = async (args: string[]) => {
  const r = await c.ebb(["run", ...args]);
  if (r.code !== 0) throw new Error(`ebb run ${args.join(" ")}: exit ${r.code}\n${r.stderr}\n${c.daemonLogs()}`);
  return r.stdout.trim().split("\n").sort();
};

test("declared cores and memory are the node's in ebb nodes; declared GPUs are the job's, in every GPU variable", async () => {
  const nodes = JSON.parse((await c.ebb(["nodes", "--json"])).stdout).nodes;
  expect(nodes.map((n: any) => [n.name, n.cpus, n.memoryMb])).toEqual([
    ["node01", 2, 200],
    ["node02", 1, expect.any(Number)],
  ]);
  const show = 'echo "$CUDA_VISIBLE_DEVICES/$ROCR_VISIBLE_DEVICES/$HIP_VISIBLE_DEVICES/$EBB_GPUS"';
  expect(await run(["-w", "node01", "--gpus", "3", "sh", "-c", show])).toEqual(["0,1,2/0,1,2/0,1,2/0,1,2"]);
  // A job that asks for no GPU sees none ("-1" ends the vendors' lists).
  expect(await run(["-w", "node01", "sh", "-c", show])).toEqual(["-1/-1/-1/"]);
  // A node without GPUs: EBB_GPUS empty, the vendors' variables left alone.
  expect(await run(["-w", "node02", "sh", "-c", 'echo "${CUDA_VISIBLE_DEVICES-unset}/$EBB_GPUS/"'])).toEqual(["unset//"]);
});

test("a job cannot open the device files of the GPUs it does not hold, as root too (a device program on its cgroup)", async () => {
  const open = `for i in 0 1 2; do cat ${c.dir}/gpu$i 2>&1 | sed "s/.*: //"; done | tr "\\n" /`;
  expect(await run(["-w", "node01", "--gpus", "1", "sh", "-c", open])).toEqual(["No such device or address/Operation not permitted/Operation not permitted/"]);
  expect(await run(["-w", "node01", "--gpus", "2", "sh", "-c", `echo $CUDA_VISIBLE_DEVICES; ${open}`])).toEqual(["0,1", "No such device or address/No such device or address/Operation not permitted/"]);
  // Beside a job that holds GPU 0: GPU 1, the only one the job can open, is the vendor's 0 (as Slurm's under ConstrainDevices); EBB_GPUS keeps the node's index.
  const holder = await c.submit({ script: "#!/bin/sh\nsleep 60\n", nodelist: ["node01"], gpus: 1, output: "/dev/null" });
  await c.waitJob(holder, ["RUNNING"]);
  expect(await run(["-w", "node01", "--gpus", "1", "sh", "-c", `echo $EBB_GPUS $CUDA_VISIBLE_DEVICES $ROCR_VISIBLE_DEVICES; ${open}`])).toEqual(["1 0 0", "Operation not permitted/No such device or address/Operation not permitted/"]);
  await c.api("DELETE", `/v1/jobs/${holder}`);
  // No GPU: none of them; and no way around it from inside (mknod of another node for the same device).
  const again = `mknod ${c.dir}/again-$$ c $(stat -c "%Hr %Lr" ${c.dir}/gpu2) 2>&1 | sed "s/.*: //"`;
  expect(await run(["-w", "node01", "sh", "-c", `${open}; echo; ${again}`])).toEqual(["Operation not permitted", "Operation not permitted/Operation not permitted/Operation not permitted/"]);
  // Outside any job the files are there to open.
  expect(Bun.spawnSync(["sh", "-c", `cat ${c.dir}/gpu2 2>&1 | sed "s/.*: //"`]).stdout.toString().trim()).toBe("No such device or address");
});

test("each rank is bound to its own slice of the job's cores (--cpu-bind cores, the default); none lets each use all", async () => {
  const allowed = ["-l", "sh", "-c", "grep Cpus_allowed_list /proc/self/status | cut -f2"];
  expect(await run(["-w", "node01", "-N", "1", "-n", "2", ...allowed])).toEqual(["0: 0", "1: 1"]);
  expect(await run(["-w", "node01", "-N", "1", "-n", "2", "--cpu-bind", "none", ...allowed])).toEqual(["0: 0-1", "1: 0-1"]);
});

test("a job cannot leave its cores: its cgroup's cpuset refuses another CPU", async () => {
  // node02 offers one core, CPU 0: binding alone would let taskset move the rank to CPU 1.
  const out = await run(["-w", "node02", "sh", "-c", "grep Cpus_allowed_list /proc/self/status | cut -f2; taskset -c 1 true 2>/dev/null && echo escaped || echo confined"]);
  expect(out).toEqual(["0", "confined"]);
});

test.skipIf(!existsSync("/sys/fs/cgroup/cpuset/tasks") || !existsSync("/sys/fs/cgroup/memory/tasks"))("a job's v1 cpuset is an earlier job's, renamed, with the CPUs of the new job (one that has them, if one does)", async () => {
  // The rank's cpuset (inode, CPUs, path) and memory cgroup's name, from inside.
  const probe = 'cs=$(sed -n "s/^[0-9]*:cpuset:\\(.*\\)/\\1/p" /proc/self/cgroup); mem=$(sed -n "s/^[0-9]*:memory:\\(.*\\)/\\1/p" /proc/self/cgroup); echo "$(stat -c %i /sys/fs/cgroup/cpuset$cs) $(cat /sys/fs/cgroup/cpuset$cs/cpuset.cpus) $cs ${mem##*/}"';
  /** The inodes of the agent's cpusets now, the jobs' and the spares kept for later jobs. */
  const cpusetsBeside = (path: string) => readdirSync(dirname(join("/sys/fs/cgroup/cpuset", path)), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => String(statSync(join(e.parentPath, e.name)).ino));
  const [cpusetA, , pathA] = (await run(["-w", "node02", "sh", "-c", probe]))[0]!.split(" ");
  const before = cpusetsBeside(pathA!);
  const [cpusetB, cpusB, pathB, memoryNameB] = (await run(["-w", "node02", "sh", "-c", probe]))[0]!.split(" ");
  expect(pathA).toMatch(/\/job-\d+$/);
  expect(pathB).not.toBe(pathA);
  // A directory that was there before, under the new job's name, with its one CPU; the memory cgroup of the same name.
  expect({ kept: before.includes(cpusetB!), cpus: cpusB, memoryName: memoryNameB }).toEqual({ kept: true, cpus: "0", memoryName: pathB!.split("/").at(-1) });
  expect(before).toContain(cpusetA!);
  // Another job's CPUs (node01: two cores, then one): a kept cpuset holds the new ones.
  const cpusOf = async (n: string) => (await run(["-w", "node01", "-N", "1", "-n", n, "sh", "-c", `[ "$EBB_LOCALID" = 0 ] || exit 0; ${probe}`]))[0]!.split(" ");
  const c2 = await cpusOf("2");
  const kept = cpusetsBeside(c2[2]!);
  const c1 = await cpusOf("1");
  expect([c2[1], c1[1], kept.includes(c1[0]!)]).toEqual(["0-1", "0", true]);
});

test("a job over its memory is killed and ends OUT_OF_MEMORY with the reason; a job on another node finishes", async () => {
  // 400 MiB through tail's buffer on a node of 200 MiB; bounded, should confinement fail.
  const hog = await c.submit({ script: "#!/bin/sh\nhead -c 400M /dev/zero | tail >/dev/null\necho after $?\n", nodelist: ["node01"], exclusive: true, output: "hog.out" });
  const other = await c.submit({ script: "#!/bin/sh\nsleep 1\necho done\n", nodelist: ["node02"], output: "other.out" });
  const end = await c.waitJob(hog, ["COMPLETED", "FAILED", "OUT_OF_MEMORY", "CANCELLED"], 60_000);
  expect({ state: end.state, reason: end.reason }).toEqual({ state: "OUT_OF_MEMORY", reason: "a process went over the job's memory (200 MiB on node01) and was killed" });
  expect((await c.waitJob(other, ["COMPLETED", "FAILED", "OUT_OF_MEMORY", "CANCELLED"], 60_000)).state).toBe("COMPLETED");
  expect(c.read("other.out")).toBe("done\n");
});

test("a rank the kernel kills for the job's memory: ebb run says so, not only SIGKILL", async () => {
  // 400 MiB in one process on a node of 200 MiB; bounded, should confinement fail.
  const hog = "const a = []; for (let i = 0; i < 40; i++) a.push(Buffer.alloc(10 << 20, 1));";
  const r = await c.ebb(["run", "-w", "node01", "--exclusive", process.execPath, "-e", hog]);
  expect(r.code).toBe(137);
  expect(r.stderr).toContain("rank 0 on node01 was killed by SIGKILL: out of memory, past the job's memory limit (ask for more with --mem or --mem-per-cpu)");
  // The same when the job's OUT_OF_MEMORY reaches ebb run before the rank's exit does: here a
  // child holds the rank's output open, so its exit waits for the job's end to kill that child.
  const held = await c.ebb(["run", "-w", "node01", "--exclusive", "sh", "-c", `sleep 30 & exec ${process.execPath} -e "${hog}"`]);
  expect({ code: held.code, oom: held.stderr.includes("rank 0 on node01 was killed by SIGKILL: out of memory") }).toEqual({ code: 137, oom: true });
  // A SIGKILL that is not the kernel's memory limit says only that.
  const killed = await c.ebb(["run", "-w", "node02", "sh", "-c", "kill -9 $$"]);
  expect(killed.code).toBe(137);
  expect(killed.stderr).toContain("rank 0 on node02 was killed by SIGKILL");
  expect(killed.stderr).not.toContain("out of memory");
});

// A job over its --mem beside a neighbour on the same node: test/e2e/resources.test.ts.

/** The directories named `leaf` beside the cgroups of process `pid`, in every hierarchy the host mounts. */
function cgroupDirsOf(pid: number, leaf: string): string[] {
  const mounts = readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" ")).filter((f) => ["cgroup", "cgroup2"].includes(f[f.indexOf("-") + 1]!));
  const dirs: string[] = [];
  for (const line of readFileSync(`/proc/${pid}/cgroup`, "utf8").trim().split("\n")) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line)!;
    const mount = mounts.find((f) => (controllers === "" ? f[f.indexOf("-") + 1] === "cgroup2" : f[f.indexOf("-") + 3]!.split(",").includes(controllers!.split(",")[0]!)));
    if (mount) dirs.push(join(mount[4]!, path!, leaf));
  }
  return dirs.filter((d) => existsSync(d));
}

test("an agent killed with its sentinel while a job runs: started again under its name, it kills what its earlier life left and removes its cgroups in every hierarchy", async () => {
  const agent = c.agents.get("node02")!;
  const job = await c.submit({ script: "#!/bin/sh\nsetsid sleep 300 &\nsleep 300\n", nodelist: ["node02"], output: "/dev/null" });
  await c.waitJob(job, ["RUNNING"]);
  const leaf = `ebb-agent-node02-${agent.pid}`;
  // The job's processes, from its cgroup: its shell and both sleeps.
  const procs = await waitFor("the job's three processes", () => {
    for (const d of cgroupDirsOf(agent.pid, leaf)) {
      const pids = existsSync(join(d, `job-${job}`, "cgroup.procs")) ? readFileSync(join(d, `job-${job}`, "cgroup.procs"), "utf8").trim().split("\n").filter(Boolean).map(Number) : [];
      if (pids.length === 3) return pids;
    }
  });
  const dirs = cgroupDirsOf(agent.pid, leaf);
  expect(dirs.length).toBeGreaterThan(0);
  // The agent and its sentinel at once, as a kill of a service's whole cgroup (or the OOM killer) takes them: nothing cleans up after the agent.
  const sentinel = commandLines().find((l) => l.ppid === agent.pid && l.cmd.includes("ebb-sentinel"))!.pid;
  agent.kill("SIGKILL");
  process.kill(sentinel, "SIGKILL");
  await agent.exited;
  await waitFor("the sentinel to die", () => !pidAlive(sentinel));
  expect(procs.filter(pidAlive).length).toBe(3);
  c.startAgent("node02", ["--cpus", "1"]);
  await c.waitNodes(2, "IDLE", 90_000);
  expect(procs.filter(pidAlive)).toEqual([]);
  expect(dirs.filter((d) => existsSync(d))).toEqual([]);
});
