/**
 * Where a 4 -> 8 grow's time goes (issue 36): the adapt bench's program, warm joining ranks
 * (`ebb exec`, --warm-ranks 1) or cold (`bun PROGRAM`), with EBB_TRACE on in every process
 * (util/trace.ts). Prints, per event, the median offset from the controller's decision over the
 * trials. Run: bun bench/_grow-trace.ts [TRIALS] [warm|cold] [notrace].
 * With GROW_TRACE_CPU set: the CPU seconds of each kind of process from the request to the commit
 * seen (/proc, 10 ms ticks). With EBB_TRACE_CPU set: per pair of consecutive marks of one thread
 * inside a grow, the CPU that thread used between them and the time it took, summed over the
 * threads and averaged over the trials (util/trace.ts).
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { clusterApi, collectStdout, resizeAndWait, startBenchCluster } from "./cluster.ts";
import { median } from "./lib.ts";
import { cpuSince, cpuSnapshot } from "./proc-cpu.ts";

// CPU seconds during the grow, by process kind: the machine's two cores are what everything waits for.
const kindOf = (cmd: string) => (/ up /.test(cmd) ? "controller+agents" : / run /.test(cmd) ? "launcher" : /warm-rank/.test(cmd) ? "ranks" : "other");
const cpu: Record<string, number> = {};
const segments = new Map<string, { cpu: number; wall: number }>();

const PROGRAM = new URL("programs/adapt.ts", import.meta.url).pathname;
const trials = Number(process.argv[2] ?? 5);
const kind = process.argv[3] ?? "warm";
const trace = `/tmp/ebb-grow-trace-${process.pid}`;
// "notrace": the totals only, nothing appended (to compare with a tree without the marks).
if (process.argv[4] !== "notrace") process.env.EBB_TRACE = trace;
writeFileSync(trace, "");
if (process.env.EBB_TRACE_CPU) writeFileSync(`${trace}.cpu`, "");
const cluster = await startBenchCluster(8, { cpusPerNode: 1, warmRanks: 1 });
const api = clusterApi(cluster);
const stop = join(cluster.dir, "stop");
const offsets = new Map<string, number[]>();
const totals: number[] = [];
try {
  for (let t = 0; t < trials; t++) {
    rmSync(stop, { force: true });
    const argv = kind === "warm" ? ["ebb", "exec", PROGRAM, stop] : [process.execPath, PROGRAM, stop];
    const run = Bun.spawn([...cluster.ebb, "run", "-N", "4", "--elastic", "--min-nodes", "1", "--max-nodes", "8", "--", ...argv], { env: cluster.env, stdout: "pipe", stderr: "inherit" });
    const stdout = collectStdout(run.stdout);
    while (!/ready rank=3/.test(stdout.text())) await Bun.sleep(20);
    await Bun.sleep(3000);
    writeFileSync(trace, "");
    if (process.env.EBB_TRACE_CPU) writeFileSync(`${trace}.cpu`, "");
    const job = (await api("GET", "/v1/jobs?state=RUNNING")).jobs[0].id as number;
    const measureCpu = process.env.GROW_TRACE_CPU !== undefined;
    const before = measureCpu ? cpuSnapshot(kindOf) : undefined;
    const times = await resizeAndWait(api, job, 8, 100);
    if (before) addCpu(before);
    totals.push(times.committed! - times.requested!);
    const lines = readFileSync(trace, "utf8").trim().split("\n").map((l) => l.split(" "));
    if (process.env.GROW_TRACE_KEEP) writeFileSync(`${process.env.GROW_TRACE_KEEP}-${t}`, readFileSync(trace, "utf8"));
    const decided = lines.find((l) => l[2] === "ctl.decide");
    console.error(`trial ${t}: ${totals.at(-1)} ms`);
    // A tree without the marks (a baseline's) gives its totals only.
    if (decided) addOffsets(lines, Number(decided[0]));
    const committed = lines.find((l) => l[2] === "l.committed");
    if (decided && committed && process.env.EBB_TRACE_CPU) addSegments(readFileSync(`${trace}.cpu`, "utf8"), Number(decided[0]), Number(committed[0]));
    writeFileSync(stop, "");
    await run.exited;
    await stdout.done;
    await Bun.sleep(500);
  }
} finally {
  writeFileSync(stop, "");
  await cluster.stop();
  rmSync(trace, { force: true });
  rmSync(`${trace}.cpu`, { force: true });
}
const rows = [...offsets].map(([k, v]) => [k, median(v)] as const).sort((a, b) => a[1] - b[1]);
console.log(`${kind}, ${trials} trials; decision to commit (controller's times) median ${median(totals)} ms: ${totals.join(", ")}`);
if (Object.keys(cpu).length > 0) console.log(`CPU ms per grow (request to the commit seen, 10 ms ticks): ${Object.entries(cpu).map(([k, v]) => `${k} ${((v * 1000) / trials).toFixed(0)}`).join(", ")}`);
for (const [k, v] of rows) console.log(`${v.toFixed(1).padStart(8)} ms  ${k}`);
if (segments.size > 0) {
  // By the marking process's role: ctl. controller, l. launcher, a. agents, w./p./r. ranks (warm rank, program, ebb/comm).
  const roles: Record<string, number> = {};
  for (const [k, v] of segments) {
    const role = ({ ctl: "controller", l: "launcher", a: "agents" } as Record<string, string>)[k.split(".")[0]!] ?? "ranks";
    roles[role] = (roles[role] ?? 0) + v.cpu / trials;
  }
  console.log(`\nthread CPU per grow between marks, by role: ${Object.entries(roles).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(", ")} ms`);
  console.log("thread CPU between consecutive marks of one thread, per grow (summed over threads): cpu ms, wall ms, marks");
  for (const [k, v] of [...segments].sort((a, b) => b[1].cpu - a[1].cpu).slice(0, 30)) console.log(`${(v.cpu / trials).toFixed(2).padStart(8)} ${(v.wall / trials).toFixed(1).padStart(8)}  ${k}`);
}

/** Per event: the first and the last occurrence (several ranks and agents mark the same event), from t0. */
function addOffsets(lines: string[][], t0: number): void {
  const seen = new Map<string, number[]>();
  for (const [time, , event, ...detail] of lines) {
    const key = `${event}${detail.length ? ` ${detail.join(" ").replace(/^\d+ \d+$/, (x) => x.split(" ")[0]!).replace(/^\d{4,}$/, "")}` : ""}`.trim();
    (seen.get(key) ?? seen.set(key, []).get(key)!).push(Number(time) - t0);
  }
  for (const [key, ts] of seen) {
    (offsets.get(`${key} first`) ?? offsets.set(`${key} first`, []).get(`${key} first`)!).push(Math.min(...ts));
    if (ts.length > 1) (offsets.get(`${key} last`) ?? offsets.set(`${key} last`, []).get(`${key} last`)!).push(Math.max(...ts));
  }
}

/** CPU seconds since `before` by kind; the job's ranks (spinning for 3 s by now) told from the idle warm ranks that join. */
function addCpu(before: ReturnType<typeof cpuSnapshot>): void {
  for (const p of before.values()) if (p.kind === "ranks") p.kind = p.cpu > 0.4 ? "old ranks" : "joining ranks";
  const after = cpuSnapshot(kindOf);
  for (const [pid, p] of after) p.kind = before.get(pid)?.kind ?? p.kind;
  for (const [k, v] of Object.entries(cpuSince(before, after))) cpu[k] = (cpu[k] ?? 0) + v;
}

/** Lines `THREAD EVENT CPU_MS AT` of one grow: each thread's CPU between its consecutive marks inside [from, to]. */
function addSegments(text: string, from: number, to: number): void {
  const threads = new Map<string, { event: string; cpu: number; at: number }[]>();
  for (const line of text.trim().split("\n")) {
    const [thread, event, cpuMs, at] = line.split(" ");
    if (!thread || !event) continue;
    (threads.get(thread) ?? threads.set(thread, []).get(thread)!).push({ event, cpu: Number(cpuMs), at: Number(at) });
  }
  for (const marks of threads.values()) {
    marks.sort((a, b) => a.at - b.at);
    for (let i = 1; i < marks.length; i++) {
      const [a, b] = [marks[i - 1]!, marks[i]!];
      if (a.at < from || b.at > to + 1) continue;
      const key = `${a.event} -> ${b.event}`;
      const s = segments.get(key) ?? segments.set(key, { cpu: 0, wall: 0 }).get(key)!;
      s.cpu += b.cpu - a.cpu;
      s.wall += b.at - a.at;
    }
  }
}
