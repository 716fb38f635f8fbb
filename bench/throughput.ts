/**
 * Job throughput: 1,000 one-rank `true` jobs submitted over HTTP to a local 4-node cluster (a
 * fresh one per trial). Reports jobs/s from first submit to last completion and submit latency
 * p50/p99. Baseline, same run: this process starting `true` 1,000 times in a row. Rates are the
 * median of 6 trials (2 with --quick), taken in rounds that alternate the layouts and the
 * baseline: on a shared 2-core VM one trial moves by ±20%. The controller-and-agents layout also
 * runs watched: the dashboard open in headless Chromium (live over its event stream) and /metrics
 * scraped every second; its rate is given as a ratio to the unwatched one of the same rounds.
 */
import { startBenchCluster } from "./cluster.ts";
import { median, percentile, type Bench, type Figure } from "./lib.ts";
import { launchBrowser, openDashboard, scrapeMetrics } from "./observers.ts";
import { cpuSince, cpuSnapshot } from "./proc-cpu.ts";

async function bareSpawnRate(n: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await Bun.spawn(["true"], { stdio: ["ignore", "ignore", "ignore"] }).exited;
  return n / ((performance.now() - t0) / 1000);
}

type Browser = Awaited<ReturnType<typeof launchBrowser>>;

async function measure(jobs: number, layout: "up" | "processes", watch?: Browser): Promise<{ rate: number; latencies: number[]; cpu: Record<string, number> }> {
  const cluster = await startBenchCluster(4, { layout });
  const { url, token, dir } = cluster;
  const dashboard = watch ? await openDashboard(watch, url, token) : undefined;
  const scraper = watch ? scrapeMetrics(url, token) : undefined;
  try {
      const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
      const body = JSON.stringify({ argv: ["true"], cwd: dir, output: "/dev/null" });
      const latencies: number[] = [];
      const cpu0 = cpuSnapshot();
      const first = Date.now();
      let next = 0;
      const submitter = async () => {
        while (next < jobs) {
          next++;
          const t = performance.now();
          const res = await fetch(`${url}/v1/jobs`, { method: "POST", headers, body });
          latencies.push(performance.now() - t);
          if (res.status !== 201) throw new Error(`submit failed: ${res.status} ${await res.text()}`);
        }
      };
      await Promise.all(Array.from({ length: 8 }, submitter));
      // Poll the cheap health counter until no job is active, then read the end times once.
      while (((await (await fetch(`${url}/v1/health`)).json()) as { jobs: number }).jobs > 0) await Bun.sleep(50);
      const cpu = cpuSince(cpu0);
      const res = (await (await fetch(`${url}/v1/jobs?limit=${jobs}`, { headers })).json()) as { jobs: { state: string; endTime: string | null }[] };
      const bad = res.jobs.filter((j) => j.state !== "COMPLETED").length;
      if (bad > 0 || res.jobs.length !== jobs) throw new Error(`${bad} of ${res.jobs.length} jobs did not complete`);
      const last = Math.max(...res.jobs.map((j) => Date.parse(j.endTime!)));
      return { rate: jobs / ((last - first) / 1000), latencies, cpu };
  } finally {
    await scraper?.stop();
    await dashboard?.page.close();
    await cluster.stop();
  }
}

export default {
  name: "throughput",
  description: "1,000 one-rank `true` jobs through the HTTP API on a local 4-node cluster",
  async run({ quick }) {
    const jobs = quick ? 200 : 1000;
    // An even number of rounds: the trial right after the bare-spawn run is the fast one of a
    // round, and the watched trial takes that place in every other round.
    const trials = quick ? 2 : 6;
    const layouts = ["processes", "up"] as const;
    // Rounds of one bare-spawn run and one trial per layout, so that the VM's drift in speed
    // (±20% within a minute here) falls on the baseline and on both layouts alike.
    const bares: number[] = [];
    const runs = new Map(layouts.map((l) => [l, { rates: [] as number[], latencies: [] as number[] }]));
    const watched: number[] = [];
    // CPU seconds per trial by process kind, unwatched and watched (controller + agents layout).
    const cpuPlain: Record<string, number>[] = [];
    const cpuWatched: Record<string, number>[] = [];
    const browser = await launchBrowser();
    try {
      for (let t = 0; t < trials; t++) {
        bares.push(await bareSpawnRate(jobs));
        // The watched trial goes before the unwatched one in every other round, so that a drift
        // in the VM's speed within a round does not always favour the same side.
        const watch = async () => {
          const m = await measure(jobs, "processes", browser);
          watched.push(m.rate);
          cpuWatched.push(m.cpu);
        };
        if (t % 2 === 1) await watch();
        for (const layout of layouts) {
          const m = await measure(jobs, layout);
          runs.get(layout)!.rates.push(m.rate);
          runs.get(layout)!.latencies.push(...m.latencies);
          if (layout === "processes") cpuPlain.push(m.cpu);
        }
        if (t % 2 === 0) await watch();
      }
    } finally {
      await browser.close();
    }
    const baseline = { name: "bare spawn of `true` in a loop", value: median(bares) };
    process.stderr.write(`  bare spawn: ${bares.map((r) => r.toFixed(0)).join(", ")} /s\n`);
    const figures: Figure[] = [];
    for (const layout of layouts) {
      const { rates, latencies } = runs.get(layout)!;
      const rate = median(rates);
      const where = layout === "up" ? "`ebb up` (one process)" : "controller + 4 agent processes";
      process.stderr.write(`  ${where}: ${rates.map((r) => r.toFixed(1)).join(", ")} jobs/s\n`);
      figures.push(
        { name: `${jobs} jobs, ${where}${trials > 1 ? `, median of ${trials}` : ""}`, value: rate, unit: "jobs/s", baseline, better: "higher", goal: ">= 500 jobs/s", met: rate >= 500 },
        { name: `submit latency p50, ${where}`, value: percentile(latencies, 50), unit: "ms", better: "lower" },
        { name: `submit latency p99, ${where}`, value: percentile(latencies, 99), unit: "ms", better: "lower" },
      );
    }
    const plain = median(runs.get("processes")!.rates);
    const seen = median(watched);
    process.stderr.write(`  watched (dashboard + /metrics every second): ${watched.map((r) => r.toFixed(1)).join(", ")} jobs/s\n`);
    const cpuText = (xs: Record<string, number>[]) =>
      ["controller", "agents", "browser"].map((k) => `${k} ${median(xs.map((x) => x[k] ?? 0)).toFixed(2)} s`).join(", ");
    process.stderr.write(`  CPU per trial (median), unwatched: ${cpuText(cpuPlain)}; watched: ${cpuText(cpuWatched)}\n`);
    figures.push({
      name: `${jobs} jobs, controller + 4 agent processes, dashboard open and /metrics scraped every second${trials > 1 ? `, median of ${trials}` : ""}`,
      value: seen,
      unit: "jobs/s",
      baseline: { name: "the same, unwatched", value: plain },
      better: "higher",
      goal: ">= 0.95x unwatched",
      met: seen >= 0.95 * plain,
    });
    // The same, paired: each round's watched rate over its own unwatched one (the VM's drift
    // between rounds cancels out), median over the rounds.
    const paired = watched.map((w, i) => w / runs.get("processes")!.rates[i]!);
    process.stderr.write(`  watched / unwatched per round: ${paired.map((r) => r.toFixed(2)).join(", ")}\n`);
    figures.push({ name: `watched / unwatched, per round${trials > 1 ? `, median of ${trials}` : ""}`, value: median(paired), unit: "x", better: "higher", goal: ">= 0.95", met: median(paired) >= 0.95 });
    return figures;
  },
} satisfies Bench;
