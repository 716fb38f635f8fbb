/**
 * A/B of the wide launch: `bun bench/_ab-wide-launch.ts EBB_A EBB_B [N ...] [--reps R]` starts one
 * `ebb up --nodes N` of each binary and alternates, each round, A's `ebb run -N N true`, B's, the
 * shell loop and the contained loop (wide-launch.ts); prints each one's median wall time, its ratio
 * to the same run's shell and contained loops, and the `ebb up` process's open fds.
 */
import { readdirSync } from "node:fs";
import { startBenchCluster, type BenchCluster } from "./cluster.ts";
import { median } from "./lib.ts";
import { containedRound, ebbRound, shellRound, type Round } from "./wide-launch.ts";
import { processTable } from "./proc-cpu.ts";

const argv = process.argv.slice(2);
const repsAt = argv.indexOf("--reps");
const reps = repsAt >= 0 ? Number(argv[repsAt + 1]) : 5;
const rest = argv.filter((a, i) => a !== "--reps" && argv[i - 1] !== "--reps");
const [a, b, ...ns] = rest;
if (!a || !b) throw new Error("usage: bun bench/_ab-wide-launch.ts EBB_A EBB_B [N ...] [--reps R]");

const upPid = (c: BenchCluster) => [...processTable().entries()].find(([, p]) => p.cmd.includes(" up ") && p.cmd.includes(c.dir))?.[0];
const fds = (c: BenchCluster) => {
  const pid = upPid(c);
  return pid === undefined ? -1 : readdirSync(`/proc/${pid}/fd`).length;
};
const load = () => (require("node:os") as typeof import("node:os")).loadavg()[0]!.toFixed(1);
const ms = (xs: Round[]) => median(xs.filter((x) => x.ok).map((x) => x.ms));
const cpu = (xs: Round[], n: number) => ((median(xs.filter((x) => x.ok).map((x) => x.cpu)) / n) * 1000).toFixed(2);

for (const n of (ns.length ? ns : ["256", "1024"]).map(Number)) {
  const ca = await startBenchCluster(n, { ebb: [a] });
  const cb = await startBenchCluster(n, { ebb: [b] });
  try {
    console.log(`N=${n}: fds of ebb up, A ${fds(ca)}, B ${fds(cb)}; load ${load()}`);
    await ebbRound(ca, n);
    await ebbRound(cb, n);
    const ra: Round[] = [], rb: Round[] = [], sh: Round[] = [], co: (Round & { ranksMs: number })[] = [];
    const loads: string[] = [];
    for (let r = 0; r < reps; r++) {
      const first = r % 2 === 0 ? [ca, ra] : [cb, rb];
      const second = r % 2 === 0 ? [cb, rb] : [ca, ra];
      (first[1] as Round[]).push(await ebbRound(first[0] as BenchCluster, n));
      (second[1] as Round[]).push(await ebbRound(second[0] as BenchCluster, n));
      sh.push(await shellRound(n));
      const c = await containedRound(n, r);
      if (c) co.push(c);
      loads.push(load());
      const perRank = (x: Round) => ((x.cpu / n) * 1000).toFixed(2);
      console.log(`  round ${r}: A ${ra.at(-1)!.ms.toFixed(0)}${ra.at(-1)!.ok ? "" : " FAILED"} (cpu/rank ${perRank(ra.at(-1)!)}) B ${rb.at(-1)!.ms.toFixed(0)}${rb.at(-1)!.ok ? "" : " FAILED"} (cpu/rank ${perRank(rb.at(-1)!)}) shell ${sh.at(-1)!.ms.toFixed(0)} contained ${c?.ranksMs.toFixed(0)} (+ removal ${c && (c.ms - c.ranksMs).toFixed(0)}) ms; load ${load()}`);
    }
    const s = ms(sh), k = median(co.map((c) => c.ranksMs));
    for (const [name, xs] of [["A", ra], ["B", rb]] as const)
      console.log(`N=${n} ${name}: ${ms(xs).toFixed(0)} ms (${xs.filter((x) => x.ok).length}/${reps} ok) = ${(ms(xs) / s).toFixed(2)}x shell (${s.toFixed(0)} ms), ${(ms(xs) / k).toFixed(2)}x contained until its ranks exited (${k.toFixed(0)} ms; ${ms(co).toFixed(0)} with the cgroups' removal); cpu/rank ${cpu(xs, n)} ms (shell ${cpu(sh, n)}, contained ${cpu(co, n)})`);
    console.log(`N=${n}: fds after, A ${fds(ca)}, B ${fds(cb)}; loads ${loads.join(" ")}`);
  } finally {
    await ca.stop();
    await cb.stop();
  }
}
process.exit(0);
