/**
 * Job throughput: 1,000 one-rank `true` jobs submitted over HTTP to a local 4-node cluster (a
 * fresh one per trial). Reports jobs/s from first submit to last completion and submit latency
 * p50/p99. Baseline, same run: this process starting `true` 1,000 times in a row. Rates are the
 * median of 6 trials (2 with --quick), taken in rounds that alternate the layouts and the
 * baseline: on a shared 2-core VM one trial moves by ±20%. The controller-and-agents layout also
 * runs watched: the dashboard open in headless Chromium (live over its event stream) and /metrics
 * scraped every second; its rate is given as a ratio to the unwatched one, both as the ratio of
 * the medians and as the median of each round's own ratio, with their spread, and the CPU that
 * watching cost. The browser is open (idle) during the unwatched trials too: the same processes on
 * both sides. Each trial starts once the previous cluster is wholly gone (bench/cluster.ts
 * `settle`: its agents' sentinels outlive them), after one uncounted warm-up trial; watched and
 * unwatched take turns for the first place of a round (ABBA). ebb's own cost per null job (issue
 * 36), from the unwatched controller-and-agents trials: the CPU time of the controller and of the
 * agents (/proc stat, the agents' with the jobs' `true`), against the bare spawn's own (parent and
 * child), and the scheduling passes per job (/metrics: a count that load does not blur), also for
 * jobs of an ordinary user (run as root, each round adds a trial whose jobs the root agents drop to that user, as they do every job of a lab's users; the other trials' jobs are
 * root's, which skip the drop); and the bytes the controller wrote to storage (/proc io write_bytes), against the size
 * of its database once closed. The rate and the CPU figures twice: over a fresh cluster's first
 * 1,000 jobs (cold: the controller's JIT still warming up, ~0.6-1.5 ms a job more) and over the
 * next 1,000 on the same cluster (warm), each against the same bare-spawn baseline. Where the time goes:
 * bench/_profile-null-jobs.ts.
 */
import { loadavg } from "node:os";
import { bareSpawn, measureTrueJobs, type TrueJobsRun } from "./cluster.ts";
import { median, percentile, type Bench, type Figure } from "./lib.ts";
import { launchBrowser, openDashboard, scrapeMetrics } from "./observers.ts";
import { ensureUser } from "../test/support/users.ts";

type Browser = Awaited<ReturnType<typeof launchBrowser>>;

function measure(jobs: number, layout: "up" | "processes", watch?: Browser, warm = false, user?: string): Promise<TrueJobsRun> {
  return measureTrueJobs(4, jobs, {
    layout,
    warm,
    user,
    during: watch
      ? async ({ url, token }) => {
          const dashboard = await openDashboard(watch, url, token);
          const scraper = scrapeMetrics(url, token);
          return async () => {
            await scraper.stop();
            await dashboard.page.close();
          };
        }
      : undefined,
  });
}

/** Quartiles of xs: [q1, q3] (linear interpolation). */
function quartiles(xs: number[]): [number, number] {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => {
    const i = (s.length - 1) * q;
    const lo = Math.floor(i);
    return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (i - lo);
  };
  return [at(0.25), at(0.75)];
}

const load = () => loadavg()[0]!;

/**
 * Whose jobs the user trials run: an ordinary Unix user's (made if need be), whom a root agent drops
 * each job to, as it does for every job of a lab's users. The other trials submit with the
 * cluster's own token, whose jobs run as root and skip the drop. Not root: no user trials (every job
 * runs as the agents' own user).
 */
const BENCH_USER = "ebbt_bench";

export default {
  name: "throughput",
  description: "1,000 one-rank `true` jobs through the HTTP API on a local 4-node cluster",
  async run({ quick }) {
    const jobs = quick ? 200 : 1000;
    const trials = quick ? 2 : 6;
    const layouts = ["processes", "up"] as const;
    // Rounds of one bare-spawn run and one trial per layout, so that the VM's drift in speed
    // (±20% within a minute here) falls on the baseline and on both layouts alike.
    const bares: number[] = [];
    const bareCpu: number[] = [];
    const bareParentCpu: number[] = [];
    // Per job, controller + agents unwatched: bytes the controller wrote, and its database's size.
    const written: number[] = [];
    const dbSize: number[] = [];
    const runs = new Map(layouts.map((l) => [l, { rates: [] as number[], latencies: [] as number[] }]));
    const watched: number[] = [];
    // CPU seconds per trial by process kind, unwatched and watched (controller + agents layout).
    const cpuPlain: Record<string, number>[] = [];
    // The same over the next `jobs` jobs of each unwatched cluster (warm).
    const cpuWarm: Record<string, number>[] = [];
    const warmRates: number[] = [];
    // Scheduling passes per job, fresh and warm: a count that says whether a change saved passes.
    const passesPlain: number[] = [];
    const passesWarm: number[] = [];
    const cpuWatched: Record<string, number>[] = [];
    // The same per second of trial: what a watcher costs goes with time more than with jobs.
    const perSecond: Record<string, number>[] = [];
    const loads: number[] = [load()];
    // The controller + agents layout again, each job an ordinary user's (`BENCH_USER`).
    const asUser = process.getuid?.() === 0;
    if (asUser) ensureUser(BENCH_USER);
    const userRates: number[] = [];
    const cpuUser: Record<string, number>[] = [];
    const browser = await launchBrowser();
    try {
      // A warm-up, not counted: the first cluster, page and browser tab of a run start cold.
      await measure(Math.min(jobs, 200), "processes", browser);
      for (let t = 0; t < trials; t++) {
        const bare = await bareSpawn(jobs);
        bares.push(bare.rate);
        bareCpu.push(bare.cpu);
        bareParentCpu.push(bare.parent);
        // `ebb up` first: the controller + agents trials, watched and not, never follow the
        // bare-spawn run, and take turns (ABBA over two rounds) for the places after it.
        const up = await measure(jobs, "up");
        runs.get("up")!.rates.push(up.rate);
        runs.get("up")!.latencies.push(...up.latencies);
        const plain = async () => {
          const m = await measure(jobs, "processes", undefined, true);
          runs.get("processes")!.rates.push(m.rate);
          runs.get("processes")!.latencies.push(...m.latencies);
          cpuPlain.push(m.cpu);
          cpuWarm.push(m.warm!.cpu);
          warmRates.push(m.warm!.rate);
          passesPlain.push(m.passes / jobs);
          passesWarm.push(m.warm!.passes / jobs);
          written.push(m.controllerWritten / jobs);
          // Its database holds both batches.
          dbSize.push(m.dbBytes / (2 * jobs));
        };
        const watch = async () => {
          const m = await measure(jobs, "processes", browser);
          watched.push(m.rate);
          cpuWatched.push(m.cpu);
          perSecond.push(Object.fromEntries(Object.entries(m.cpu).map(([k, v]) => [k, v / m.seconds])));
        };
        for (const f of t % 2 === 0 ? [watch, plain] : [plain, watch]) await f();
        if (asUser) {
          const m = await measure(jobs, "processes", undefined, false, BENCH_USER);
          userRates.push(m.rate);
          cpuUser.push(m.cpu);
        }
        loads.push(load());
        const w = watched.at(-1)!, p = runs.get("processes")!.rates.at(-1)!;
        process.stderr.write(`  round ${t + 1}/${trials} (${t % 2 === 0 ? "watched first" : "unwatched first"}): bare ${bares.at(-1)!.toFixed(0)}/s, up ${up.rate.toFixed(1)}, unwatched ${p.toFixed(1)}, watched ${w.toFixed(1)} jobs/s = ${(w / p).toFixed(2)}x; load average ${loads.at(-1)!.toFixed(1)}\n`);
      }
    } finally {
      await browser.close();
    }
    const baseline = { name: "bare spawn of `true` in a loop", value: median(bares) };
    process.stderr.write(`  bare spawn: ${bares.map((r) => r.toFixed(0)).join(", ")} /s\n`);
    const figures: Figure[] = [];
    // A rate against the bare spawn, with the issue's goal.
    const rateFigure = (name: string, value: number): Figure => ({ name: `${name}${trials > 1 ? `, median of ${trials}` : ""}`, value, unit: "jobs/s", baseline, better: "higher", goal: ">= 0.5x bare spawn, then >= 500 jobs/s", met: value >= 0.5 * baseline.value && value >= 500 });
    for (const layout of layouts) {
      const { rates, latencies } = runs.get(layout)!;
      const rate = median(rates);
      const where = layout === "up" ? "`ebb up` (one process)" : "controller + 4 agent processes";
      process.stderr.write(`  ${where}: ${rates.map((r) => r.toFixed(1)).join(", ")} jobs/s\n`);
      figures.push(
        rateFigure(`${jobs} jobs, ${where}`, rate),
        { name: `submit latency p50, ${where}`, value: percentile(latencies, 50), unit: "ms", better: "lower" },
        { name: `submit latency p99, ${where}`, value: percentile(latencies, 99), unit: "ms", better: "lower" },
      );
    }
    // The same layout over each cluster's next `jobs` jobs: its processes' JIT warmed by the first.
    figures.push(rateFigure(`${jobs} jobs, controller + 4 agent processes, the next ${jobs} on the same cluster (warm)`, median(warmRates)));
    const plainRates = runs.get("processes")!.rates;
    const plain = median(plainRates);
    const seen = median(watched);
    const iqr = (xs: number[], digits = 1) => quartiles(xs).map((q) => q.toFixed(digits)).join("–");
    process.stderr.write(`  watched (dashboard + /metrics every second): ${watched.map((r) => r.toFixed(1)).join(", ")} jobs/s\n`);
    process.stderr.write(`  watched / unwatched, ratio of medians: ${(seen / plain).toFixed(3)}x (watched ${seen.toFixed(1)} [IQR ${iqr(watched)}], unwatched ${plain.toFixed(1)} [IQR ${iqr(plainRates)}] jobs/s)\n`);
    // The same, paired: each round's watched rate over its own unwatched one (the VM's drift
    // between rounds cancels out), median over the rounds.
    const paired = watched.map((w, i) => w / plainRates[i]!);
    process.stderr.write(`  watched / unwatched per round: ${paired.map((r) => r.toFixed(3)).join(", ")}; median ${median(paired).toFixed(3)}x, IQR ${iqr(paired, 3)}, range ${Math.min(...paired).toFixed(3)}–${Math.max(...paired).toFixed(3)}\n`);
    const kinds = ["controller", "agents", "browser"];
    const cpuMed = (xs: Record<string, number>[], k: string) => median(xs.map((x) => x[k] ?? 0));
    const cpuText = (xs: Record<string, number>[]) => kinds.map((k) => `${k} ${cpuMed(xs, k).toFixed(2)} s`).join(", ");
    process.stderr.write(`  CPU per trial (median), unwatched: ${cpuText(cpuPlain)}; watched: ${cpuText(cpuWatched)}\n`);
    const own = cpuMed(cpuPlain, "controller") + cpuMed(cpuPlain, "agents");
    const cost = kinds.map((k) => cpuMed(cpuWatched, k) - cpuMed(cpuPlain, k));
    process.stderr.write(`  CPU of watching per ${jobs} jobs (medians, watched − unwatched): ${kinds.map((k, i) => `${k} ${cost[i]! >= 0 ? "+" : ""}${cost[i]!.toFixed(2)} s`).join(", ")} = ${((cost.reduce((a, b) => a + b, 0) / own) * 100).toFixed(1)}% of the cluster's own ${own.toFixed(1)} s\n`);
    process.stderr.write(`  browser's CPU while watching (median): ${(cpuMed(perSecond, "browser") * 1000).toFixed(0)} ms per second of trial\n`);
    process.stderr.write(`  load average (1 min) at the start and after each round: ${loads.map((l) => l.toFixed(1)).join(", ")}\n`);
    // ebb's own cost per null job (issue 36), controller + 4 agent processes, unwatched: CPU by
    // role (the agents' includes the jobs' own `true`, as the baseline's includes its child's),
    // against a bare spawn's; and what the controller wrote to disk, against what its database keeps.
    const bareCpuPerJob = { name: "bare spawn of `true` (parent + child)", value: median(bareCpu) * 1000 };
    for (const [when, runsCpu] of [[`jobs 1-${jobs} of a fresh cluster`, cpuPlain], [`jobs ${jobs + 1}-${2 * jobs} (warm)`, cpuWarm]] as const)
      for (const k of ["controller", "agents"]) {
        const ms = (cpuMed(runsCpu, k) * 1000) / jobs;
        figures.push({ name: `CPU per null job, ${k === "controller" ? "controller" : "4 agents"}, ${when}${trials > 1 ? `, median of ${trials}` : ""}`, value: ms, unit: "ms", baseline: bareCpuPerJob, better: "lower", goal: "<= 1 ms", met: ms <= 1 });
      }
    if (asUser) {
      figures.push(rateFigure(`${jobs} jobs of an ordinary user (${BENCH_USER}), controller + 4 agent processes`, median(userRates)));
      for (const k of ["controller", "agents"]) {
        const ms = (cpuMed(cpuUser, k) * 1000) / jobs;
        figures.push({ name: `CPU per null job of an ordinary user, ${k === "controller" ? "controller" : "4 agents"}, jobs 1-${jobs} of a fresh cluster${trials > 1 ? `, median of ${trials}` : ""}`, value: ms, unit: "ms", baseline: bareCpuPerJob, better: "lower", goal: "<= 1 ms", met: ms <= 1 });
      }
      process.stderr.write(`  controller + 4 agent processes, jobs of ${BENCH_USER}: ${userRates.map((r) => r.toFixed(1)).join(", ")} jobs/s; CPU per trial (median): ${cpuText(cpuUser)}\n`);
    } else process.stderr.write("  no trials of an ordinary user's jobs: the bench does not run as root, so every job runs as the agents' own user\n");
    // ebb's own share of the agents' CPU: without the processes they waited for (the jobs' own
    // programs, and for a user's job the shell the job's user runs first), against the spawner's
    // own share of a bare spawn; `true`'s own exec, which no agent can save, is then out of both.
    const bareParent = { name: "bare spawn of `true`, the spawner's own CPU (without the child's)", value: median(bareParentCpu) * 1000 };
    const ownRuns: [string, Record<string, number>[]][] = [["root's", cpuPlain], ...(asUser ? [["an ordinary user's", cpuUser] as [string, Record<string, number>[]]] : [])];
    for (const [who, runsCpu] of ownRuns) {
      const ms = (cpuMed(runsCpu, "agents own") * 1000) / jobs;
      figures.push({ name: `CPU per null job of ${who}, 4 agents' own (without the processes they waited for), jobs 1-${jobs} of a fresh cluster${trials > 1 ? `, median of ${trials}` : ""}`, value: ms, unit: "ms", baseline: bareParent, better: "lower", goal: "<= 1 ms", met: ms <= 1 });
    }
    process.stderr.write(`  scheduling passes per job, unwatched: fresh ${passesPlain.map((x) => x.toFixed(2)).join(", ")} (median ${median(passesPlain).toFixed(2)}); warm ${passesWarm.map((x) => x.toFixed(2)).join(", ")} (median ${median(passesWarm).toFixed(2)})\n`);
    process.stderr.write(`  controller + 4 agent processes, jobs ${jobs + 1}-${2 * jobs} of each unwatched cluster: ${warmRates.map((r) => r.toFixed(1)).join(", ")} jobs/s; CPU per trial (median): ${cpuText(cpuWarm)}\n`);
    const kib = median(written) / 1024;
    figures.push({ name: `disk written per job by the controller (/proc io write_bytes)${trials > 1 ? `, median of ${trials}` : ""}`, value: kib, unit: "KiB", baseline: { name: "its database's size per job, closed", value: median(dbSize) / 1024 }, better: "lower", goal: "<= 16 KiB", met: kib <= 16 });
    process.stderr.write(`  controller wrote per job: ${written.map((w) => (w / 1024).toFixed(1)).join(", ")} KiB; database per job ${dbSize.map((w) => (w / 1024).toFixed(2)).join(", ")} KiB\n`);
    figures.push({
      name: `${jobs} jobs, controller + 4 agent processes, dashboard open and /metrics scraped every second${trials > 1 ? `, median of ${trials}` : ""}`,
      value: seen,
      unit: "jobs/s",
      baseline: { name: "the same, unwatched", value: plain },
      better: "higher",
      goal: ">= 0.95x unwatched",
      met: seen >= 0.95 * plain,
    });
    figures.push({ name: `watched / unwatched, per round${trials > 1 ? `, median of ${trials} (IQR ${iqr(paired, 2)})` : ""}`, value: median(paired), unit: "x", better: "higher", goal: ">= 0.95", met: median(paired) >= 0.95 });
    figures.push({ name: `CPU of watching, controller + browser, per ${jobs} jobs (median watched − unwatched)`, value: cost[0]! + cost[2]!, unit: "s", baseline: { name: "the cluster's own CPU, unwatched", value: own }, better: "lower" });
    return figures;
  },
} satisfies Bench;
