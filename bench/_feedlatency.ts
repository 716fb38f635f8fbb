/// <reference lib="dom" />
/**
 * Profiling aid, not a benchmark (run.ts skips files starting with "_"): how long after a job
 * ended on the controller the dashboard has DRAWN it ended (its band closed in the canvas's
 * `drawing`), while the cluster is busy (8 clients keep submitting `true` jobs) or quiet.
 * `bun bench/_feedlatency.ts PROBES [quiet|busy]`: prints each probe's latency and the median and
 * maximum. The issue asks for "updates within 2 s".
 */
import { startBenchCluster } from "./cluster.ts";
import { launchBrowser, openDashboard } from "./observers.ts";

const probes = Number(process.argv[2] ?? 20);
const busy = (process.argv[3] ?? "busy") === "busy";
const browser = await launchBrowser();
const cluster = await startBenchCluster(4, { layout: "processes" });
const { url, token, dir } = cluster;
const { page } = await openDashboard(browser, url, token);
const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
const submit = async (argv: string[]) => {
  const res = await fetch(`${url}/v1/jobs`, { method: "POST", headers, body: JSON.stringify({ argv, cwd: dir, output: "/dev/null" }) });
  if (res.status !== 201) throw new Error(`submit: ${res.status}`);
  return ((await res.json()) as { id: number }).id;
};
let stop = false;
// Busy: keep about 16 jobs queued (not thousands: a probe would wait behind them).
const churn = busy
  ? Array.from({ length: 4 }, async () => {
      while (!stop) {
        const h = (await (await fetch(`${url}/v1/health`)).json()) as { jobs: number };
        if (h.jobs < 16) await submit(["true"]);
        else await Bun.sleep(20);
      }
    })
  : [];
const lat: number[] = [];
for (let i = 0; i < probes; i++) {
  await Bun.sleep(700 + Math.random() * 1600);
  const id = await submit(["sleep", "0.2"]);
  // Drawn ended: every band of the job in the last paint is closed.
  const drawn = page.waitForFunction(
    (job) => {
      const d = (document.getElementById("timeline-plot") as (HTMLCanvasElement & { drawing?: { bands: { job: number; open: boolean }[] } }) | null)?.drawing;
      const b = d?.bands.filter((x) => x.job === job) ?? [];
      return b.length > 0 && b.every((x) => !x.open) ? Date.now() : undefined;
    },
    { polling: 10, timeout: 60_000 },
    id,
  );
  const seen = (await (await drawn).jsonValue()) as number;
  const job = (await (await fetch(`${url}/v1/jobs/${id}`, { headers })).json()) as { endTime: string | null };
  const ms = seen - Date.parse(job.endTime!);
  lat.push(ms);
  console.log(`probe ${i + 1}: job ${id} ended -> drawn ${ms} ms`);
}
stop = true;
await Promise.all(churn);
lat.sort((a, b) => a - b);
console.log(`${busy ? "busy" : "quiet"}: ${lat.length} probes, median ${lat[Math.floor(lat.length / 2)]} ms, max ${lat.at(-1)} ms, over 2 s: ${lat.filter((x) => x >= 2000).length}; load ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`);
await page.close();
await cluster.stop();
await browser.close();
process.exit(0);
