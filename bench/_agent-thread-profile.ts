/**
 * Where the agents' thread spends its JavaScript time per null job (issue 36), by function and
 * phase: `bun bench/_agent-thread-profile.ts [JOBS] [DIR] [USER]` runs a controller and 4 agent
 * processes whose agent threads run under JavaScriptCore's sampling profiler
 * (_profile-agent-thread.ts; `bun --cpu-prof` does not profile Worker threads), JOBS one-rank
 * `true` jobs (default 1,000; USER's, else root's), and prints, over the samples taken while they
 * ran: the tier of each sample's innermost frame (LLInt: the interpreter; a host function: Bun's
 * native code, system calls included), each phase's share (PHASES) and the hottest functions, self
 * and inclusive. `again JOBS DIR`: the same of DIR's profiles once more. The profiler samples wall
 * time (every 1 ms) while the thread is inside JavaScript, blocked in a system call or not, and
 * nothing of the event loop's native work outside it; it slows the thread down. Shares, not times,
 * are its figures. Not a benchmark (run.ts skips files named _*).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { measureTrueJobs } from "./cluster.ts";

interface Frame {
  name: string;
  /** Absent for a host function (Bun's native code). */
  sourceURL?: string;
  line: number;
  category: string;
}
interface Trace {
  timestamp: number;
  frames: Frame[];
}

/**
 * Phases, by the innermost frame on a sample's stack that one names (`name` of the function, `file`
 * a part of its path; a host function, Bun's native code, has no file): a sample in Bun.spawn under
 * the cgroup moves counts for the spawn, the moves' own writes for the moves.
 */
const PHASES: readonly { phase: string; name?: RegExp; file?: RegExp; host?: true }[] = [
  { phase: "spawn: Bun.spawn (native; its wait for the child's exec)", name: /^spawn$/, host: true },
  { phase: "cgroup: the thread's moves into the job's v1 cgroups and back, its CPU mask", name: /^(fromInside|stepBack|keepingAffinity|withAffinity|bindOwnThread)$/ },
  { phase: "cgroup: made (v2 mkdir, v1 spares taken, limits)", name: /^prepare$/, file: /containment/ },
  { phase: "cgroup: removed (v2 rmdir, v1 kept as spares)", name: /^forgetJob$/ },
  { phase: "cgroup: usage read at the end", name: /^usage$/, file: /cgroup-limits|containment/ },
  { phase: "process record (start time, group log)", name: /^(startTimeOf|remember)$/, file: /procs/ },
  { phase: "path look-ups (the user's probe process)", name: /^unanswered$/, file: /path-probe/ },
  { phase: "credential check", name: /^launchRefusal$/ },
  { phase: "CFG directory and report", file: /step-cfg|cfg\/|cfg-lib/ },
  { phase: "PMI", file: /step-pmi|\/pmi\// },
  { phase: "rank environment", file: /agent\/env\.ts|slurm-env/ },
  { phase: "message encode and send", name: /^(send|sendText)$/, file: /proto\/channel/ },
  { phase: "message decode", file: /proto\/(channel|tagged|agent-fast|frames)/ },
  { phase: "rank output pumps", name: /^pump$/ },
  { phase: "the job's own launcher (step root) in the agent", file: /roles\/launcher\// },
  { phase: "step tree routing (tbon)", file: /tbon\// },
];
const OTHER = "other: the agent's glue (steps, jobs, allocation, timers, promises)";

function phaseOf(frames: readonly Frame[]): string {
  for (const f of frames)
    for (const p of PHASES)
      if ((!p.name || p.name.test(f.name)) && (!p.file || p.file.test(f.sourceURL ?? "")) && (!p.host || !f.sourceURL)) return p.phase;
  return OTHER;
}

/** The agent thread (the one named Worker) of each agent process of the cluster in `dir`: /proc/PID/task/TID/stat. */
function agentThreads(dir: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d)))
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (!cmd.includes("agent") || !cmd.some((a) => a.startsWith(dir))) continue;
      for (const tid of readdirSync(`/proc/${pid}/task`)) if (readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim() === "Worker") out.push(`/proc/${pid}/task/${tid}/stat`);
    } catch {
      /* gone */
    }
  return out;
}

/** User and system clock ticks of these threads so far. */
function ticksOf(stats: readonly string[]): number {
  let ticks = 0;
  for (const path of stats) {
    const s = readFileSync(path, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks;
}

function where(f: Frame): string {
  const file = f.sourceURL ? f.sourceURL.replace(/^.*\/(src|node_modules)\//, "") : "";
  return `${f.name || "(anonymous)"}${file ? ` ${file}${f.line < 1e9 ? `:${f.line}` : ""}` : ""}`;
}

function analyze(from: string, [t0, t1]: [number, number]): string {
  const traces: Trace[] = [];
  for (const f of readdirSync(from).filter((f) => f.endsWith(".json"))) traces.push(...(JSON.parse(readFileSync(join(from, f), "utf8")) as { traces: Trace[] }).traces.filter((t) => t.timestamp >= t0 && t.timestamp <= t1));
  const n = traces.length;
  const pct = (k: number) => `${((100 * k) / n).toFixed(1)}%`;
  const tier = new Map<string, number>();
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  const phase = new Map<string, number>();
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  for (const t of traces) {
    const top = t.frames[0];
    bump(tier, top ? top.category : "(none)");
    bump(self, top ? where(top) : "(none)");
    for (const k of new Set(t.frames.map(where))) bump(incl, k);
    bump(phase, phaseOf(t.frames));
  }
  const list = (m: Map<string, number>, k = 40) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([name, c]) => `  ${pct(c).padStart(6)} ${name}`).join("\n");
  return [`${n} samples over ${(t1 - t0).toFixed(1)} s (${jobs} jobs: ${(n / jobs).toFixed(2)} a job, ms of the threads' time inside JavaScript)`, "tier of the innermost frame (Unknown Executable: a host function, Bun's native code):", list(tier), "phases:", list(phase), "self:", list(self), "inclusive:", list(incl, 80)].join("\n");
}

// `again`: analyze DIR's profiles of the last run once more (JOBS then as given).
const again = process.argv[2] === "again";
const args = process.argv.slice(again ? 3 : 2);
const jobs = Number(args[0] ?? 1000);
const dir = args[1] ?? "/tmp/ebb-agent-profile";
const user = args[2];
if (!again) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  process.env.EBB_AGENT_PROFILE_DIR = dir;
  const uptime = () => Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
  let window: [number, number, number] = [0, 0, 0];
  await measureTrueJobs(4, jobs, {
    layout: "processes",
    ebb: [process.execPath, new URL("./_profile-agent-thread.ts", import.meta.url).pathname],
    user,
    during: async (c) => {
      const threads = agentThreads(c.dir);
      const cpu0 = ticksOf(threads);
      const t0 = uptime();
      return async () => void (window = [t0, uptime(), ((ticksOf(threads) - cpu0) * 10) / jobs]);
    },
  });
  writeFileSync(join(dir, "window"), JSON.stringify(window));
}
const [t0, t1, cpuMs] = JSON.parse(readFileSync(join(dir, "window"), "utf8")) as [number, number, number];
console.log(`the agents' threads used ${cpuMs.toFixed(2)} ms of CPU a job (their /proc stat, user and system, the profiler's cost included)`);
console.log(analyze(dir, [t0, t1]));
