/** A local cluster (`ebb up`) in its own process, for benchmarks; clients get its env. */
import type { Subprocess } from "bun";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, ROOT } from "../test/support/cluster.ts";
import { cpuSince, cpuSnapshot } from "./proc-cpu.ts";

const MAIN = new URL("../src/main.ts", import.meta.url).pathname;

export interface BenchCluster {
  url: string;
  token: string;
  dir: string;
  env: Record<string, string>;
  /** The process that runs the controller (`ebb controller`, or `ebb up`). */
  controllerPid: number;
  /** The controller's database. */
  db: string;
  /** argv prefix that runs the ebb CLI (the compiled binary when built, for realistic start-up). */
  ebb: string[];
  /** Stops it and removes its directory; says how big its database was once closed (0: none). */
  stop(): Promise<{ dbBytes: number }>;
}

/** Builds dist/ebb (a second or two) so that launch timings include a realistic CLI start. */
export async function compiledEbb(): Promise<string[]> {
  const out = new URL("../dist/ebb", import.meta.url).pathname;
  const build = Bun.spawn([process.execPath, "run", "build"], { cwd: ROOT, stdout: "ignore", stderr: "inherit" });
  if ((await build.exited) !== 0) throw new Error("bun build --compile failed");
  return [out];
}

/**
 * `layout: "up"` runs `ebb up` (controller and agents in one process); `"processes"` runs the
 * controller and each agent as its own process, as on a real cluster. `agentConfig`: the agents'
 * config file (host rules), as `ebb agent --config` / `ebb up --agent-config`.
 */
export async function startBenchCluster(nodes: number, opts: { cpusPerNode?: number; ebb?: string[]; layout?: "up" | "processes"; heartbeat?: number; log?: string; warmRanks?: number; agentConfig?: string } = {}): Promise<BenchCluster> {
  const dir = mkdtempSync(join(tmpdir(), "ebb-bench-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const stateDir = join(dir, "state");
  const ebb = opts.ebb ?? [process.execPath, MAIN];
  const spawn = (args: string[]) => Bun.spawn([...ebb, ...args], { env: { ...process.env, EBB_LOG: process.env.EBB_BENCH_LOG ?? opts.log ?? "warn" }, stdout: "ignore", stderr: "inherit" });
  const cpus = String(opts.cpusPerNode ?? 2);
  const procs: Subprocess[] = [];
  if (opts.layout === "processes") {
    procs.push(spawn(["controller", "--listen", `127.0.0.1:${port}`, "--state-dir", stateDir]));
    // Up to a minute: a controller's start (under a profiler, at load 40) took more than 5 s.
    for (let i = 0; i < 2400 && !(await Bun.file(join(stateDir, "cluster.key")).exists()); i++) await Bun.sleep(25);
    for (let i = 1; i <= nodes; i++) {
      const name = `node${String(i).padStart(2, "0")}`;
      procs.push(spawn(["agent", "--controller", url, "--name", name, "--cpus", cpus, "--key-file", join(stateDir, "cluster.key"), "--state-dir", join(dir, "agents", name), ...(opts.agentConfig ? ["--config", opts.agentConfig] : [])]));
    }
  } else {
    procs.push(spawn(["up", "--nodes", String(nodes), "--cpus-per-node", cpus, "--listen", `127.0.0.1:${port}`, "--state-dir", stateDir, ...(opts.heartbeat ? ["--heartbeat", String(opts.heartbeat)] : []), ...(opts.warmRanks ? ["--warm-ranks", String(opts.warmRanks)] : []), ...(opts.agentConfig ? ["--agent-config", opts.agentConfig] : [])]));
  }
  for (let i = 0; ; i++) {
    try {
      const h = (await (await fetch(`${url}/v1/health`)).json()) as { nodes: number };
      if (h.nodes === nodes) break;
    } catch {}
    // 10 s, and 60 ms more per node: a thousand agents register in tens of seconds on a loaded machine (over a minute at load 20).
    if (i > 400 + 2.4 * nodes) throw new Error("the bench cluster did not come up");
    await Bun.sleep(25);
  }
  const token = readFileSync(join(stateDir, "token"), "utf8").trim();
  return {
    url,
    token,
    dir,
    env: { ...(process.env as Record<string, string>), EBB_CONTROLLER: url, EBB_TOKEN: token, EBB_STATE_DIR: stateDir, EBB_LOG: "warn" },
    controllerPid: procs[0]!.pid,
    db: join(stateDir, "ebb.db"),
    ebb,
    async stop() {
      for (const p of procs) p.kill("SIGTERM");
      await Promise.all(procs.map((p) => p.exited));
      await settle(dir);
      let dbBytes = 0;
      try {
        dbBytes = statSync(join(stateDir, "ebb.db")).size;
      } catch {
        // none
      }
      rmSync(dir, { recursive: true, force: true });
      return { dbBytes };
    },
  };
}

/**
 * Waits until no process names the cluster's directory any more: the agents' sentinels, which go on
 * after their agent (reparented to init, so no CPU figure of ours counts them) to clean up its
 * process groups and cgroups. Without this wait the next trial shared the machine with the last
 * one's clean-up (with the old sentinel: ~3 forks per recorded process group, ~1,000 after 1,000
 * jobs, 30 s at load 20) — the trial right after the bare-spawn run was ~2x faster than the others.
 */
export async function settle(dir: string, maxMs = 120_000): Promise<number> {
  const t0 = performance.now();
  const left = () => {
    for (const d of readdirSync("/proc")) {
      if (!/^\d+$/.test(d)) continue;
      try {
        if (readFileSync(`/proc/${d}/cmdline`, "utf8").includes(dir)) return true;
      } catch {
        // gone meanwhile
      }
    }
    return false;
  };
  while (left() && performance.now() - t0 < maxMs) await Bun.sleep(50);
  return performance.now() - t0;
}

/** Runs a command to its end: its wall time in ms and its stdout; throws with its stderr if it fails. */
export async function runCommand(argv: string[], env: Record<string, string>): Promise<{ ms: number; out: string }> {
  const t0 = performance.now();
  const p = Bun.spawn(argv, { env, stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`${argv.join(" ")} failed (${code}): ${err || out}`);
  return { ms, out };
}

/** Wall time of a command in ms. */
export async function timed(argv: string[], env: Record<string, string>): Promise<number> {
  return (await runCommand(argv, env)).ms;
}

/** A running process's stdout as it grows (for waiting on a line), and when it has ended. */
export function collectStdout(stdout: ReadableStream<Uint8Array>): { text: () => string; done: Promise<void> } {
  let out = "";
  const decoder = new TextDecoder();
  const done = (async () => {
    for await (const chunk of stdout) out += decoder.decode(chunk, { stream: true });
  })();
  return { text: () => out, done };
}

/**
 * Submits `jobs` one-rank `true` jobs over HTTP from 8 clients at once and returns when no job is
 * active any more (polling the cheap health counter). Each submit's time goes to `latencies`;
 * `fields` go into every job's body (e.g. exclusive: true).
 */
export async function runTrueJobs(c: Pick<BenchCluster, "url" | "token" | "dir">, jobs: number, latencies?: number[], fields: Record<string, unknown> = {}): Promise<void> {
  const headers = { Authorization: `Bearer ${c.token}`, "Content-Type": "application/json" };
  const body = JSON.stringify({ argv: ["true"], cwd: c.dir, output: "/dev/null", ...fields });
  let next = 0;
  const submitter = async () => {
    while (next < jobs) {
      next++;
      const t = performance.now();
      const res = await fetch(`${c.url}/v1/jobs`, { method: "POST", headers, body });
      latencies?.push(performance.now() - t);
      if (res.status !== 201) throw new Error(`submit failed: ${res.status} ${await res.text()}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, submitter));
  while (((await (await fetch(`${c.url}/v1/health`)).json()) as { jobs: number }).jobs > 0) await Bun.sleep(50);
}

/** Bytes a process has caused to be written to storage so far (/proc/PID/io write_bytes). */
export function bytesWritten(pid: number): number {
  return Number(/^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1] ?? NaN);
}

/** One batch of null jobs on a running cluster (`measureBatch`). */
export interface TrueJobsBatch {
  /** Jobs per second, the batch's first submit to its last job's end (as the controller recorded it). */
  rate: number;
  seconds: number;
  /** Each submit's wall time, ms. */
  latencies: number[];
  /** CPU seconds by kind of process (proc-cpu.ts byRole) over the batch, job processes included. */
  cpu: Record<string, number>;
  /** Bytes the controller's process wrote to storage over the batch. */
  controllerWritten: number;
  /** Scheduling passes the controller ran over the batch (/metrics): a count load does not blur. */
  passes: number;
  /** SQLite transactions the controller committed over the batch (/metrics), single statements included. */
  commits: number;
}

export interface TrueJobsRun extends TrueJobsBatch {
  /** The database file's size once the cluster has stopped (its WAL checkpointed into it). */
  dbBytes: number;
  /** With `warm`: a second batch of as many jobs on the same cluster, run after the first. */
  warm?: TrueJobsBatch;
}

/**
 * Waits until this process's descendants (a cluster just started) use at most 2 clock ticks (20 ms)
 * of CPU in half a second, for at most `maxMs`: the agents' warm ranks (one each by default) start after
 * the nodes register and take ~0.1-0.35 CPU seconds each, work of the cluster's start that a null
 * job's figures would otherwise carry.
 */
export async function quiesce(maxMs = 20_000): Promise<void> {
  const WINDOW_MS = 500;
  for (const t0 = performance.now(); performance.now() - t0 < maxMs; ) {
    const before = cpuSnapshot();
    await Bun.sleep(WINDOW_MS);
    const used = Object.entries(cpuSince(before)).reduce((a, [k, v]) => (k.endsWith(" own") ? a : a + v), 0);
    if (used < 0.025) return;
  }
}

/** A token of `user` (a Unix user of this host), issued with the cluster's admin token. */
async function userToken(c: BenchCluster, user: string): Promise<string> {
  const res = await fetch(`${c.url}/v1/tokens`, { method: "POST", headers: { Authorization: `Bearer ${c.token}`, "Content-Type": "application/json" }, body: JSON.stringify({ user }) });
  const body = (await res.json()) as { token?: string };
  if (!body.token) throw new Error(`cannot issue a token for ${user}: ${res.status} ${JSON.stringify(body)}`);
  return body.token;
}

/**
 * The scheduling passes a cluster's controller has run and the SQLite transactions it committed
 * (its /metrics; the cluster's own token, whoever submits).
 */
export async function passesRun(c: Pick<BenchCluster, "url" | "token">): Promise<{ passes: number; commits: number }> {
  const text = await (await fetch(`${c.url}/metrics`, { headers: { Authorization: `Bearer ${c.token}` } })).text();
  const count = (name: string) => Number(new RegExp(`^${name}_count (\\d+)`, "m").exec(text)?.[1] ?? NaN);
  return { passes: count("ebb_scheduling_pass_duration_seconds"), commits: count("ebb_sqlite_commit_duration_seconds") };
}

/** `jobs` one-rank `true` jobs (`runTrueJobs`, with `fields`) on a running cluster, measured; every one of them must have completed. */
async function measureBatch(cluster: BenchCluster, jobs: number, fields?: Record<string, unknown>, admin: Pick<BenchCluster, "url" | "token"> = cluster): Promise<TrueJobsBatch> {
  const latencies: number[] = [];
  const counts0 = await passesRun(admin);
  const written0 = bytesWritten(cluster.controllerPid);
  const cpu0 = cpuSnapshot();
  const first = Date.now();
  await runTrueJobs(cluster, jobs, latencies, fields);
  const cpu = cpuSince(cpu0);
  const controllerWritten = bytesWritten(cluster.controllerPid) - written0;
  const counts = await passesRun(admin);
  const passes = counts.passes - counts0.passes;
  const commits = counts.commits - counts0.commits;
  // The end times, read once the last job has ended: the newest `jobs` jobs are this batch's.
  const headers = { Authorization: `Bearer ${cluster.token}` };
  const res = (await (await fetch(`${cluster.url}/v1/jobs?limit=${jobs}`, { headers })).json()) as { jobs: { state: string; endTime: string | null }[] };
  const bad = res.jobs.filter((j) => j.state !== "COMPLETED").length;
  if (bad > 0 || res.jobs.length !== jobs) throw new Error(`${bad} of ${res.jobs.length} jobs did not complete`);
  const seconds = (Math.max(...res.jobs.map((j) => Date.parse(j.endTime!))) - first) / 1000;
  return { rate: jobs / seconds, seconds, latencies, cpu, controllerWritten, passes, commits };
}

/**
 * A fresh cluster (`startBenchCluster(nodes, opts)`) runs `jobs` one-rank `true` jobs
 * (`measureBatch`) and is stopped. `warm`: then as many again, measured apart (jobs 1,001-2,000
 * of a cluster whose processes' JIT has warmed up on the first 1,000). `during` runs beside them
 * (a watcher), stopped before the cluster.
 */
export async function measureTrueJobs(nodes: number, jobs: number, opts: Parameters<typeof startBenchCluster>[1] & { fields?: Record<string, unknown>; warm?: boolean; user?: string; during?: (c: BenchCluster) => Promise<() => Promise<void>> } = {}): Promise<TrueJobsRun> {
  const cluster = await startBenchCluster(nodes, opts);
  let stopWatching: (() => Promise<void>) | undefined;
  let run: TrueJobsBatch | undefined;
  let warm: TrueJobsBatch | undefined;
  let dbBytes = 0;
  try {
    await quiesce();
    stopWatching = await opts.during?.(cluster);
    // An ordinary user's jobs (the agents drop each to the user), in a directory every user may enter.
    const submitter = opts.user ? { ...cluster, token: await userToken(cluster, opts.user), dir: "/tmp" } : cluster;
    run = await measureBatch(submitter, jobs, opts.fields, cluster);
    if (opts.warm) warm = await measureBatch(submitter, jobs, opts.fields, cluster);
  } finally {
    await stopWatching?.();
    dbBytes = (await cluster.stop()).dbBytes;
  }
  return { ...run!, dbBytes, ...(warm ? { warm } : {}) };
}

/** A JSON call to a cluster's API with its token; the parsed body, whatever the status. */
export type Api = (method: string, path: string, body?: unknown) => Promise<any>;

export function clusterApi(c: Pick<BenchCluster, "url" | "token">): Api {
  return async (method, path, body) => {
    const r = await fetch(`${c.url}${path}`, { method, headers: { Authorization: `Bearer ${c.token}`, "Content-Type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    return (await r.json()) as any;
  };
}

/**
 * Asks for a resize of a running job to `nodes` and waits for its adaptation to end (polling every
 * `pollMs`, for at most `maxMs`); the committed adaptation's times (event -> epoch ms), or throws.
 */
export async function resizeAndWait(api: Api, job: number, nodes: number, pollMs = 50, maxMs = 120_000): Promise<Record<string, number>> {
  const { adaptationId } = await api("POST", `/v1/jobs/${job}/resize`, { nodes });
  for (const t0 = performance.now(); ; ) {
    const a = (await api("GET", `/v1/jobs/${job}`)).adaptations.find((x: any) => x.id === adaptationId);
    if (a && a.state !== "ADAPTING") {
      if (a.state !== "COMMITTED") throw new Error(`resize of job ${job} to ${nodes} failed: ${a.message}`);
      return a.times as Record<string, number>;
    }
    if (performance.now() - t0 > maxMs) throw new Error(`resize of job ${job} to ${nodes} did not end in ${maxMs / 1000} s`);
    await Bun.sleep(pollMs);
  }
}

/** CPU seconds of this process (`own`) and with the children it has waited for (`all`), from /proc/self/stat. */
function ownCpu(): { own: number; all: number } {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const own = (Number(f[11]) + Number(f[12])) / 100;
  return { own, all: own + (Number(f[13]) + Number(f[14])) / 100 };
}

/** `true` spawned `n` times in a row: spawns per second, and CPU seconds per spawn (parent and child; `parent`, the spawner's alone). */
export async function bareSpawn(n: number): Promise<{ rate: number; cpu: number; parent: number }> {
  const cpu0 = ownCpu();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await Bun.spawn(["true"], { stdio: ["ignore", "ignore", "ignore"] }).exited;
  const cpu1 = ownCpu();
  return { rate: n / ((performance.now() - t0) / 1000), cpu: (cpu1.all - cpu0.all) / n, parent: (cpu1.own - cpu0.own) / n };
}
