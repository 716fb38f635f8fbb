/**
 * What host-rule sampling costs an agent (issue 34's goal: at most 0.5 % of one core at a 1 s
 * interval). One sample is what the agent does each interval: read every input the rules may use
 * (/proc/stat and the jobs' cgroup for cpu.other, loadavg, the three PSI files, /proc/net/dev,
 * logind sessions or utmp) and judge them (EWMA, hysteresis, expression, dwell). Its CPU time is
 * measured in this process (getrusage), paced one sample every 20 ms so caches are as cold as
 * between an agent's samples, and in a tight loop. Baseline, same run: one bare read of
 * /proc/stat, the least a sampler could do. A cmd.NAME rule adds a process per run (every 10 s by
 * default): its start is measured too.
 */
import { readFileSync } from "node:fs";
import { firstJudgement, judge } from "../src/model/host-judge.ts";
import { resolveHostRules, type HostRules } from "../src/model/host-rules.ts";
import { HostSampler } from "../src/roles/agent/host-sample.ts";
import { cgroup2Root } from "../src/roles/agent/containment.ts";
import { cgroupCpuSeconds } from "../src/roles/agent/host-sample.ts";
import { HostCommand } from "../src/roles/agent/host-command.ts";
import { median, type Bench } from "./lib.ts";

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** Median CPU µs of `fn`, called `n` times `gapMs` apart (0: back to back). */
async function cost(n: number, gapMs: number, fn: () => void): Promise<number> {
  const each: number[] = [];
  if (gapMs === 0) {
    const t0 = cpuUs();
    for (let i = 0; i < n; i++) fn();
    return (cpuUs() - t0) / n;
  }
  for (let i = 0; i < n; i++) {
    await Bun.sleep(gapMs);
    const t0 = cpuUs();
    fn();
    each.push(cpuUs() - t0);
  }
  return median(each);
}

const ALL: HostRules = (() => {
  const r = resolveHostRules(
    {
      hostStates: {
        rules: {
          "cpu.other": { busy: 0.25, overloaded: 0.6 },
          load1: { busy: 4, overloaded: 8 },
          "psi.cpu": { busy: 20, overloaded: 50 },
          "psi.mem": { busy: 20, overloaded: 50 },
          "psi.io": { busy: 20, overloaded: 50 },
          "net.bytes": { busy: 5e7, overloaded: 1e8 },
          users: { busy: 1 },
        },
        expression: "max(cpu.other, load1, psi.cpu, psi.mem, psi.io, 0.5*net.bytes + 0.5*users)",
      },
    },
    "bench",
  );
  if (!r || "error" in r) throw new Error(`bench rules: ${JSON.stringify(r)}`);
  return r;
})();

export default {
  name: "host-rules",
  description: "an agent's CPU for sampling and judging every host-rule input once a second (goal: <= 0.5 % of one core)",
  async run({ quick }) {
    const jobs = cgroup2Root();
    const sampler = new HostSampler(ALL, { jobsCpuSeconds: () => (jobs ? (cgroupCpuSeconds(jobs) ?? 0) : 0) });
    let j = firstJudgement(Date.now() / 1000);
    const oneSample = () => {
      const now = Date.now() / 1000;
      j = judge(ALL, j, now, sampler.sample(now));
    };
    const bare = () => readFileSync("/proc/stat", "utf8");
    oneSample();
    const n = quick ? 100 : 400;
    const paced = await cost(n, 20, oneSample);
    const pacedBare = await cost(n, 20, bare);
    const tight = await cost(n * 5, 0, oneSample);
    const tightBare = await cost(n * 5, 0, bare);
    // A command rule's run: the agent's CPU to start /bin/true and reap it (every 10 s by default).
    const cmd = new HostCommand({ name: "cmd.bench", thresholds: [1, undefined, undefined], smoothing: 0, command: { run: ["/bin/true"], timeout: 5, every: 0.001, user: "nobody" } });
    const runs: number[] = [];
    for (let i = 0; i < (quick ? 10 : 40); i++) {
      const t0 = cpuUs();
      cmd.tick(Date.now() + i * 1000);
      runs.push(cpuUs() - t0);
      await Bun.sleep(30);
    }
    const pct = (us: number, everyS: number) => (us / 1e6 / everyS) * 100;
    const overhead = pct(paced, 1);
    return [
      { name: "one sample of all inputs + judging, paced (CPU per 1 s interval)", value: overhead, unit: "% core", baseline: { name: "one /proc/stat read", value: pct(pacedBare, 1) }, better: "lower", goal: "<= 0.5 % of one core", met: overhead <= 0.5, cpu: `${paced.toFixed(0)} us | ${pacedBare.toFixed(0)} us per sample` },
      { name: "the same, back to back", value: pct(tight, 1), unit: "% core", baseline: { name: "one /proc/stat read", value: pct(tightBare, 1) }, better: "lower", cpu: `${tight.toFixed(0)} us | ${tightBare.toFixed(0)} us per sample` },
      { name: "a cmd rule's start of /bin/true, every 10 s", value: pct(median(runs), 10), unit: "% core", baseline: { name: "sampling, paced", value: overhead }, better: "lower", cpu: `${median(runs).toFixed(0)} us per start` },
    ];
  },
} satisfies Bench;
