/**
 * The controller's worst event-loop stall while its API is fed the largest requests each route
 * takes, beside running jobs (issue 28). A controller and 2 agents, each its own process; two
 * `sleep` jobs hold both nodes throughout. A probe process (bench/_probe.ts) asks GET /v1/health
 * one request after the other: an answer's latency is how long the loop could not serve it.
 * Baseline, same run and cluster: the worst latency while ordinary requests come (small
 * submits, short listings, job details). Then rounds of the largest requests: an array of the
 * most tasks (1,001) with the largest script and environment a body may carry, a dependency on
 * ~9,000 tasks, --test-only behind the growing queue (up to 5,000 pending), the longest listings
 * (jobs, plans, a week's timeline), a task's detail, hold and release and cancel of whole arrays,
 * /metrics. Reports the worst stall against the baseline, which request it fell in, and how many
 * jobs failed (the sleeping jobs must still be RUNNING, their nodes up). On a shared machine a
 * late answer may only mean the controller waited for a core: each answer also carries the
 * controller's CPU time meanwhile, and the second figure counts only that (at most the latency).
 */
import { loadavg } from "node:os";
import { readdirSync, readFileSync } from "node:fs";
import { startBenchCluster } from "./cluster.ts";
import type { Bench, Figure } from "./lib.ts";

const PROBE = new URL("./_probe.ts", import.meta.url).pathname;

interface Span {
  what: string;
  from: number;
  to: number;
}

/** Runs `work` while the probe asks; returns each answer's latency, with what was under way when it was sent. */
async function probed(url: string, pid: number, work: (spans: Span[]) => Promise<void>): Promise<{ worst: number; during: string; busy: number; busyDuring: string; answers: number; spans: Span[] }> {
  const probe = Bun.spawn([process.execPath, PROBE, url, String(pid)], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  await Bun.sleep(300);
  const spans: Span[] = [];
  try {
    await work(spans);
  } finally {
    await Bun.sleep(300);
    probe.stdin.end();
  }
  const out = await new Response(probe.stdout).text();
  await probe.exited;
  let worst = 0;
  let during = "nothing";
  let busy = 0;
  let busyDuring = "nothing";
  let answers = 0;
  // The request under way while a probe waited.
  const under = (sent: number, ms: number) => spans.find((s) => s.from <= sent + ms && s.to >= sent)?.what ?? "between requests";
  for (const line of out.trim().split("\n")) {
    const [sent, ms, cpu] = line.split(" ").map(Number) as [number, number, number];
    answers++;
    if (ms > worst) [worst, during] = [ms, under(sent, ms)];
    const spent = Math.min(ms, cpu);
    if (spent > busy) [busy, busyDuring] = [spent, under(sent, ms)];
  }
  return { worst, during, busy, busyDuring, answers, spans };
}

/** The controller process of the bench cluster in `dir`. */
function controllerPid(dir: string): number {
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
      if (cmd.includes("controller") && cmd.some((a) => a.startsWith(dir))) return Number(d);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no controller process for ${dir}`);
}

export default {
  name: "stall",
  description: "the controller's worst event-loop stall under the largest API requests, beside running jobs",
  async run({ quick }) {
    const rounds = quick ? 1 : 5;
    const cluster = await startBenchCluster(2, { layout: "processes" });
    const { url, token, dir } = cluster;
    const pid = controllerPid(dir);
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const call = async (spans: Span[], what: string, method: string, path: string, body?: unknown, want = [200, 201, 202]): Promise<any> => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const from = Date.now();
      const res = await fetch(`${url}${path}`, { method, headers, body: text });
      const reply = await res.text();
      spans.push({ what, from, to: Date.now() });
      if (!want.includes(res.status)) throw new Error(`${what}: ${method} ${path} answered ${res.status} ${reply.slice(0, 300)}`);
      return reply.startsWith("{") ? JSON.parse(reply) : reply;
    };
    try {
      const sleepers: number[] = [];
      for (let i = 0; i < 2; i++) sleepers.push((await call([], "sleep job", "POST", "/v1/jobs", { argv: ["sleep", "3600"], nodes: 1, cwd: dir, output: "/dev/null" })).id);
      for (;;) {
        const states = await Promise.all(sleepers.map(async (id) => (await call([], "job", "GET", `/v1/jobs/${id}`)).state));
        if (states.every((s) => s === "RUNNING")) break;
        await Bun.sleep(50);
      }

      const baseline = await probed(url, pid, async (spans) => {
        for (let i = 0; i < 40 * rounds; i++) {
          const id = (await call(spans, "small submit", "POST", "/v1/jobs", { argv: ["true"], cwd: dir, output: "/dev/null", hold: true })).id;
          await call(spans, "small listing", "GET", "/v1/jobs?limit=20");
          await call(spans, "job detail", "GET", `/v1/jobs/${id}`);
          await call(spans, "cancel", "DELETE", `/v1/jobs/${id}`);
        }
      });

      // The largest body: a 1 MiB script and an environment just under 1 MiB (the body limit is 2 MiB).
      const script = `#!/bin/sh\n# ${"s".repeat((1 << 20) - 100)}\ntrue\n`;
      const env = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`BIG_${i}`, "e".repeat(130_000)]));
      const arrays: number[] = [];
      const fuzz = await probed(url, pid, async (spans) => {
        for (let r = 0; r < rounds; r++) {
          arrays.push((await call(spans, "largest array (1,001 tasks, 2 MB body)", "POST", "/v1/jobs", { script, env, array: "0-1000", cwd: dir, output: "/dev/null" })).id);
          arrays.push((await call(spans, "largest array, argv", "POST", "/v1/jobs", { argv: ["true", "a".repeat(60_000)], env, array: "0-1000", cwd: dir, output: "/dev/null" })).id);
          await call(spans, "dependency on ~9,000 tasks", "POST", "/v1/jobs", { argv: ["true"], cwd: dir, output: "/dev/null", dependency: `afterok:${arrays.slice(-9).join(":")}` });
          await call(spans, "--test-only behind the queue", "POST", "/v1/jobs/test", { argv: ["true"], nodes: 2 });
          await call(spans, "listing of 100,000", "GET", "/v1/jobs?limit=100000");
          await call(spans, "array's listing", "GET", `/v1/jobs?array=${arrays.at(-1)}&limit=100000`);
          await call(spans, "plans, 1,000", "GET", "/v1/plans?limit=1000");
          await call(spans, "timeline, a week", "GET", "/v1/timeline?window=604800");
          await call(spans, "task detail", "GET", `/v1/jobs/${arrays.at(-1)}_1000`);
          await call(spans, "hold an array", "POST", `/v1/jobs/${arrays.at(-1)}/hold`);
          await call(spans, "release an array", "POST", `/v1/jobs/${arrays.at(-1)}/release`);
          await call(spans, "/metrics", "GET", "/metrics");
          // The queue grows to ~5,000 pending; past that, whole arrays are cancelled.
          if (arrays.length > 5) await call(spans, "cancel an array", "DELETE", `/v1/jobs/${arrays.shift()}`);
        }
      });

      const jobs = (await call([], "listing", "GET", "/v1/jobs?limit=100000")).jobs as { id: number; state: string }[];
      const failed = jobs.filter((j) => ["FAILED", "NODE_FAIL", "TIMEOUT"].includes(j.state)).length;
      const stillRunning = jobs.filter((j) => sleepers.includes(j.id) && j.state === "RUNNING").length;
      const nodes = (await call([], "nodes", "GET", "/v1/nodes")).nodes as { state: string }[];
      const slowest = (spans: Span[]) => {
        const by = new Map<string, number>();
        for (const s of spans) by.set(s.what, Math.max(by.get(s.what) ?? 0, s.to - s.from));
        return [...by].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([w, ms]) => `${w} ${ms} ms`).join(", ");
      };
      process.stderr.write(`  baseline: worst ${baseline.worst.toFixed(0)} ms over ${baseline.answers} probes (during ${baseline.during}); worst with the controller busy ${baseline.busy.toFixed(0)} ms (during ${baseline.busyDuring})\n`);
      process.stderr.write(`  largest requests: worst ${fuzz.worst.toFixed(0)} ms over ${fuzz.answers} probes, during ${fuzz.during}; worst with the controller busy ${fuzz.busy.toFixed(0)} ms (during ${fuzz.busyDuring}); slowest answers: ${slowest(fuzz.spans)}\n`);
      process.stderr.write(`  load average (1 min): ${loadavg()[0]!.toFixed(1)}\n`);
      process.stderr.write(`  sleeping jobs still running: ${stillRunning} of ${sleepers.length}; nodes: ${nodes.map((n) => n.state).join(", ")}; jobs failed: ${failed}\n`);
      const lost = failed + (sleepers.length - stillRunning);
      return [
        {
          name: `worst /v1/health latency under the largest requests (${rounds} round${rounds > 1 ? "s" : ""}; worst during: ${fuzz.during})`,
          value: fuzz.worst,
          unit: "ms",
          baseline: { name: "ordinary requests", value: baseline.worst },
          better: "lower",
          goal: "<= 100 ms",
          met: fuzz.worst <= 100,
        },
        {
          name: `the same, counting only the controller's own CPU time meanwhile (worst during: ${fuzz.busyDuring})`,
          value: fuzz.busy,
          unit: "ms",
          baseline: { name: "ordinary requests", value: baseline.busy },
          better: "lower",
          goal: "<= 100 ms",
          met: fuzz.busy <= 100,
        },
        { name: "jobs failed, running jobs lost", value: lost, unit: "jobs", better: "lower", goal: "0", met: lost === 0 },
      ] satisfies Figure[];
    } finally {
      await cluster.stop();
    }
  },
} satisfies Bench;
