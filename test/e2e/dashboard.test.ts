/// <reference lib="dom" />
/**
 * The dashboard in headless Chromium and Firefox (Debian's, driven by puppeteer-core; see
 * test/support/browsers.ts) against a cluster of real processes, the same scenario in each:
 * sign-in, the nodes, an elastic job's band widening and narrowing as the test resizes it
 * 2 → 4 → 2, then without a mouse: zoom by keys and by Tab + Enter/Space, Tab to the job's page,
 * resize it to 3 and cancel it there; the nodes page, and a wrong token that shows the sign-in again.
 * Screenshots go to test-output/dashboard/<browser>/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { launchBrowser, type BrowserName } from "../support/browsers.ts";
import { ROOT, startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { COUNTER, elasticRun } from "../support/elastic-run.ts";

const BUN = process.execPath;
/** Ceiling for the page to show what the cluster did (it should take under 2 s; this is load headroom). */
const SHOWN = 30_000;

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 4 });
});
afterAll(async () => {
  await c?.stop();
});

for (const name of ["chromium", "firefox"] as const satisfies readonly BrowserName[]) {
  describe(`the dashboard in ${name}`, () => {
    const out = join(ROOT, "test-output", "dashboard", name);
    let browser: Browser;
    let page: Page;
    beforeAll(async () => {
      mkdirSync(out, { recursive: true });
      // A browser far from UTC: the page's times must still be the CLI's (ISO 8601, UTC).
      browser = await launchBrowser(name, { TZ: "America/New_York" });
      page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 800 });
    }, 200_000);
    afterAll(async () => {
      await browser?.close();
    });

    const shot = (file: string) => page.screenshot({ path: join(out, file), fullPage: true });
    /** Waits until `selector` matches an element whose text contains `text` (any element when ""). */
    const waitText = (selector: string, text = "") =>
      page.waitForFunction((s, t) => [...document.querySelectorAll(s)].some((e) => (e.textContent ?? "").includes(t)), { timeout: SHOWN, polling: 100 }, selector, text);
    const count = (selector: string) => page.$$eval(selector, (els) => els.length);
    const textOf = (selector: string) => page.$eval(selector, (e) => e.textContent ?? "");
    const visible = (selector: string) => page.$eval(selector, (e) => !(e as HTMLElement).hidden && (e as HTMLElement).offsetParent !== null);

    /** What has the keyboard focus: tag, id, data-window, text. */
    const focused = () =>
      page.evaluate(() => {
        const e = document.activeElement as HTMLElement | null;
        return { tag: e?.tagName.toLowerCase() ?? "", id: e?.id ?? "", window: e?.dataset.window ?? "", text: (e?.textContent ?? "").trim(), job: e?.closest("li")?.dataset.job ?? "" };
      });
    /** Presses Tab until `want` has the focus; fails after `max` presses. */
    async function tabTo(want: (f: Awaited<ReturnType<typeof focused>>) => boolean, max: number, back = false) {
      const path: string[] = [];
      for (let i = 0; i < max; i++) {
        if (back) await page.keyboard.down("Shift");
        await page.keyboard.press("Tab");
        if (back) await page.keyboard.up("Shift");
        const f = await focused();
        path.push(`${f.tag}#${f.id}[${f.window}] ${f.text.slice(0, 20)}`);
        if (want(f)) return f;
      }
      throw new Error(`Tab did not reach it in ${max} presses: ${path.join(" → ")}`);
    }

    async function signIn(token: string) {
      await page.waitForSelector("#token", { visible: true, timeout: SHOWN });
      await page.$eval("#token", (e) => ((e as HTMLInputElement).value = ""));
      await page.type("#token", token);
      await page.keyboard.press("Enter");
    }

    /** What the timeline's canvas painted last (its `drawing`: the bands per node row, the adaptation marks, the jobs). */
    type Drawing = { bands: { job: number; node: string; row: number; lane: number; y: number; h: number; open: boolean }[]; marks: { job: number; adaptation: number }[]; jobs: { id: number; state: string }[] };
    const drawing = () =>
      page.evaluate(() => {
        const d = (document.getElementById("timeline-plot") as (HTMLCanvasElement & { drawing?: Drawing }) | null)?.drawing;
        return d ? { bands: d.bands.map(({ job, node, row, lane, y, h, open }) => ({ job, node, row, lane, y, h, open })), marks: d.marks.map(({ job, adaptation }) => ({ job, adaptation })), jobs: d.jobs.map(({ id, state }) => ({ id, state })) } : null;
      }) as Promise<Drawing | null>;

    /** The node rows the job's band covers now, read from the drawing. */
    async function bandRows(job: number): Promise<string[]> {
      return [...new Set((await drawing())!.bands.filter((b) => b.job === job && b.open).map((b) => b.node))].sort();
    }
    const marks = async (job: number) => (await drawing())!.marks.filter((m) => m.job === job).length;
    const closed = async (job: number) => (await drawing())!.bands.filter((b) => b.job === job && !b.open).length;

    async function waitBand(job: number, rows: number) {
      await page.waitForFunction(
        (id, n) => {
          const d = (document.getElementById("timeline-plot") as (HTMLCanvasElement & { drawing?: Drawing }) | null)?.drawing;
          return new Set(d?.bands.filter((b) => b.job === id && b.open).map((b) => b.row)).size === n;
        },
        { timeout: SHOWN, polling: 100 },
        job,
        rows,
      );
    }

    test("a wrong token shows the sign-in again, with why", async () => {
      await page.goto(`${c.url}/`);
      await signIn("not-the-token");
      await waitText("#login-error", "refused");
      expect(await visible("#login")).toBe(true);
      expect(await visible("#app")).toBe(false);
      expect(await page.evaluate(() => sessionStorage.getItem("ebb-token"))).toBeNull();
      await shot("wrong-token.png");
    });

    test("its Content-Security-Policy runs the page's own script only: an injected inline script or event attribute does not run", async () => {
      const csp = (await fetch(`${c.url}/`)).headers.get("content-security-policy") ?? "";
      expect(/(?:^|;\s*)script-src ([^;]*)/.exec(csp)?.[1]).toMatch(/^'sha256-[A-Za-z0-9+/]+=*'$/);
      expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
      await page.goto(`${c.url}/`);
      await page.waitForSelector("#token", { visible: true, timeout: SHOWN });
      await page.evaluate(() => {
        const w = window as unknown as { violations: string[] };
        w.violations = [];
        document.addEventListener("securitypolicyviolation", (e) => w.violations.push(e.violatedDirective));
        const s = document.createElement("script");
        s.textContent = "window.injected = 'inline script'";
        document.body.append(s);
        const b = document.createElement("button");
        b.setAttribute("onclick", "window.injected = 'event attribute'");
        document.body.append(b);
        b.click();
      });
      // Both were refused (the browser reports each), and neither ran.
      await page.waitForFunction(() => (window as unknown as { violations: string[] }).violations.length >= 2, { timeout: SHOWN, polling: 100 });
      const seen = await page.evaluate(() => ({ injected: (window as unknown as { injected?: string }).injected ?? null, violations: (window as unknown as { violations: string[] }).violations }));
      expect(seen.injected).toBeNull();
      for (const v of seen.violations) expect(v).toStartWith("script-src");
    });

    test("signed in: the nodes, and an elastic job's band over 2, then 4, then 2 node rows", async () => {
      if (!page.url().startsWith(c.url)) await page.goto(`${c.url}/`);
      await signIn(c.token);
      await page.waitForSelector("#timeline", { timeout: SHOWN });
      expect(await page.$$eval("#timeline .node-label", (els) => els.map((e) => e.textContent))).toEqual(["node01", "node02", "node03", "node04"]);
      // The token is kept for the tab, never in a URL or in localStorage.
      expect(page.url()).not.toContain(c.token);
      expect(await page.evaluate(() => sessionStorage.getItem("ebb-token"))).toBe(c.token);
      expect(await page.evaluate(() => Object.keys(localStorage).length)).toBe(0);

      // Pending jobs beside the timeline, with why they wait: a queue of 12 held jobs shows its
      // first 10, each with JobHeldUser, the count by reason and how many more.
      const held: number[] = [];
      for (let i = 0; i < 12; i++) held.push(await c.submit({ argv: ["true"], output: "/dev/null", hold: true }));
      await waitText("#h-pending", "Pending (12)");
      const items = await page.$$eval("#pending li", (els) => els.map((e) => ({ job: (e as HTMLElement).dataset.job, reason: e.querySelector(".reason")?.textContent })));
      expect(items).toEqual(held.slice(0, 10).map((id) => ({ job: String(id), reason: "JobHeldUser" })));
      expect(await textOf("#pending-reasons")).toBe("JobHeldUser 12");
      expect(await textOf("#side p.more")).toBe("and 2 more");
      for (const id of held) expect((await c.api("DELETE", `/v1/jobs/${id}`)).status).toBe(200);
      await waitText("#h-pending", "Pending (0)");
      expect(await visible("#pending-reasons")).toBe(false);

      const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "4", "--", BUN, COUNTER, "1000000", "20"], /pid=\d+ rank=1/);
      const allocation = async () => ((await c.job(job.id)).allocation as string[]).slice().sort();
      await waitBand(job.id, 2);
      expect(await bandRows(job.id)).toEqual(await allocation());
      await shot("timeline-2-nodes.png");

      expect((await c.resize(job.id, 4)).state).toBe("COMMITTED");
      await waitBand(job.id, 4);
      expect(await bandRows(job.id)).toEqual(await allocation());
      expect(await marks(job.id)).toBe(1);
      await shot("timeline-4-nodes.png");

      expect((await c.resize(job.id, 2)).state).toBe("COMMITTED");
      await waitBand(job.id, 2);
      expect(await bandRows(job.id)).toEqual(await allocation());
      expect(await marks(job.id)).toBe(2);
      // The nodes the shrink released keep their past stretch of the band, closed at the commit.
      expect(await closed(job.id)).toBe(2);
      await shot("timeline-2-again.png");

      // From here on the keyboard only. Zoom by keys 1-3.
      await page.keyboard.press("2");
      await page.waitForSelector('button[data-window="3600"][aria-pressed="true"]', { timeout: SHOWN });
      await page.keyboard.press("1");
      await page.waitForSelector('button[data-window="600"][aria-pressed="true"]', { timeout: SHOWN });
      await waitBand(job.id, 2);
      // A page reached by a key puts the focus on its heading; Tab goes on to the zoom buttons,
      // which Enter and Space press, the focus staying on the button while the page is made again.
      await page.keyboard.press("n");
      await page.waitForSelector("#nodes", { timeout: SHOWN });
      // The utilization chart, while the job holds 2 of the 4 two-core nodes: 4 of 8 cores up to its right edge (now),
      // over a time axis in UTC minutes of the last 10.
      const chart = await page.$eval("#utilization", (e) => ({ label: e.getAttribute("aria-label"), ticks: [...e.querySelectorAll("text.tick")].map((t) => t.textContent), texts: [...e.querySelectorAll("text")].map((t) => t.textContent) }));
      expect(chart.label).toContain("Allocated cores over the last 10 minutes: 4 of 8 now");
      const minutes = new Set(Array.from({ length: 12 }, (_, i) => new Date(Date.now() - (i - 1) * 60_000).toISOString().slice(11, 16)));
      expect(chart.ticks.length).toBeGreaterThanOrEqual(8);
      for (const tick of chart.ticks) expect(minutes).toContain(tick!);
      expect(chart.texts).toContain("UTC");
      await page.keyboard.press("g");
      await page.waitForSelector("#timeline", { timeout: SHOWN });
      expect(await focused()).toMatchObject({ tag: "h2", text: "Allocation timeline" });
      await tabTo((f) => f.window === "600", 1);
      await tabTo((f) => f.window === "3600", 1);
      await page.keyboard.press("Enter");
      await page.waitForSelector('#timeline[aria-label*="60 minutes"]', { timeout: SHOWN });
      await page.waitForSelector('button[data-window="3600"][aria-pressed="true"]', { timeout: SHOWN });
      expect(await focused()).toMatchObject({ tag: "button", window: "3600" });
      await tabTo((f) => f.window === "600", 1, true);
      await page.keyboard.press(" ");
      await page.waitForSelector('#timeline[aria-label*="10 minutes"]', { timeout: SHOWN });
      expect(await focused()).toMatchObject({ tag: "button", window: "600" });
      await waitBand(job.id, 2);

      // Tab reaches the running job's link; Enter opens its page, the focus on its heading.
      await tabTo((f) => f.tag === "a" && f.job === String(job.id), 8);
      await page.keyboard.press("Enter");
      await page.waitForSelector("#allocation-history", { timeout: SHOWN });
      expect(await focused()).toMatchObject({ tag: "h2", text: `Job ${job.id} · bun.exe` });
      expect(await count("#adaptations tbody tr")).toBe(2);
      expect(await textOf("#adaptations tbody")).toContain("2 → 4");
      expect(await count("#allocation-history tbody tr")).toBe(4);
      expect(await textOf("#events tbody")).toContain("resized from 4 to 2 nodes");
      // The steps as they are: the elastic step 0 over the job's 2 nodes now, and the grow's step
      // (its joining ranks) with the same command.
      const cells = (selector: string) => page.$$eval(selector, (rows) => rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent ?? "")));
      const steps = await cells("#steps tbody tr");
      const command = [BUN, COUNTER, "1000000", "20"].join(" ");
      expect(steps.map((s) => s[1])).toEqual(steps.map(() => command));
      expect([steps[0]![0], steps[0]![2], steps[0]![3]!.split(",").sort()]).toEqual(["0", "2", await allocation()]);
      // Times as the CLI prints them: the API's ISO 8601 (UTC), not the browser's locale and zone.
      const events = await cells("#events tbody tr");
      for (const [time] of events) expect(time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(events[0]![0]).toBe((await c.job(job.id)).events[0].time);
      await shot("job.png");
      // Resize by keyboard: Tab past Cancel to the node count, type 3, Enter.
      await tabTo((f) => f.id === "cancel", 1);
      await tabTo((f) => f.id === "resize-nodes", 1);
      await page.keyboard.press("End");
      await page.keyboard.press("Backspace");
      await page.keyboard.type("3");
      await page.keyboard.press("Enter");
      await waitText("#action-status", `Resizing job ${job.id} to 3 nodes`);
      await waitFor("the job on 3 nodes", async () => (await c.job(job.id)).state === "RUNNING" && (await allocation()).length === 3, SHOWN);
      const three = await allocation();
      // Cancel: Shift+Tab back to the button, Enter.
      await tabTo((f) => f.id === "cancel", 1, true);
      await page.keyboard.press("Enter");
      await waitText("#action-status", "cancelled");
      await c.waitJob(job.id, ["CANCELLED"]);
      await job.finished;
      await waitText("#job-state", "CANCELLED");
      // Step 0 as it last was: 3 ranks over the 3 nodes of the last resize.
      const last = (await cells("#steps tbody tr"))[0]!;
      expect([last[2], last[3]!.split(",").sort()]).toEqual(["3", three]);
      expect(await count("#adaptations tbody tr")).toBe(3);

      // The nodes page.
      await page.keyboard.press("n");
      await page.waitForSelector("#nodes tbody tr", { timeout: SHOWN });
      expect(await count("#nodes tbody tr")).toBe(4);
      expect(await count("#utilization polyline")).toBe(1);
      await shot("nodes.png");

      // Finished jobs on the timeline by keyboard: Tab to the drawing, arrows choose a job (its
      // tooltip shows, and says it ended), Enter opens its page.
      await page.keyboard.press("g");
      await page.waitForSelector("#timeline", { timeout: SHOWN });
      // The finished job is painted once into a layer that slides with the clock: its colour is
      // at its bands' places in the canvas's pixels, and still after the clock moved on.
      const painted = () =>
        page.evaluate((id) => {
          const canvas = document.getElementById("timeline-plot") as HTMLCanvasElement & { drawing: { at: number; bands: { job: number; x: number; y: number; w: number; h: number }[] } };
          const probe = document.createElement("canvas").getContext("2d")!;
          // @ts-expect-error the page's own colour of a job (a global of its script)
          probe.fillStyle = color(id) as string;
          probe.fillRect(0, 0, 1, 1);
          const want = probe.getImageData(0, 0, 1, 1).data;
          const dpr = window.devicePixelRatio || 1;
          const g = canvas.getContext("2d")!;
          const bands = canvas.drawing.bands.filter((b) => b.job === id && b.w >= 3);
          const hits = bands.filter((b) => {
            const px = g.getImageData(Math.floor((b.x + b.w / 2) * dpr), Math.floor((b.y + b.h / 2) * dpr), 1, 1).data;
            return [0, 1, 2].every((i) => Math.abs(px[i]! - want[i]!) <= 3);
          });
          return { at: canvas.drawing.at, bands: bands.length, hits: hits.length };
        }, job.id);
      const before = await painted();
      expect(before.bands).toBeGreaterThan(0);
      expect(before.hits).toBeGreaterThan(0);
      await page.waitForFunction((at) => (document.getElementById("timeline-plot") as unknown as { drawing: { at: number } }).drawing.at > at + 1000, { timeout: SHOWN, polling: 200 }, before.at);
      const after = await painted();
      expect(after.hits).toBeGreaterThan(0);
      await tabTo((f) => f.id === "timeline-plot", 5);
      await page.waitForSelector("#timeline-tip:not([hidden])", { timeout: SHOWN });
      const tipJob = () => page.$eval("#timeline-tip", (e) => (e as HTMLElement).dataset.job);
      for (let i = 0; i < 10 && (await tipJob()) !== String(job.id); i++) await page.keyboard.press("ArrowLeft");
      expect(await tipJob()).toBe(String(job.id));
      await waitText("#timeline-tip", "CANCELLED");
      expect(await textOf("#timeline-tip")).toContain("2 → 4 COMMITTED");
      await shot("timeline-keyboard.png");
      await page.keyboard.press("Enter");
      await page.waitForSelector("#allocation-history", { timeout: SHOWN });
      expect(await focused()).toMatchObject({ tag: "h2", text: `Job ${job.id} · bun.exe` });
    }, 180_000);

    test("two jobs on one node: its row holds both, a lane each, and the nodes page lists both", async () => {
      await page.goto(`${c.url}/#/`);
      await page.waitForSelector("#timeline", { timeout: SHOWN });
      const label = (node: string) => page.$eval(`#timeline .node-label[data-node="${node}"]`, (e) => (e as HTMLElement).offsetTop);
      const rowHeight = async () => (await label("node02")) - (await label("node01"));
      // One lane tall (18 px) until then in the first browser; the second finds the first's two
      // lanes still in the timeline's window.
      // One core each of node01's two.
      const first = await c.submit({ argv: ["sleep", "60"], output: "/dev/null", nodelist: ["node01"] });
      const second = await c.submit({ argv: ["sleep", "60"], output: "/dev/null", nodelist: ["node01"] });
      const jobs = [first, second];
      try {
        for (const id of jobs) await c.waitJob(id, ["RUNNING"]);
        await page.waitForFunction(
          (ids) => {
            const d = (document.getElementById("timeline-plot") as (HTMLCanvasElement & { drawing?: Drawing }) | null)?.drawing;
            return ids.every((id) => d?.bands.some((b) => b.job === id && b.open && b.node === "node01"));
          },
          { timeout: SHOWN, polling: 100 },
          jobs,
        );
        const bands = (await drawing())!.bands.filter((b) => jobs.includes(b.job) && b.open);
        expect(bands.map((b) => [b.job, b.node, b.row, b.lane])).toEqual([
          [first, "node01", 0, 0],
          [second, "node01", 0, 1],
        ]);
        // The row is two lanes tall, the bands one above the other.
        expect(await rowHeight()).toBe(32);
        expect(bands[1]!.y).toBeGreaterThanOrEqual(bands[0]!.y + bands[0]!.h);
        await shot("timeline-shared-node.png");
        await page.keyboard.press("n");
        await page.waitForSelector("#nodes tbody tr", { timeout: SHOWN });
        await waitText('#nodes tr[data-node="node01"] td.used', "2 of 2");
        expect(await page.$$eval('#nodes tr[data-node="node01"] a', (els) => els.map((e) => e.textContent))).toEqual(jobs.map(String));
        // Its host state (no rules on these agents: free).
        await waitText('#nodes tr[data-node="node01"] td.host', "free");
      } finally {
        for (const id of jobs) await c.api("DELETE", `/v1/jobs/${id}`);
        for (const id of jobs) await c.waitJob(id, ["CANCELLED"]);
      }
    }, 120_000);

    test("after a reload the tab is still signed in; a token that stops working shows the sign-in", async () => {
      await page.goto(`${c.url}/`);
      await page.waitForSelector("#timeline", { timeout: SHOWN });
      await page.evaluate(() => sessionStorage.setItem("ebb-token", "stale-token"));
      await page.reload();
      await waitText("#login-error", "refused");
      expect(await count("#timeline")).toBe(0);
    });
  });
}

/*
 * A burst of 1,000 short jobs with both browsers watching: the page draws deltas at most once a
 * second, several deltas' changes together, and must still end with every job in its final state
 * and nothing left in the running or pending lists.
 */
describe("a burst of 1,000 jobs", () => {
  test("both browsers' timelines end with every job COMPLETED and none running or pending", async () => {
    const browsers = await Promise.all((["chromium", "firefox"] as const).map((n) => launchBrowser(n)));
    try {
      const pages = await Promise.all(
        browsers.map(async (b) => {
          const p = await b.newPage();
          await p.setViewport({ width: 1280, height: 800 });
          await p.goto(`${c.url}/`);
          await p.evaluate((t) => sessionStorage.setItem("ebb-token", t), c.token);
          await p.reload();
          await p.waitForSelector("#timeline-plot", { timeout: SHOWN });
          return p;
        }),
      );
      const ids: number[] = [];
      let left = 1000;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (left > 0) {
            left--;
            ids.push(await c.submit({ argv: ["true"], output: "/dev/null" }));
          }
        }),
      );
      await waitFor("the 1,000 jobs done", async () => (await c.api("GET", "/v1/health")).json.jobs === 0, 600_000);
      for (const p of pages)
        await p.waitForFunction(
          (want) => {
            const d = (document.getElementById("timeline-plot") as (HTMLCanvasElement & { drawing?: { jobs: { id: number; state: string }[]; bands: { job: number; open: boolean }[] } }) | null)?.drawing;
            if (!d) return false;
            const states = new Map(d.jobs.map((j) => [j.id, j.state]));
            const closed = new Set(d.bands.filter((b) => !b.open).map((b) => b.job));
            return want.every((id) => states.get(id) === "COMPLETED" && closed.has(id)) && !d.bands.some((b) => want.includes(b.job) && b.open);
          },
          { timeout: SHOWN, polling: 500 },
          ids,
        );
      for (const p of pages) {
        expect(await p.$eval("#h-running", (e) => e.textContent)).toBe("Running (0)");
        expect(await p.$eval("#h-pending", (e) => e.textContent)).toBe("Pending (0)");
      }
      expect(new Set(ids).size).toBe(1000);
    } finally {
      await Promise.all(browsers.map((b) => b.close()));
    }
  }, 900_000);
});
