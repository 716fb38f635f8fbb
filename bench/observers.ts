/// <reference lib="dom" />
/** What watches a cluster in the benchmarks: the dashboard open in headless Chromium, and a /metrics scraper. */
import type { Browser } from "puppeteer-core";
import { launchBrowser as launch } from "../test/support/browsers.ts";

export function launchBrowser(): Promise<Browser> {
  return launch("chromium");
}

/**
 * Opens the dashboard signed in (the token put in the tab's sessionStorage before the page loads)
 * and resolves once its first timeline is drawn, with the time from navigation start (ms) and what it drew.
 */
export async function openDashboard(browser: Browser, url: string, token: string) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1440, height: 900 });
  await page.evaluateOnNewDocument((t) => sessionStorage.setItem("ebb-token", t), token);
  await page.goto(`${url}/`);
  const drawn = await page.waitForFunction(() => {
    const m = performance.getEntriesByName("ebb-first-timeline")[0] as PerformanceMark | undefined;
    return m ? { ms: m.startTime, ...(m.detail as { jobs: number; nodes: number }) } : undefined;
  }, { timeout: 120_000, polling: 50 });
  return { page, first: (await drawn.jsonValue())! };
}

/** Scrapes /metrics every second until stopped; the number of scrapes. */
export function scrapeMetrics(url: string, token: string): { stop(): Promise<number> } {
  let n = 0;
  let last: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    last = fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${token}` } }).then(async (r) => {
      if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
      await r.text();
      n++;
    });
  }, 1000);
  return {
    async stop() {
      clearInterval(timer);
      await last;
      return n;
    },
  };
}
