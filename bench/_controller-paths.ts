/**
 * Where the controller's CPU per null job goes, by code path, fresh and warm (issue 36): `bun
 * bench/_controller-paths.ts [JOBS] [MAIN]` runs a controller (under Bun's sampling profiler,
 * --cpu-prof) and 4 agents of MAIN (default this checkout's src/main.ts), JOBS one-rank `true` jobs
 * (default 1000) on the fresh cluster, then JOBS more (warm). Each sample of the profile is given
 * to the deepest path of the table below on its stack (submit, pass, start, end, HTTP, WebSocket,
 * ...) and to the kind of code at its leaf (SQLite, zod, JSON, the WebSocket's write, hono, ours);
 * the samples of each batch are scaled to its JavaScript thread's CPU time (/proc), and the other
 * threads' (JIT compilers, collector; "thread" is the profiler's own sampler) are given by name
 * (one that ended during a batch is not counted). Also the passes per job
 * (/metrics). The profiler slows the controller (~10-20 %): the shares count, not the sum. Not a
 * benchmark (run.ts skips files named _*).
 */
import { readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { runTrueJobs, startBenchCluster } from "./cluster.ts";

const jobs = Number(process.argv[2] ?? 1000);
const main = process.argv[3] ?? new URL("../src/main.ts", import.meta.url).pathname;
const dir = `/tmp/ebb-controller-paths-${process.pid}`;
const TICK_MS = 10;

/** Deepest match on the stack wins: [file:function pattern, path]. */
const PATHS: [RegExp, string][] = [
  [/api\/app\.ts:|hono\/dist|controller\/server\.ts:fetch|controller\/index\.ts:authorize/, "HTTP: routing, auth, response (hono)"],
  [/api\/app\.ts:(body|validate)/, "submit: body read + zod"],
  [/controller\/jobs\.ts:(submitSoon|prepare|submit)\b/, "submit: checks (prepare)"],
  [/controller\/jobs\.ts:acceptQueued/, "submit: records (SQLite tx)"],
  [/controller\/scheduler\.ts:pass/, "pass: other"],
  [/controller\/index\.ts:gather/, "pass: other"],
  [/controller\/eligibility\.ts:refresh/, "pass: eligibility"],
  [/controller\/snapshot\.ts:take/, "pass: snapshot + queue order"],
  [/sched\/plan\.ts:makePlan/, "pass: plan (sched/, pure)"],
  [/controller\/plan-apply\.ts:apply/, "pass: checkPlan + apply"],
  [/controller\/jobs\.ts:startAll/, "start: records (SQLite tx + reduce)"],
  [/controller\/jobs\.ts:launch/, "start: job.start (env, credential, shares)"],
  [/controller\/(agents|jobs)\.ts:recordReports/, "end: records (SQLite tx + reduce)"],
  [/controller\/jobs\.ts:afterEnd/, "end: afterEnd (shares, kill/ack, launchers)"],
  [/controller\/server\.ts:message|controller\/agents\.ts:onMessage/, "WS in: agent messages (decode)"],
  [/microtask-batch\.ts:flush/, "WS out: writes (cork/send)"],
  [/store\/db\.ts:anon/, "WAL checkpoint (timer)"],
];
const KINDS: [RegExp, string][] = [
  [/bun:sqlite|drizzle-orm/, "SQLite"],
  [/zod/, "zod"],
  [/hono/, "hono"],
];

/** CPU ms so far of each thread of a process, by thread id, with its name ("thread": the profiler's sampler). */
function threads(pid: number): Map<string, { name: string; ms: number }> {
  const by = new Map<string, { name: string; ms: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue;
    }
    const name = tid === String(pid) ? "JS thread" : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/\s*#?\d+$/, "");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    by.set(tid, { name, ms: (Number(f[11]) + Number(f[12])) * TICK_MS });
  }
  return by;
}

/** CPU ms by thread name between two `threads` readings; a thread that ended meanwhile is not counted (its CPU is gone with it). */
function threadsSince(before: ReturnType<typeof threads>, after: ReturnType<typeof threads>): Map<string, number> {
  const by = new Map<string, number>();
  for (const [tid, t] of after) by.set(t.name, (by.get(t.name) ?? 0) + t.ms - (before.get(tid)?.ms ?? 0));
  return by;
}

const c = await startBenchCluster(4, { layout: "processes", ebb: [process.execPath, "--cpu-prof", `--cpu-prof-dir=${dir}`, main] });
const passes = async () => Number(/^ebb_scheduling_pass_duration_seconds_count (\d+)/m.exec(await (await fetch(`${c.url}/metrics`, { headers: { Authorization: `Bearer ${c.token}` } })).text())?.[1]);
const batches: { from: number; to: number; threads: Map<string, number>; passes: number }[] = [];
for (const name of ["fresh", "warm"]) {
  const t0 = threads(c.controllerPid), p0 = await passes(), from = Date.now() * 1000;
  await runTrueJobs(c, jobs);
  const t1 = threads(c.controllerPid), p1 = await passes(), to = Date.now() * 1000;
  batches.push({ from, to, threads: threadsSince(t0, t1), passes: p1 - p0 });
  console.error(`${name}: done, load ${loadavg()[0]!.toFixed(1)}`);
}
const pid = c.controllerPid;
await c.stop();

const file = readdirSync(dir).find((f) => f.includes(`.${pid}.`))!;
const p = JSON.parse(readFileSync(`${dir}/${file}`, "utf8")) as { nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[]; startTime: number; samples: number[]; timeDeltas: number[] };
const parent = new Map<number, number>();
const byId = new Map(p.nodes.map((n) => [n.id, n]));
for (const n of p.nodes) for (const ch of n.children ?? []) parent.set(ch, n.id);
const label = (id: number) => {
  const f = byId.get(id)!.callFrame;
  return `${f.url.replace(/.*\/(src|node_modules)\//, "")}:${f.functionName || "anon"}`;
};
const classify = (leaf: number): [string, string] => {
  const stack: string[] = [];
  for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) stack.unshift(label(id));
  let path = "other (start-up, timers, ...)";
  for (const frame of stack) for (const [re, name] of PATHS) if (re.test(frame)) path = name;
  const top = byId.get(leaf)!.callFrame;
  let kind = "ours/other JS";
  if (top.url === "" || top.url === "[native code]") kind = /stringify|parse/.test(top.functionName) ? "JSON" : /cork|send/.test(top.functionName) ? "WS write" : "native";
  for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
    const k = KINDS.find(([re]) => re.test(byId.get(id!)!.callFrame.url));
    if (k) {
      kind = k[1];
      break;
    }
  }
  return [path, kind];
};
const counts = batches.map(() => ({ paths: new Map<string, number>(), kinds: new Map<string, number>(), n: 0 }));
let t = p.startTime;
p.samples.forEach((s, i) => {
  t += p.timeDeltas[i]!;
  const b = batches.findIndex((x) => t >= x.from && t < x.to);
  if (b < 0) return;
  const [path, kind] = classify(s);
  const cnt = counts[b]!;
  cnt.n++;
  cnt.paths.set(path, (cnt.paths.get(path) ?? 0) + 1);
  cnt.kinds.set(kind, (cnt.kinds.get(kind) ?? 0) + 1);
});
const us = (b: number, samples: number) => ((samples / counts[b]!.n) * batches[b]!.threads.get("JS thread")!) / jobs * 1000;
const row = (name: string, cells: string[]) => console.log(`| ${name} | ${cells.join(" | ")} |`);
console.log(`controller ${pid}, ${jobs} jobs a batch; µs of CPU per job (the JS thread's by the profile's samples, ${counts.map((x) => x.n).join(" / ")} samples)\n`);
row("path", ["fresh", "warm"]);
row("---", ["---:", "---:"]);
const names = [...new Set([...PATHS.map(([, n]) => n), "other (start-up, timers, ...)"])];
for (const n of names.sort((a, b) => (counts[1]!.paths.get(b) ?? 0) - (counts[1]!.paths.get(a) ?? 0))) row(n, [0, 1].map((b) => us(b, counts[b]!.paths.get(n) ?? 0).toFixed(0)));
const kinds = new Set([...counts[0]!.kinds.keys(), ...counts[1]!.kinds.keys()]);
for (const k of kinds) row(`(leaf) ${k}`, [0, 1].map((b) => us(b, counts[b]!.kinds.get(k) ?? 0).toFixed(0)));
const threadNames = new Set([...batches[0]!.threads.keys(), ...batches[1]!.threads.keys()]);
for (const n of threadNames) row(`thread ${n}`, [0, 1].map((b) => (((batches[b]!.threads.get(n) ?? 0) / jobs) * 1000).toFixed(0)));
row("passes per job", [0, 1].map((b) => (batches[b]!.passes / jobs).toFixed(2)));
process.exit(0);
