/**
 * Paired A/B of the controller's cost per null job (issue 36): `bun bench/_ab-controller.ts BASE_ROOT
 * [JOBS] [ROUNDS] [env] [NEW_ROOT]` runs, in alternating rounds (ABBA), a controller + 4 agents from
 * BASE_ROOT's src/main.ts and from NEW_ROOT's (default: this checkout), JOBS one-rank `true` jobs each (with a 4.6 KB shell-like
 * environment if "env" is given), and prints per round and as medians: jobs/s, the controller's CPU ms per
 * job, and the bytes it wrote per job. Not a benchmark (run.ts skips files named _*).
 */
import { loadavg } from "node:os";
import { measureTrueJobs } from "./cluster.ts";
import { median } from "./lib.ts";

const base = process.argv[2]!;
const jobs = Number(process.argv[3] ?? 500);
const rounds = Number(process.argv[4] ?? 4);
const withEnv = process.argv[5] === "env";
/** ~4.6 KB like a login shell's environment (paths, names, tokens: it deflates ~2.5x, as this machine's does). */
function shellLikeEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31).toString(36).slice(2);
  for (let i = 0; JSON.stringify(env).length < 4600; i++)
    env[`VAR_${i}_${rand().slice(0, 4).toUpperCase()}`] = i % 4 === 0 ? `/usr/local/${rand()}/bin:/usr/bin:/bin:/opt/${rand()}/sbin` : i % 4 === 1 ? rand() + rand() : `/home/alice/${rand()}/${rand()}`;
  return env;
}
const env = withEnv ? shellLikeEnv() : undefined;
const sides = { base: [process.execPath, `${base}/src/main.ts`], new: [process.execPath, process.argv[6] ? `${process.argv[6]}/src/main.ts` : new URL("../src/main.ts", import.meta.url).pathname] };
const out: Record<string, { rate: number[]; cpu: number[]; agents: number[]; kib: number[] }> = { base: { rate: [], cpu: [], agents: [], kib: [] }, new: { rate: [], cpu: [], agents: [], kib: [] } };
/** `true` spawned `n` times in a row, per second (bench throughput's baseline). */
async function bareSpawn(n: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await Bun.spawn(["true"], { stdio: ["ignore", "ignore", "ignore"] }).exited;
  return n / ((performance.now() - t0) / 1000);
}
const bare: number[] = [];
await measureTrueJobs(4, 100, { layout: "processes", ebb: sides.new });
for (let r = 0; r < rounds; r++) {
  bare.push(await bareSpawn(jobs));
  process.stderr.write(`round ${r + 1} bare spawn: ${bare.at(-1)!.toFixed(0)}/s\n`);
  const order = r % 2 === 0 ? (["base", "new"] as const) : (["new", "base"] as const);
  for (const side of order) {
    const m = await measureTrueJobs(4, jobs, { layout: "processes", ebb: sides[side], fields: env ? { env } : {} });
    const o = out[side]!;
    o.rate.push(m.rate);
    o.cpu.push(((m.cpu.controller ?? 0) * 1000) / jobs);
    o.agents.push(((m.cpu.agents ?? 0) * 1000) / jobs);
    o.kib.push(m.controllerWritten / jobs / 1024);
    process.stderr.write(`round ${r + 1} ${side}: ${m.rate.toFixed(1)} jobs/s, controller ${o.cpu.at(-1)!.toFixed(2)} ms/job, agents ${o.agents.at(-1)!.toFixed(2)} ms/job, wrote ${o.kib.at(-1)!.toFixed(1)} KiB/job; load ${loadavg()[0]!.toFixed(1)}\n`);
  }
}
for (const side of ["base", "new"]) {
  const o = out[side]!;
  process.stderr.write(`${side}: median ${median(o.rate).toFixed(1)} jobs/s = ${(median(o.rate) / median(bare)).toFixed(3)}x bare spawn (${median(bare).toFixed(0)}/s), controller ${median(o.cpu).toFixed(2)} ms/job, agents ${median(o.agents).toFixed(2)} ms/job, wrote ${median(o.kib).toFixed(1)} KiB/job\n`);
}
