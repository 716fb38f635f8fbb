/**
 * Profiling aid, not a benchmark: the controller's CPU per /metrics scrape, against the same number
 * of GET /v1/health (the cheapest route: what any HTTP request costs) and of GET /v1/timeline.
 * `bun bench/_scrapecost.ts [N] [HELD]`: N requests of each (default 500), after HELD held jobs
 * were submitted (pending, listed by the gauges; default 200).
 */
import { startBenchCluster } from "./cluster.ts";
import { cpuSince, cpuSnapshot } from "./proc-cpu.ts";

const n = Number(process.argv[2] ?? 500);
const held = Number(process.argv[3] ?? 200);
const cluster = await startBenchCluster(4, { layout: "processes" });
const { url, token, dir } = cluster;
const headers = { Authorization: `Bearer ${token}` };
for (let i = 0; i < held; i++) {
  const r = await fetch(`${url}/v1/jobs`, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify({ argv: ["true"], cwd: dir, output: "/dev/null", hold: true }) });
  if (r.status !== 201) throw new Error(`submit: ${r.status} ${await r.text()}`);
}
for (const path of ["/v1/health", "/metrics", "/v1/health", "/metrics"]) {
  const c0 = cpuSnapshot();
  const t0 = performance.now();
  let bytes = 0;
  for (let i = 0; i < n; i++) bytes += (await (await fetch(`${url}${path}`, { headers })).text()).length;
  const cpu = cpuSince(c0);
  console.log(`${path}: controller ${((cpu.controller! / n) * 1000).toFixed(3)} ms CPU per request, ${((performance.now() - t0) / n).toFixed(2)} ms wall, ${(bytes / n).toFixed(0)} bytes`);
}
await cluster.stop();
process.exit(0);
