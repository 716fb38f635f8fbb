/**
 * Profiling aid, not a benchmark (run.ts skips files starting with "_"): where the CPU goes while
 * a throughput trial runs watched or not. `bun bench/_watchcpu.ts JOBS MODES` with MODES a comma
 * list of plain (unwatched), dash (dashboard open), metrics (/metrics scraped every second),
 * watched (both), idle (the dashboard open on a cluster where nothing happens, for JOBS seconds). Prints jobs/s and CPU seconds per process kind (browser split by process type).
 * PROFILE=1: a CPU profile of the page (/tmp/ebb-watchcpu/prof-MODE.cpuprofile); TRACE=1: a
 * Chrome trace of it; CPROF=1: Bun CPU profiles of the controller and agents.
 */
import { mkdirSync } from "node:fs";
import { runTrueJobs, startBenchCluster } from "./cluster.ts";
import { launchBrowser, openDashboard, scrapeMetrics } from "./observers.ts";
import { byRole, cpuSince, cpuSnapshot } from "./proc-cpu.ts";

const OUT = "/tmp/ebb-watchcpu";
mkdirSync(OUT, { recursive: true });
const kind = (cmd: string) => {
  const k = byRole(cmd);
  const type = /--type=([\w-]+)/.exec(cmd)?.[1];
  return k === "browser" && type ? `browser:${type}` : k;
};

const jobs = Number(process.argv[2] ?? 300);
const modes = (process.argv[3] ?? "plain,watched").split(",");
const MAIN = new URL("../src/main.ts", import.meta.url).pathname;
const browser = await launchBrowser();
for (const mode of modes) {
  const ebb = process.env.CPROF ? [process.execPath, "--cpu-prof", `--cpu-prof-dir=${OUT}/cprof-${mode}`, MAIN] : undefined;
  const cluster = await startBenchCluster(4, { layout: "processes", ebb });
  const { url, token } = cluster;
  const dash = mode === "dash" || mode === "watched" || mode === "idle" ? await openDashboard(browser, url, token) : undefined;
  const scraper = mode === "metrics" || mode === "watched" ? scrapeMetrics(url, token) : undefined;
  if (dash && process.env.TRACE) await dash.page.tracing.start({ path: `${OUT}/trace-${mode}.json` });
  const cdp = dash && process.env.PROFILE ? await dash.page.createCDPSession() : undefined;
  if (cdp) {
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.start");
  }
  const cpu0 = cpuSnapshot(kind);
  const t0 = Date.now();
  // idle: the dashboard open on a cluster where nothing happens, for JOBS seconds.
  if (mode === "idle") await Bun.sleep(jobs * 1000);
  else await runTrueJobs(cluster, jobs);
  const wall = (Date.now() - t0) / 1000;
  const cpu = cpuSince(cpu0, cpuSnapshot(kind));
  if (dash && process.env.TRACE) await dash.page.tracing.stop();
  if (cdp) await Bun.write(`${OUT}/prof-${mode}.cpuprofile`, JSON.stringify((await cdp.send("Profiler.stop")).profile));
  const n = await scraper?.stop();
  await dash?.page.close();
  await cluster.stop();
  const text = Object.entries(cpu).sort().map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ");
  console.log(`${mode}: ${(jobs / wall).toFixed(1)} jobs/s, wall ${wall.toFixed(1)} s; CPU s: ${text}${n !== undefined ? `; ${n} scrapes` : ""}`);
}
await browser.close();
process.exit(0);
