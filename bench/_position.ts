/**
 * Profiling aid, not a benchmark: why the trial right after the bare-spawn run is the fast one of
 * a round. `bun bench/_position.ts JOBS STEPS`, STEPS a comma list of p (a controller + 4 agents
 * trial), w (the same, watched), bare (1,000 spawns of `true`), sleepN (N s idle), sync (sync(1)).
 * Per trial: jobs/s, CPU seconds per process kind, the machine's busy share, sectors written.
 */
import { readdirSync, readFileSync } from "node:fs";
import { startBenchCluster } from "./cluster.ts";
import { launchBrowser, openDashboard, scrapeMetrics } from "./observers.ts";
import { cpuSince, cpuSnapshot } from "./proc-cpu.ts";

const jobs = Number(process.argv[2] ?? 300);
const steps = (process.argv[3] ?? "p,p,bare,p,p").split(",");
const stat = () => {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.split(/\s+/).slice(1).map(Number);
  return { busy: f[0]! + f[1]! + f[2]! + f[5]! + f[6]!, all: f.reduce((a, b) => a + b, 0), iowait: f[4]!, steal: f[7]! };
};
const written = () => readFileSync("/proc/diskstats", "utf8").split("\n").filter((l) => / vda /.test(l)).map((l) => Number(l.trim().split(/\s+/)[9]))[0] ?? 0;
const browser = await launchBrowser();
for (const step of steps) {
  if (step === "bare") {
    const t0 = performance.now();
    for (let i = 0; i < 1000; i++) await Bun.spawn(["true"], { stdio: ["ignore", "ignore", "ignore"] }).exited;
    console.log(`bare: ${(1000 / ((performance.now() - t0) / 1000)).toFixed(0)}/s in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    continue;
  }
  if (step.startsWith("sleep")) {
    await Bun.sleep(Number(step.slice(5)) * 1000);
    console.log(step);
    continue;
  }
  if (step === "sync") {
    const t0 = performance.now();
    await Bun.spawn(["sync"]).exited;
    console.log(`sync: ${(performance.now() - t0).toFixed(0)} ms`);
    continue;
  }
  const cluster = await startBenchCluster(4, { layout: "processes" });
  const { url, token, dir } = cluster;
  const dash = step === "w" ? await openDashboard(browser, url, token) : undefined;
  const scraper = step === "w" ? scrapeMetrics(url, token) : undefined;
  const s0 = stat();
  const w0 = written();
  const cpu0 = cpuSnapshot();
  const t0 = Date.now();
  const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
  const body = JSON.stringify({ argv: ["true"], cwd: dir, output: "/dev/null" });
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < jobs) {
        next++;
        const res = await fetch(`${url}/v1/jobs`, { method: "POST", headers, body });
        if (res.status !== 201) throw new Error(`submit: ${res.status}`);
      }
    }),
  );
  while (((await (await fetch(`${url}/v1/health`)).json()) as { jobs: number }).jobs > 0) await Bun.sleep(50);
  const wall = (Date.now() - t0) / 1000;
  const cpu = cpuSince(cpu0);
  const s1 = stat();
  const w1 = written();
  await scraper?.stop();
  await dash?.page.close();
  const records = [1, 2, 3, 4].map((i) => { try { return readFileSync(`${dir}/agents/node0${i}/process-groups`, "utf8").split("\n").length - 1; } catch { return -1; } });
  const st0 = performance.now();
  await cluster.stop();
  const stopped = performance.now() - st0;
  // What is left of the cluster after stop (the agents' sentinels, reparented to init): how long, how much CPU.
  const left = () => readdirSync("/proc").filter((d) => /^\d+$/.test(d)).filter((d) => { try { return readFileSync(`/proc/${d}/cmdline`, "utf8").includes(dir); } catch { return false; } });
  let n = left().length, waited = 0;
  const s2 = stat();
  while (left().length > 0 && waited < 120_000) { await Bun.sleep(100); waited += 100; }
  const s3 = stat();
  console.log(`  records ${records.join(",")} lines; stop ${stopped.toFixed(0)} ms; ${n} leftover processes gone after ${(waited / 1000).toFixed(1)} s; machine busy meanwhile ${(((s3.busy - s2.busy) / Math.max(1, s3.all - s2.all)) * 100).toFixed(0)}%`);
  const text = Object.entries(cpu).sort().map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ");
  const busy = (s1.busy - s0.busy) / (s1.all - s0.all);
  console.log(`${step}: ${(jobs / wall).toFixed(1)} jobs/s, wall ${wall.toFixed(1)} s; CPU s: ${text}; machine busy ${(busy * 100).toFixed(0)}%, steal ${(((s1.steal - s0.steal) / (s1.all - s0.all)) * 100).toFixed(0)}%, iowait ${(s1.iowait - s0.iowait)} ticks, ${((w1 - w0) / 2048).toFixed(1)} MB written; load ${readFileSync("/proc/loadavg", "utf8").split(" ")[0]}`);
}
await browser.close();
process.exit(0);
