/// <reference lib="dom" />
/**
 * The dashboard in headless Chromium (Debian's, driven by playwright-core) against a cluster of
 * real processes: sign-in, the nodes, an elastic job's band widening and narrowing as the test
 * resizes it 2 → 4 → 2, the job and nodes pages, and a wrong token that shows the sign-in again.
 * Screenshots go to test-output/dashboard/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { ROOT, startCluster, type TestCluster } from "../support/cluster.ts";
import { COUNTER, elasticRun } from "../support/elastic-run.ts";

const CHROMIUM = "/usr/bin/chromium";
const OUT = join(ROOT, "test-output", "dashboard");
const BUN = process.execPath;
/** Ceiling for the page to show what the cluster did (it should take under 2 s; this is load headroom). */
const SHOWN = 30_000;

let c: TestCluster;
let browser: Browser;
let page: Page;
beforeAll(async () => {
  mkdirSync(OUT, { recursive: true });
  [c, browser] = await Promise.all([startCluster({ agents: 4 }), chromium.launch({ executablePath: CHROMIUM, headless: true })]);
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
});
afterAll(async () => {
  await browser?.close();
  await c?.stop();
});

async function signIn(token: string) {
  await page.locator("#token").fill(token);
  await page.keyboard.press("Enter");
}

/** The node rows the job's band covers now, read from the drawing. */
function bandRows(job: number): Promise<string[]> {
  return page.evaluate((id) => {
    const rects = [...document.querySelectorAll(`#timeline rect.alloc[data-job="${id}"][data-open="1"]`)];
    return [...new Set(rects.map((r) => r.getAttribute("data-node")!))].sort();
  }, job);
}

async function waitBand(job: number, rows: number) {
  await page.waitForFunction(
    ([id, n]) => new Set([...document.querySelectorAll(`#timeline rect.alloc[data-job="${id}"][data-open="1"]`)].map((r) => r.getAttribute("data-row"))).size === n,
    [job, rows] as const,
    { timeout: SHOWN },
  );
}

describe("the dashboard", () => {
  test("a wrong token shows the sign-in again, with why", async () => {
    await page.goto(`${c.url}/`);
    await page.locator("#login").waitFor({ state: "visible" });
    await signIn("not-the-token");
    await page.locator("#login-error").filter({ hasText: "refused" }).waitFor({ timeout: SHOWN });
    expect(await page.locator("#login").isVisible()).toBe(true);
    expect(await page.locator("#app").isVisible()).toBe(false);
    expect(await page.evaluate(() => sessionStorage.getItem("ebb-token"))).toBeNull();
    await page.screenshot({ path: join(OUT, "wrong-token.png") });
  });

  test("signed in: the nodes, and an elastic job's band over 2, then 4, then 2 node rows", async () => {
    if (!page.url().startsWith(c.url)) await page.goto(`${c.url}/`);
    await signIn(c.token);
    await page.locator("#timeline").waitFor({ timeout: SHOWN });
    expect(await page.locator("#timeline .node-label").allTextContents()).toEqual(["node01", "node02", "node03", "node04"]);
    // The token is kept for the tab, never in a URL or in localStorage.
    expect(page.url()).not.toContain(c.token);
    expect(await page.evaluate(() => sessionStorage.getItem("ebb-token"))).toBe(c.token);
    expect(await page.evaluate(() => Object.keys(localStorage).length)).toBe(0);

    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", "--", BUN, COUNTER, "1000000", "20"], /pid=\d+ rank=1/);
    const allocation = async () => ((await c.job(job.id)).allocation as string[]).slice().sort();
    await waitBand(job.id, 2);
    expect(await bandRows(job.id)).toEqual(await allocation());
    await page.screenshot({ path: join(OUT, "timeline-2-nodes.png"), fullPage: true });

    expect((await c.resize(job.id, 4)).state).toBe("COMMITTED");
    await waitBand(job.id, 4);
    expect(await bandRows(job.id)).toEqual(await allocation());
    expect(await page.locator(`#timeline line.adapt[data-job="${job.id}"]`).count()).toBe(1);
    await page.screenshot({ path: join(OUT, "timeline-4-nodes.png"), fullPage: true });

    expect((await c.resize(job.id, 2)).state).toBe("COMMITTED");
    await waitBand(job.id, 2);
    expect(await bandRows(job.id)).toEqual(await allocation());
    expect(await page.locator(`#timeline line.adapt[data-job="${job.id}"]`).count()).toBe(2);
    // The nodes the shrink released keep their past stretch of the band, closed at the commit.
    expect(await page.locator(`#timeline rect.alloc[data-job="${job.id}"][data-open="0"]`).count()).toBe(2);
    await page.screenshot({ path: join(OUT, "timeline-2-again.png"), fullPage: true });

    // Zoom: the three windows, by keyboard.
    await page.keyboard.press("2");
    await page.locator('button[data-window="3600"][aria-pressed="true"]').waitFor();
    await page.keyboard.press("1");
    await page.locator('button[data-window="600"][aria-pressed="true"]').waitFor();
    await waitBand(job.id, 2);

    // The job page, reached with the keyboard: allocation history, adaptations, events; cancel.
    await page.locator(`#running li[data-job="${job.id}"] a`).focus();
    await page.keyboard.press("Enter");
    await page.locator("#allocation-history").waitFor({ timeout: SHOWN });
    expect(await page.locator("#adaptations tbody tr").count()).toBe(2);
    expect(await page.locator("#adaptations tbody").textContent()).toContain("2 → 4");
    expect(await page.locator("#allocation-history tbody tr").count()).toBe(4);
    expect(await page.locator("#events tbody").textContent()).toContain("resized from 4 to 2 nodes");
    await page.screenshot({ path: join(OUT, "job.png"), fullPage: true });
    await page.locator("#cancel").focus();
    await page.keyboard.press("Enter");
    await page.locator("#action-status").filter({ hasText: "cancelled" }).waitFor({ timeout: SHOWN });
    await c.waitJob(job.id, ["CANCELLED"]);
    await job.finished;
    await page.locator("#job-state").filter({ hasText: "CANCELLED" }).waitFor({ timeout: SHOWN });

    // The nodes page.
    await page.keyboard.press("n");
    await page.locator("#nodes tbody tr").first().waitFor({ timeout: SHOWN });
    expect(await page.locator("#nodes tbody tr").count()).toBe(4);
    expect(await page.locator("#utilization polyline").count()).toBe(1);
    await page.screenshot({ path: join(OUT, "nodes.png"), fullPage: true });
  }, 180_000);

  test("after a reload the tab is still signed in; a token that stops working shows the sign-in", async () => {
    await page.goto(`${c.url}/`);
    await page.locator("#timeline").waitFor({ timeout: SHOWN });
    await page.evaluate(() => sessionStorage.setItem("ebb-token", "stale-token"));
    await page.reload();
    await page.locator("#login-error").filter({ hasText: "refused" }).waitFor({ timeout: SHOWN });
    expect(await page.locator("#timeline").count()).toBe(0);
  });
});
