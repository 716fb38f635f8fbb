/**
 * The dashboard's first render in headless Chromium (Debian's, via puppeteer-core): a 64-node
 * cluster (`ebb up`) after 1,000 one-rank jobs have finished, all of them in the timeline's
 * 10-minute window. Time from navigation start to the first timeline drawn (the page's
 * performance mark), median of 3 page loads (1 with --quick). Baseline, same run: the same page
 * on the same 64 nodes before any job ran.
 */
import { startBenchCluster } from "./cluster.ts";
import { median, type Bench, type Figure } from "./lib.ts";
import { launchBrowser, openDashboard } from "./observers.ts";

async function firstRenders(browser: Awaited<ReturnType<typeof launchBrowser>>, url: string, token: string, loads: number) {
  const ms: number[] = [];
  let drew = { jobs: 0, nodes: 0 };
  for (let i = 0; i < loads; i++) {
    const { page, first } = await openDashboard(browser, url, token);
    ms.push(first.ms);
    drew = first;
    await page.close();
  }
  return { ms: median(ms), drew };
}

export default {
  name: "dashboard",
  description: "the dashboard's first render with 1,000 finished jobs on 64 nodes, in headless Chromium",
  async run({ quick }) {
    const jobs = 1000;
    const loads = quick ? 1 : 3;
    const browser = await launchBrowser();
    const cluster = await startBenchCluster(64, { layout: "up" });
    try {
      const { url, token, dir } = cluster;
      const empty = await firstRenders(browser, url, token, loads);
      const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
      const body = JSON.stringify({ argv: ["true"], cwd: dir, output: "/dev/null" });
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next++ < jobs) {
            const r = await fetch(`${url}/v1/jobs`, { method: "POST", headers, body });
            if (r.status !== 201) throw new Error(`submit failed: ${r.status} ${await r.text()}`);
          }
        }),
      );
      while (((await (await fetch(`${url}/v1/health`)).json()) as { jobs: number }).jobs > 0) await Bun.sleep(100);
      const full = await firstRenders(browser, url, token, loads);
      if (full.drew.jobs < jobs || full.drew.nodes !== 64) throw new Error(`the timeline drew ${full.drew.jobs} jobs on ${full.drew.nodes} nodes`);
      process.stderr.write(`  first render: ${empty.ms.toFixed(0)} ms empty, ${full.ms.toFixed(0)} ms with ${full.drew.jobs} jobs\n`);
      const figures: Figure[] = [
        {
          name: `first render, ${full.drew.jobs} finished jobs on 64 nodes${loads > 1 ? `, median of ${loads}` : ""}`,
          value: full.ms,
          unit: "ms",
          baseline: { name: "the same page, 64 nodes, no jobs", value: empty.ms },
          better: "lower",
          goal: "< 1000 ms",
          met: full.ms < 1000,
        },
      ];
      return figures;
    } finally {
      await browser.close();
      await cluster.stop();
    }
  },
} satisfies Bench;
