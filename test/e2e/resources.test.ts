/**
 * Cores, memory and GPUs as the unit of allocation (issue 30), with real controllers, agents and
 * jobs on loopback: many jobs share a node, each confined to what it was given.
 *
 * - eight one-core jobs on 2 nodes of 8 cores run at once, each on a core of its own;
 * - 32 one-GPU jobs on 4 nodes of 8 GPUs (`--gres gpu:8`) run at once, each seeing its own GPU;
 * - an sbatch script's --gres with --cpus-per-gpu and --mem-per-gpu gets its GPUs' cores and memory, --mincpus more cores;
 * - two one-core jobs on a 2-core node: each rank's Cpus_allowed_list is its job's core;
 * - a job over its --mem ends OUT_OF_MEMORY while its neighbour on the same node completes;
 * - a command job's CPU time and peak memory reach the controller with its exit (held for it);
 * - an elastic job with a per-node shape grows onto a node that runs a one-core job;
 * - EASY's reservation for an exclusive job holds against shared one-core jobs.
 *
 * Jobs meet at a barrier: each writes a file and waits (bounded) for the test's go file, so that
 * "all at once" is what the controller says while every one of them is still there.
 */
import { afterEach, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { COUNTER, elasticRun } from "../support/elastic-run.ts";

let c: TestCluster | undefined;
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

/** A batch script that reports `report` into DIR/ready/$EBB_JOB_ID, then waits (at most 2 minutes) for DIR/go. */
const barrier = (dir: string, report = "") => `#!/bin/sh
${report ? `${report} > ${dir}/ready/$EBB_JOB_ID.tmp && mv ${dir}/ready/$EBB_JOB_ID.tmp ${dir}/ready/$EBB_JOB_ID` : `touch ${dir}/ready/$EBB_JOB_ID`}
i=0; while [ ! -e ${dir}/go ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done
`;

async function running(c: TestCluster, ids: number[]): Promise<any[]> {
  return waitFor(
    `${ids.length} jobs RUNNING at once`,
    async () => {
      const jobs = await Promise.all(ids.map((id) => c.job(id)));
      return jobs.every((j) => j.state === "RUNNING") ? jobs : undefined;
    },
    120_000,
  );
}

async function ready(c: TestCluster, dir: string, n: number): Promise<void> {
  await waitFor(`${n} jobs at the barrier`, () => readdirSync(join(dir, "ready")).filter((f) => !f.endsWith(".tmp")).length >= n, 120_000);
}

async function release(c: TestCluster, dir: string, ids: number[]): Promise<void> {
  await Bun.write(join(dir, "go"), "");
  for (const id of ids) expect((await c.waitJob(id, ["COMPLETED", "FAILED", "CANCELLED", "OUT_OF_MEMORY", "NODE_FAIL", "TIMEOUT"], 120_000)).state).toBe("COMPLETED");
}

/** Every (node, core) a job holds, as "node:core". */
const coresOf = (job: any): string[] =>
  job.shares.flatMap((s: any) =>
    s.cores.split(",").flatMap((part: string) => {
      const [lo, hi] = part.split("-").map(Number) as [number, number?];
      return Array.from({ length: (hi ?? lo) - lo + 1 }, (_, i) => `${s.node}:${lo + i}`);
    }),
  );

test("eight one-core jobs on 2 nodes of 8 cores all run at once, each on a core of its own", async () => {
  c = await startCluster({ agents: 2, cpus: 8 });
  const dir = join(c.dir, "eight");
  await Bun.$`mkdir -p ${dir}/ready`;
  const ids: number[] = [];
  for (let i = 0; i < 8; i++) ids.push(await c.submit({ script: barrier(dir), output: `eight-${i}.out` }));
  const jobs = await running(c, ids);
  const held = jobs.flatMap(coresOf);
  expect(jobs.map((j) => j.shares.length)).toEqual(Array(8).fill(1));
  expect(new Set(held).size).toBe(8);
  await ready(c, dir, 8);
  // ebb nodes counts them: 8 cores allocated in all.
  const nodes = (await c.api("GET", "/v1/nodes")).json.nodes;
  expect(nodes.reduce((sum: number, n: any) => sum + n.allocated.cpus, 0)).toBe(8);
  await release(c, dir, ids);
}, 240_000);

test("32 one-GPU jobs on 4 nodes of 8 GPUs all run at once, each seeing one GPU no other job on its node sees", async () => {
  c = await startCluster({ agents: 0 });
  for (let i = 1; i <= 4; i++) c.startAgent(`node0${i}`, ["--cpus", "8", "--gres", "gpu:8"]);
  await c.waitNodes(4, "IDLE", 120_000);
  const dir = join(c.dir, "gpus");
  await Bun.$`mkdir -p ${dir}/ready`;
  const ids: number[] = [];
  for (let i = 0; i < 32; i++) ids.push(await c.submit({ script: barrier(dir, 'echo "$EBB_JOB_NODELIST $CUDA_VISIBLE_DEVICES $EBB_GPUS"'), gpus: 1, output: `gpu-${i}.out` }));
  const jobs = await running(c, ids);
  await ready(c, dir, 32);
  // What each job saw is what the controller gave it; per node, eight distinct indices.
  const seen = new Map<string, string[]>();
  for (const j of jobs) {
    const [node, cuda, ebb] = (await Bun.file(join(dir, "ready", String(j.id))).text()).trim().split(" ");
    expect({ node, cuda, ebb }).toEqual({ node: j.shares[0].node, cuda: String(j.shares[0].gpus[0]), ebb: String(j.shares[0].gpus[0]) });
    seen.set(node!, [...(seen.get(node!) ?? []), cuda!]);
  }
  expect([...seen.keys()].sort()).toEqual(["node01", "node02", "node03", "node04"]);
  for (const list of seen.values()) expect(list.sort()).toEqual(["0", "1", "2", "3", "4", "5", "6", "7"]);
  await release(c, dir, ids);
}, 300_000);

test("an sbatch script's --gres gpu:2 with --cpus-per-gpu 3 and --mem-per-gpu 200M holds 6 cores, 400 MiB and 2 GPUs (8 cores with --mincpus 8), and sees Slurm's per-GPU variables", async () => {
  c = await startCluster({ agents: 0 });
  c.startAgent("node01", ["--cpus", "8", "--gres", "gpu:4", "--memory", "2G"]);
  await c.waitNodes(1, "IDLE", 120_000);
  const machine = (await Bun.file("/proc/self/status").text()).match(/^Cpus_allowed_list:\s*(\S+)/m)?.[1];
  for (const [name, more, cores] of [["gpu", "", 6], ["min", "#SBATCH --mincpus=8\n", 8]] as const) {
    const script = join(c.dir, `${name}.sh`);
    await Bun.write(script, `#!/bin/bash\n#SBATCH --gres=gpu:2\n#SBATCH --cpus-per-gpu=3\n#SBATCH --mem-per-gpu=200M\n${more}#SBATCH -o ${name}.out\necho "$SLURM_CPUS_PER_GPU $SLURM_MEM_PER_GPU \${SLURM_CPUS_PER_TASK-unset} \${SLURM_MEM_PER_NODE-unset} $CUDA_VISIBLE_DEVICES"\ngrep Cpus_allowed_list /proc/self/status | cut -f2\n`);
    const r = await c.ebb(["submit", "--parsable", script], { cwd: c.dir });
    expect(r.stderr).toBe("");
    const job = await c.waitJob(Number(r.stdout.trim()), ["COMPLETED", "FAILED"], 60_000);
    expect(job.state).toBe("COMPLETED");
    expect(job.resources).toMatchObject({ tasks: 1, cpusPerTask: cores, memPerNodeMiB: 400, gpusPerNode: 2, cpusPerGpu: 3, memPerGpuMiB: 200 });
    expect(job.shares.map((s: any) => ({ cpus: s.cpus, memMiB: s.memMiB, gpus: s.gpus }))).toEqual([{ cpus: cores, memMiB: 400, gpus: [0, 1] }]);
    const [vars, cpus] = (await Bun.file(join(c.dir, `${name}.out`)).text()).trim().split("\n");
    expect(vars).toBe("3 200 unset unset 0,1");
    // The script ran on its cores (the agent's core i is CPU i mod the machine's CPUs: a 2-CPU machine shows 0-1).
    expect(cpus).toBe(machine);
  }
}, 120_000);

test("two one-core jobs on a 2-core node: each rank's Cpus_allowed_list is its job's core", async () => {
  // The agent's cores are the machine's CPUs 0 and 1, so a core index is a CPU id.
  const cpus = (await Bun.file("/proc/self/status").text()).match(/^Cpus_allowed_list:\s*(\S+)/m)?.[1];
  expect(cpus).toBe("0-1");
  c = await startCluster({ agents: 1, cpus: 2 });
  const dir = join(c.dir, "bind");
  await Bun.$`mkdir -p ${dir}/ready`;
  const report = "ebb run -l sh -c 'grep Cpus_allowed_list /proc/self/status | cut -f2'";
  const ids = [await c.submit({ script: barrier(dir, report), output: "bind-1.out" }), await c.submit({ script: barrier(dir, report), output: "bind-2.out" })];
  const jobs = await running(c, ids);
  await ready(c, dir, 2);
  for (const j of jobs) expect(await Bun.file(join(dir, "ready", String(j.id))).text()).toBe(`0: ${j.shares[0].cores}\n`);
  expect(jobs.map((j) => j.shares[0].cores).sort()).toEqual(["0", "1"]);
  await release(c, dir, ids);
}, 240_000);

test("a job over its --mem ends OUT_OF_MEMORY with the reason while its neighbour on the same node completes", async () => {
  c = await startCluster({ agents: 0 });
  c.startAgent("node01", ["--cpus", "2", "--memory", "400M"]);
  await c.waitNodes(1, "IDLE", 90_000);
  const dir = join(c.dir, "oom");
  await Bun.$`mkdir -p ${dir}/ready`;
  const neighbour = await c.submit({ script: barrier(dir), mem: "50M", output: "neighbour.out" });
  await c.waitJob(neighbour, ["RUNNING"]);
  await ready(c, dir, 1);
  // 300 MiB through tail's buffer in a job of 100 MiB; bounded, should confinement fail.
  const hog = await c.submit({ script: "#!/bin/sh\nhead -c 300M /dev/zero | tail >/dev/null\necho after $?\n", mem: "100M", output: "hog.out" });
  const end = await c.waitJob(hog, ["COMPLETED", "OUT_OF_MEMORY", "CANCELLED"], 120_000);
  expect({ state: end.state, reason: end.reason, node: end.shares[0].node }).toEqual({ state: "OUT_OF_MEMORY", reason: "a process went over the job's memory (100 MiB on node01) and was killed", node: "node01" });
  expect(end.usage.peakMemMiB).toBeGreaterThan(0);
  // The neighbour was on the same node all along, and goes on to complete.
  expect((await c.job(neighbour)).state).toBe("RUNNING");
  expect(existsSync(join(dir, "go"))).toBe(false);
  await release(c, dir, [neighbour]);
}, 240_000);

test("a command job's CPU time and peak memory on its node reach the controller with its exit", async () => {
  c = await startCluster({ agents: 1, cpus: 2 });
  const id = await c.submit({ argv: ["sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done"], output: "/dev/null" });
  const end = await c.waitJob(id, ["COMPLETED", "FAILED"], 120_000);
  expect(end.state).toBe("COMPLETED");
  expect(end.usage.cpuSec).toBeGreaterThan(0);
  expect(end.usage.peakMemMiB).toBeGreaterThan(0);
}, 240_000);

test("an elastic job with a per-node shape grows onto a node that already runs a one-core job", async () => {
  c = await startCluster({ agents: 2, cpus: 2 });
  const dir = join(c.dir, "grow");
  await Bun.$`mkdir -p ${dir}/ready`;
  const small = await c.submit({ script: barrier(dir), nodelist: ["node02"], output: "small.out" });
  await c.waitJob(small, ["RUNNING"]);
  // One rank of one core per node; it starts on node01 (its nodelist), node02 holds the small job.
  // It counts for up to 20 s, and ends once the test has seen the grow (its --end file).
  const end = join(dir, "end");
  const job = await elasticRun(c, ["-N", "1", "-w", "node01", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "--ntasks-per-node", "1", "-c", "1", "--", process.execPath, COUNTER, "400", "50", "--end", end], /rank=0 status=new/);
  const a = await c.resize(job.id, 2);
  expect({ state: a.state, message: a.message, added: a.added }).toEqual({ state: "COMMITTED", message: null, added: ["node02"] });
  const [grown, neighbour] = [await c.job(job.id), await c.job(small)];
  expect(grown.shares.map((s: any) => [s.node, s.cpus])).toEqual([
    ["node01", 1],
    ["node02", 1],
  ]);
  expect(neighbour.state).toBe("RUNNING");
  expect(new Set([...coresOf(grown), ...coresOf(neighbour)]).size).toBe(3);
  await Bun.write(end, "");
  const { out, code } = await job.finished;
  expect(code).toBe(0);
  expect(out).toContain("world size=2");
  await release(c, dir, [small]);
}, 240_000);

test("EASY's reservation holds with shared and exclusive jobs: backfill starts only what ends before it", async () => {
  c = await startCluster({ agents: 2, cpus: 2, controllerArgs: ["--policy", "easy"] });
  const dir = join(c.dir, "easy");
  await Bun.$`mkdir -p ${dir}/ready`;
  // A one-core job holds a core of node01 for up to a minute.
  const first = await c.submit({ script: barrier(dir), nodelist: ["node01"], timeLimit: 60, output: "first.out" });
  await c.waitJob(first, ["RUNNING"]);
  // The head of the queue wants both nodes whole: it waits for the first job's end, its reservation.
  const head = await c.submit({ script: "#!/bin/sh\ntrue\n", nodes: 2, exclusive: true, timeLimit: 60, output: "head.out" });
  // A one-core job of 10 minutes would hold a core past the reservation: it must not start.
  const long = await c.submit({ script: "#!/bin/sh\ntrue\n", timeLimit: 600, output: "long.out" });
  // A one-core job of 10 seconds ends before the reservation: it backfills.
  const short = await c.submit({ script: "#!/bin/sh\ntrue\n", timeLimit: 10, output: "short.out" });
  expect((await c.waitJob(short, ["COMPLETED", "FAILED"], 60_000)).state).toBe("COMPLETED");
  // Passes have run since (one a second, and at each end): the long job still waits behind the head.
  const since = Date.now();
  await waitFor("a scheduling pass after the short job", async () => (await c!.job(long)).reasonDetail !== null && Date.now() - since > 2000 ? true : undefined, 30_000);
  const [h, l] = [await c.job(head), await c.job(long)];
  expect({ head: h.state, long: l.state }).toEqual({ head: "PENDING", long: "PENDING" });
  expect(h.reason).toBe("Resources");
  expect(l.reason).toBe("Priority");
  // The first job ends: the head takes both nodes whole, then the long job runs.
  await Bun.write(join(dir, "go"), "");
  const started = await c.waitJob(head, ["RUNNING", "COMPLETED"], 60_000);
  expect(started.shares.map((s: any) => [s.node, s.cores])).toEqual([
    ["node01", "0-1"],
    ["node02", "0-1"],
  ]);
  expect((await c.waitJob(long, ["COMPLETED", "FAILED"], 60_000)).state).toBe("COMPLETED");
  expect(Date.parse((await c.job(long)).startTime)).toBeGreaterThanOrEqual(Date.parse(started.startTime));
  expect((await c.waitJob(first, ["COMPLETED"], 60_000)).state).toBe("COMPLETED");
}, 240_000);
