/// <reference lib="dom" />
/**
 * Profiling aid, not a benchmark (run.ts skips files starting with "_"): what the dashboard page
 * costs its browser per stream message, with nothing else varying. `record FILE [JOBS]` runs a
 * throughput-like trial (JOBS `true` jobs, 8 clients) and keeps every event of /v1/stream as it
 * came; `replay FILE [GAP_MS] [ROUNDS]` serves this tree's page and plays the recording back to
 * it, one delta every GAP_MS (1500: the feed's cadence), with no cluster running, and prints the
 * browser's CPU (all Chromium processes, by type) over the deltas. PROFILE=1 also writes a CDP
 * CPU profile of the page per round (/tmp/ebb-pagereplay-N.cpuprofile). Compare page variants
 * by replaying the same recording to each: the noise of a live cluster is gone.
 */
import { readFileSync } from "node:fs";
import { runTrueJobs, startBenchCluster } from "./cluster.ts";
import { launchBrowser, openDashboard } from "./observers.ts";
import { processTable } from "./proc-cpu.ts";

const [mode, file] = [process.argv[2], process.argv[3]];
if ((mode !== "record" && mode !== "replay") || !file) throw new Error("usage: bun bench/_pagereplay.ts record FILE [JOBS] | replay FILE [GAP_MS] [ROUNDS]");

interface Recorded {
  at: number;
  text: string;
}

if (mode === "record") {
  const jobs = Number(process.argv[4] ?? 1000);
  const cluster = await startBenchCluster(4, { layout: "processes" });
  const { url, token } = cluster;
  const res = await fetch(`${url}/v1/stream?window=600`, { headers: { Authorization: `Bearer ${token}` } });
  const events: Recorded[] = [];
  const t0 = Date.now();
  const reading = (async () => {
    const dec = new TextDecoder();
    let buf = "";
    try {
      for await (const chunk of res.body!) {
        buf += dec.decode(chunk, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          if (!buf.startsWith(":")) events.push({ at: Date.now() - t0, text: buf.slice(0, i + 2) });
          buf = buf.slice(i + 2);
        }
      }
    } catch {
      // the cluster stopped
    }
  })();
  await Bun.sleep(1000);
  await runTrueJobs(cluster, jobs);
  await Bun.sleep(2500);
  await Bun.write(file, JSON.stringify(events));
  console.log(`recorded ${events.length} events (${events.filter((e) => e.text.startsWith("event: delta")).length} deltas), ${events.reduce((a, e) => a + e.text.length, 0)} bytes`);
  await cluster.stop();
  void reading;
  process.exit(0);
}

const gap = Number(process.argv[4] ?? 1500);
const rounds = Number(process.argv[5] ?? 1);
const page = readFileSync(new URL("../src/api/dashboard/index.html", import.meta.url), "utf8");
const events: Recorded[] = JSON.parse(readFileSync(file, "utf8"));
let release = () => {};
let go = Promise.resolve();
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === "/") return new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } });
    if (path !== "/v1/stream") return new Response("not found", { status: 404 });
    const enc = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      async start(ctl) {
        ctl.enqueue(enc.encode(events[0]!.text));
        await go;
        for (const e of events.slice(1)) {
          ctl.enqueue(enc.encode(e.text));
          await Bun.sleep(gap);
        }
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  },
});

/** CPU seconds of every Chromium process, keyed "pid type". */
function browserCpu(): Map<string, number> {
  const out = new Map<string, number>();
  for (const [pid, p] of processTable()) if (/chrom/.test(p.cmd)) out.set(`${pid} ${/--type=([\w-]+)/.exec(p.cmd)?.[1] ?? "browser"}`, p.cpu);
  return out;
}

const browser = await launchBrowser();
const deltas = events.length - 1;
for (let r = 0; r < rounds; r++) {
  go = new Promise<void>((res) => (release = res));
  const { page: p } = await openDashboard(browser, `http://127.0.0.1:${server.port}`, "replay");
  await Bun.sleep(3000); // the first load and its compilation settle
  const cdp = process.env.PROFILE ? await p.createCDPSession() : undefined;
  if (cdp) {
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.start");
  }
  const c0 = browserCpu();
  const t0 = Date.now();
  release();
  await Bun.sleep(gap * deltas + 500);
  const c1 = browserCpu();
  const wall = (Date.now() - t0) / 1000;
  if (cdp) await Bun.write(`/tmp/ebb-pagereplay-${r}.cpuprofile`, JSON.stringify((await cdp.send("Profiler.stop")).profile));
  const by: Record<string, number> = {};
  for (const [k, v] of c1) {
    const type = k.split(" ")[1]!;
    by[type] = (by[type] ?? 0) + v - (c0.get(k) ?? 0);
  }
  const total = Object.values(by).reduce((a, b) => a + b, 0);
  console.log(
    `round ${r + 1}: ${deltas} deltas in ${wall.toFixed(1)} s: browser ${total.toFixed(2)} CPU s (${((total / deltas) * 1000).toFixed(1)} ms per delta); ` +
      `${Object.entries(by).sort().map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ")}; load ${readFileSync("/proc/loadavg", "utf8").split(" ")[0]}`,
  );
  await p.close();
}
await browser.close();
server.stop(true);
process.exit(0);
