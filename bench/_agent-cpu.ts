/**
 * Where an agent's CPU goes per null job, all of it (issue 36): `bun bench/_agent-cpu.ts MODE [JOBS] [OUT]`
 * runs a controller and 4 agent processes, 500 `true` jobs to warm up, then JOBS (default 500)
 * measured. MODE "cpu": each agent's user and system time, by thread (/proc/PID/task/TID/stat,
 * grouped by thread name), and its waited-for children's (the jobs' processes), per job, against
 * the CPU of a bare `true` spawned beside them meanwhile (one every 5 ms from this process): the
 * same program under the same load (a `true` cost 1.9 ms alone on a quiet machine, ~4.5 at load 9).
 * "perf": `perf record -g` of the agents (and what they spawn) over the JOBS, into OUT (then `perf
 * report -i OUT --sort pid,comm`). "strace": `strace -f -ff` of the agents over the JOBS, into
 * OUT.PID (one file per thread and per job process), then the system calls per job of the agents'
 * threads and of the job processes (a file with an execve), by name. `EBB_MAIN`: another checkout's
 * src/main.ts. The tracers slow everything down: their CPU figures are not the agent's. Not a
 * benchmark (run.ts skips files named _*).
 */
import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { dlopen, FFIType, ptr } from "bun:ffi";
import { runTrueJobs, startBenchCluster } from "./cluster.ts";

const [mode = "cpu", jobsArg, out = "/tmp/ebb-agent-cpu"] = process.argv.slice(2);
const jobs = Number(jobsArg ?? 500);
const MAIN = process.env.EBB_MAIN ?? new URL("../src/main.ts", import.meta.url).pathname;
const c = await startBenchCluster(4, { layout: "processes", ebb: [process.execPath, MAIN] });
const agents = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).filter((d) => {
  try {
    const cmd = readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
    return cmd.includes("agent") && cmd.some((a) => a.startsWith(c.dir));
  } catch {
    return false;
  }
}).map(Number);
await runTrueJobs(c, 500);

const fields = (path: string) => {
  const s = readFileSync(path, "utf8");
  return { comm: s.slice(s.indexOf("(") + 1, s.lastIndexOf(")")), f: s.slice(s.lastIndexOf(")") + 2).split(" ") };
};
type Snap = Map<string, number>;
function snap(): Snap {
  const m: Snap = new Map();
  const add = (k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  for (const pid of agents) {
    const p = fields(`/proc/${pid}/stat`).f;
    add("process user", Number(p[11]));
    add("process sys", Number(p[12]));
    add("children user", Number(p[13]));
    add("children sys", Number(p[14]));
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      try {
        const { comm, f } = fields(`/proc/${pid}/task/${t}/stat`);
        const name = Number(t) === pid ? "main" : comm.replace(/\d+$/, "N");
        add(`thread ${name} user`, Number(f[11]));
        add(`thread ${name} sys`, Number(f[12]));
      } catch {
        /* gone */
      }
    }
  }
  return m;
}

const libc = dlopen("libc.so.6", { getrusage: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
const usage = new BigInt64Array(18);
/** µs of CPU of this process's reaped children (the bare spawns: the cluster's processes are reaped only at its stop). */
function childrenUs(): number {
  libc.symbols.getrusage(-1 /* RUSAGE_CHILDREN */, ptr(usage));
  return Number(usage[0]! * 1_000_000n + usage[1]! + usage[2]! * 1_000_000n + usage[3]!);
}
/** Spawns `true` every 5 ms until `done` resolves; the children's CPU per spawn, µs. */
async function bareBeside(done: Promise<void>): Promise<number> {
  let stop = false;
  void done.then(() => (stop = true));
  const before = childrenUs();
  let n = 0;
  for (; !stop; n++) {
    await Bun.spawn(["true"], { stdio: ["ignore", "ignore", "ignore"] }).exited;
    await Bun.sleep(5);
  }
  return (childrenUs() - before) / Math.max(1, n);
}

let tracer: ReturnType<typeof Bun.spawn> | undefined;
if (mode === "perf") tracer = Bun.spawn(["perf", "record", "-g", "-F", "2000", "--inherit", "-o", out, "-p", agents.join(",")], { stdout: "inherit", stderr: "inherit" });
if (mode === "strace") tracer = Bun.spawn(["strace", "-f", "-ff", "-qq", "-o", out, "-p", agents.join(",")], { stdout: "inherit", stderr: "inherit" });
if (tracer) await Bun.sleep(2000);
const before = snap();
const t0 = performance.now();
const run = runTrueJobs(c, jobs);
const bare = mode === "cpu" ? bareBeside(run) : undefined;
await run;
const seconds = (performance.now() - t0) / 1000;
const after = snap();
if (tracer) {
  tracer.kill("SIGINT");
  await tracer.exited;
}
console.log(`${jobs} jobs in ${seconds.toFixed(1)} s (${(jobs / seconds).toFixed(0)}/s); agents ${agents.join(" ")}; µs per job (10 ms ticks):`);
for (const [k, v] of after) console.log(`  ${k}: ${(((v - (before.get(k) ?? 0)) * 10_000) / jobs).toFixed(0)}`);
if (bare) console.log(`a bare \`true\` spawned beside meanwhile: ${(await bare).toFixed(0)} µs of its CPU per spawn (against the agents' children's per job above)`);
if (mode === "strace") {
  const calls = { agents: new Map<string, number>(), jobs: new Map<string, number>() };
  for (const f of readdirSync(dirname(out)).filter((f) => f.startsWith(`${basename(out)}.`))) {
    const text = readFileSync(`${dirname(out)}/${f}`, "utf8");
    const m = text.includes("execve(") ? calls.jobs : calls.agents;
    for (const name of text.matchAll(/^([a-z_0-9]+)\(/gm)) m.set(name[1]!, (m.get(name[1]!) ?? 0) + 1);
  }
  for (const [who, m] of Object.entries(calls)) {
    const total = [...m.values()].reduce((a, b) => a + b, 0);
    console.log(`system calls per job, ${who}: ${(total / jobs).toFixed(1)}: ${[...m].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${(n / jobs).toFixed(2)}`).join(", ")}`);
  }
}
await c.stop();
