/**
 * Issue 36's wide launch: `ebb run -N N true` on `ebb up --nodes N` (N = 256, 1,024), end to end
 * (submit, grant, the step tree, one rank per node, exits, release), against a shell loop that
 * spawns the same N processes (`for i in $(seq N); do /bin/true & done; wait`: /bin/true by its
 * path, so every one is a fork and an exec, never the shell's builtin; each round checks that the
 * kernel's fork count grew by N). Medians of alternating rounds; CPU time beside the wall time,
 * since the 2-core machine is shared and wall time moves with its load: ebb's is the `ebb up`
 * process's (controller, agents and the ranks they reaped) plus `ebb run`'s, counted until the
 * cluster is quiet again (so the agents' clean-up after the job counts too). A second baseline,
 * the contained loop (contained-loop.ts), does per rank what containment must: the job's cgroups
 * made with their limits, the process put in them, the cgroups removed after: the contained
 * machine's speed, which ebb cannot beat with containment as strong.
 */
import { readFileSync } from "node:fs";
import { compiledEbb, startBenchCluster, type BenchCluster } from "./cluster.ts";
import { median, type Bench, type Figure } from "./lib.ts";
import { processTable } from "./proc-cpu.ts";
import { containedLoopScript } from "./contained-loop.ts";

/** Forks since boot (/proc/stat `processes`). */
const forks = (): number => Number(/^processes (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1]);

/** The `ebb up` process of the cluster and its CPU seconds so far (its waited-for children's included). */
function upCpu(c: BenchCluster): number {
  for (const p of processTable().values()) if (p.cmd.includes(" up ") && p.cmd.includes(c.dir)) return p.cpu;
  throw new Error("the bench cluster's ebb up process is gone");
}

/** Waits until `ebb up` uses under 5 % of a core over 300 ms (the agents' clean-up after a job done). */
async function quiet(c: BenchCluster): Promise<void> {
  for (let i = 0, last = upCpu(c); i < 100; i++) {
    await Bun.sleep(300);
    const now = upCpu(c);
    if (now - last < 0.015) return;
    last = now;
  }
}

export interface Round {
  ms: number;
  cpu: number;
  ok: boolean;
}

export async function ebbRound(c: BenchCluster, n: number): Promise<Round> {
  await quiet(c);
  const cpu0 = upCpu(c);
  const t0 = performance.now();
  const p = Bun.spawn([...c.ebb, "run", "-N", String(n), "true"], { env: c.env, stdout: "pipe", stderr: "pipe" });
  const [code, , err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  const ms = performance.now() - t0;
  const usage = p.resourceUsage();
  await quiet(c);
  const cpu = upCpu(c) - cpu0 + (usage ? Number(usage.cpuTime.total) / 1e6 : 0);
  if (code !== 0) process.stderr.write(`  ebb run -N ${n} true failed (${code}): ${err.trim().slice(0, 300)}\n`);
  return { ms, cpu, ok: code === 0 };
}

export async function shellRound(n: number): Promise<Round> {
  const f0 = forks();
  const t0 = performance.now();
  const p = Bun.spawn(["/bin/sh", "-c", `for i in $(seq ${n}); do /bin/true & done; wait`], { stdout: "ignore", stderr: "inherit" });
  const code = await p.exited;
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`the shell loop failed (${code})`);
  if (forks() - f0 < n) throw new Error(`the shell loop forked fewer than ${n} processes`);
  const usage = p.resourceUsage();
  return { ms, cpu: usage ? Number(usage.cpuTime.total) / 1e6 : 0, ok: true };
}

/** A contained-loop round: `ms` until its cgroups are removed, `ranksMs` until its last rank exited (as `ebb run` returns). */
export async function containedRound(n: number, round: number): Promise<(Round & { ranksMs: number }) | undefined> {
  const script = containedLoopScript(n, `ebb-bench-contained-${process.pid}-${round}`);
  if (script === undefined) return undefined;
  const f0 = forks();
  const start = Date.now();
  const t0 = performance.now();
  const p = Bun.spawn(["/bin/bash", "-c", script], { stdout: "pipe", stderr: "pipe" });
  const [code, out] = await Promise.all([p.exited, new Response(p.stdout).text()]);
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`the contained loop failed (${code}): ${(await new Response(p.stderr).text()).trim().slice(0, 300)}`);
  if (forks() - f0 < n) throw new Error(`the contained loop forked fewer than ${n} processes`);
  const usage = p.resourceUsage();
  return { ms, ranksMs: Number(out.trim()) / 1e6 - start, cpu: usage ? Number(usage.cpuTime.total) / 1e6 : 0, ok: true };
}

export default {
  name: "wide-launch",
  description: "ebb run -N N true on ebb up --nodes N (256, 1024) vs a shell loop spawning N /bin/true, and vs one that also makes, joins and removes their cgroups",
  async run({ quick }) {
    const ebb = await compiledEbb();
    const figures: Figure[] = [];
    for (const n of [256, 1024]) {
      const reps = quick ? 3 : n > 256 ? 5 : 7;
      const cluster = await startBenchCluster(n, { ebb });
      try {
        await ebbRound(cluster, n); // warm the page cache and the JITs
        const ours: Round[] = [];
        const shell: Round[] = [];
        const contained: (Round & { ranksMs: number })[] = [];
        for (let r = 0; r < reps; r++) {
          ours.push(await ebbRound(cluster, n));
          shell.push(await shellRound(n));
          const c = await containedRound(n, r);
          if (c) contained.push(c);
        }
        const good = ours.filter((o) => o.ok);
        const value = good.length > 0 ? median(good.map((o) => o.ms)) : Number.NaN;
        const base = median(shell.map((s) => s.ms));
        const perRank = (xs: Round[]) => (xs.length > 0 ? `${((median(xs.map((x) => x.cpu)) / n) * 1000).toFixed(2)} ms` : "-");
        figures.push({
          name: `ebb run -N ${n} true, wall (median of ${good.length} of ${reps} that ran${good.length < reps ? `; ${reps - good.length} failed` : ""})`,
          value,
          unit: "ms",
          baseline: { name: `shell loop, ${n} x /bin/true`, value: base },
          better: "lower",
          goal: "<= 2x the shell loop",
          met: value <= 2 * base,
          cpu: `${perRank(good)} | ${perRank(shell)}`,
        });
        if (contained.length > 0)
          figures.push({
            name: `ebb run -N ${n} true, wall, against the contained machine`,
            value,
            unit: "ms",
            baseline: { name: `contained loop, ${n} x (cgroups made, joined; /bin/true), until the ranks exited (removal after: median ${median(contained.map((c) => c.ms - c.ranksMs)).toFixed(0)} ms more)`, value: median(contained.map((c) => c.ranksMs)) },
            better: "lower",
            cpu: `${perRank(good)} | ${perRank(contained)}`,
          });
        figures.push({
          name: `ebb run -N ${n} true, CPU time (up + run)`,
          value: good.length > 0 ? median(good.map((o) => o.cpu)) * 1000 : Number.NaN,
          unit: "ms",
          baseline: { name: "shell loop's CPU time", value: median(shell.map((s) => s.cpu)) * 1000 },
          better: "lower",
        });
      } finally {
        await cluster.stop();
      }
    }
    return figures;
  },
} satisfies Bench;
