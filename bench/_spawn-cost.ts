/**
 * What an agent's way of starting a job's process costs that process itself (issue 36): `bun
 * bench/_spawn-cost.ts [SPAWNS] [USER]` spawns `true` from a worker thread, as `ebb agent` does,
 * SPAWNS times (default 500) in each way, the ways taken in turn spawn by spawn so that each sees
 * the same load, and prints the children's CPU per spawn (getrusage, µs), each against the bare
 * spawn's. The ways: bare; the job's containment alone (containment.ts, as the agent: a new v2
 * cgroup, v1 memory cgroup with a limit and v1 cpuset per job, the thread's CPU binding, the
 * cgroups removed after); the job's start alone (a session of its own, a job's environment, the
 * drop to USER, default ebbt_bench); both. Root only. Not a benchmark (run.ts skips files named _*).
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

if (isMainThread) {
  const worker = new Worker(new URL(import.meta.url).pathname, { workerData: process.argv.slice(2) });
  worker.on("message", (line: string) => console.log(line));
  await new Promise((done) => worker.on("exit", done));
  process.exit(0);
}

const { dlopen, FFIType, ptr } = await import("bun:ffi");
const { mkdtempSync } = await import("node:fs");
const { tmpdir, loadavg } = await import("node:os");
const { join } = await import("node:path");
const { Containment } = await import("../src/roles/agent/containment.ts");
const { lookupIdentity } = await import("../src/roles/identity.ts");

const [spawnsArg, userArg] = workerData as string[];
const spawns = Number(spawnsArg ?? 500);
const id = lookupIdentity(userArg ?? "ebbt_bench");
const libc = dlopen("libc.so.6", { getrusage: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
const usage = new BigInt64Array(18);
const RUSAGE_CHILDREN = -1;
/** µs of CPU of the children reaped so far, user and system. */
function childrenUs(): number {
  libc.symbols.getrusage(RUSAGE_CHILDREN, ptr(usage));
  return Number(usage[0]! * 1_000_000n + usage[1]! + usage[2]! * 1_000_000n + usage[3]!);
}

const containment = new Containment("spawn-cost", join(mkdtempSync(join(tmpdir(), "ebb-spawn-cost-")), "process-groups"));
const jobEnv: Record<string, string> = { ...(process.env as Record<string, string>) };
for (let i = 0; i < 40; i++) jobEnv[`SLURM_VAR_${i}`] = `value-${i}-of-a-slurm-like-variable`;
const cpus = [0, 1];
const trueBin = Bun.which("true")!;
let nextJob = 1;

type Way = { contained: boolean; asJob: boolean };
async function spawnOnce(way: Way): Promise<void> {
  const options = { stdio: ["ignore", "ignore", "ignore"] as ["ignore", "ignore", "ignore"], ...(way.asJob ? { detached: true, env: { ...jobEnv, USER: id.user }, uid: id.uid, gid: id.gid } : {}) };
  if (!way.contained) return void (await Bun.spawn([trueBin], options).exited);
  const job = nextJob++;
  containment.setLimits(job, { cpus, memMiB: 1024 });
  const { cgroup } = containment.prepare(job);
  await containment.fromInside(job, cpus, () => Bun.spawn([trueBin], { ...options, ...(cgroup ? { cgroup } : {}) })).exited;
  containment.forgetJob(job);
}

const ways: Record<string, Way> = {
  bare: { contained: false, asJob: false },
  "containment alone": { contained: true, asJob: false },
  "start as a job alone": { contained: false, asJob: true },
  both: { contained: true, asJob: true },
};
const names = Object.keys(ways);
const spent = new Map<string, number>(names.map((n) => [n, 0]));
for (let i = 0; i < 50; i++) for (const n of names) await spawnOnce(ways[n]!);
const load0 = loadavg()[0]!;
for (let i = 0; i < spawns; i++)
  for (const n of i % 2 === 0 ? names : [...names].reverse()) {
    const before = childrenUs();
    await spawnOnce(ways[n]!);
    spent.set(n, spent.get(n)! + childrenUs() - before);
  }
const bare = spent.get("bare")! / spawns;
for (const n of names) {
  const us = spent.get(n)! / spawns;
  parentPort!.postMessage(`${n.padEnd(22)} ${us.toFixed(0)} µs of the child's CPU per spawn = ${(us / bare).toFixed(3)}x bare`);
}
parentPort!.postMessage(`${spawns} spawns each, interleaved; load ${load0.toFixed(1)}-${loadavg()[0]!.toFixed(1)}; user ${id.user}`);
containment.stop();
