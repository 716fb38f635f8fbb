/**
 * GET /metrics on a real cluster (a controller and 3 agents, each its own process), read back by a
 * Prometheus text parser after a known sequence of jobs; --log-format json of the daemons.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, ROOT, TestCluster, waitFor } from "../support/cluster.ts";
import { histogram, parseMetrics, sample, value } from "../support/prometheus.ts";
import { COUNTER, elasticRun } from "../support/elastic-run.ts";

const BUN = process.execPath;
const scratch = mkdtempSync(join(tmpdir(), "ebb-metrics-"));
const METRICS_TOKEN = "scrape-me-0123456789abcdef";
const tokenFile = join(scratch, "metrics.token");
writeFileSync(tokenFile, `${METRICS_TOKEN}\n`, { mode: 0o600 });

let c: TestCluster;
let startedAround = 0;
beforeAll(async () => {
  c = new TestCluster({ agents: 0, controllerArgs: ["--metrics-token", tokenFile, "--log-format", "json"] });
  startedAround = Date.now() / 1000;
  await c.startController();
  for (const n of ["node01", "node02", "node03"]) c.startAgent(n, ["--log-format", "json"]);
  await c.waitNodes(3, "IDLE");
});
afterAll(async () => {
  await c?.stop();
});

async function scrape(token: string | null = METRICS_TOKEN): Promise<{ status: number; type: string | null; text: string }> {
  const r = await fetch(`${c.url}/metrics`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  return { status: r.status, type: r.headers.get("content-type"), text: await r.text() };
}

const metrics = async () => parseMetrics((await scrape()).text);

describe("/metrics", () => {
  test("needs the API token or the metrics token", async () => {
    expect((await scrape(null)).status).toBe(401);
    expect((await scrape("not-a-token")).status).toBe(401);
    const ok = await scrape();
    expect(ok.status).toBe(200);
    expect(ok.type).toStartWith("text/plain; version=0.0.4");
    expect((await scrape(c.token)).status).toBe(200);
    // The families are there before anything happened, with their types.
    const m = parseMetrics(ok.text);
    expect(m.get("ebb_jobs_started_total")?.type).toBe("COUNTER");
    expect(m.get("ebb_submit_duration_seconds")?.type).toBe("HISTOGRAM");
    expect(m.get("ebb_nodes")?.type).toBe("GAUGE");
    expect(value(m, "ebb_nodes", { state: "IDLE" })).toBe(3);
    expect(value(m, "ebb_jobs_started_total")).toBe(0);
  });

  test("the process families: CPU time, resident memory, file descriptors, start time, event-loop lag", async () => {
    const pid = c.controller.pid;
    const first = await metrics();
    const m = await metrics();
    for (const [name, type] of [
      ["process_cpu_seconds_total", "COUNTER"],
      ["process_resident_memory_bytes", "GAUGE"],
      ["process_open_fds", "GAUGE"],
      ["process_max_fds", "GAUGE"],
      ["process_start_time_seconds", "GAUGE"],
      ["ebb_event_loop_lag_seconds", "GAUGE"],
    ] as const)
      expect([name, m.get(name)?.type]).toEqual([name, type]);
    expect(value(m, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(value(m, "process_cpu_seconds_total")).toBeGreaterThanOrEqual(value(first, "process_cpu_seconds_total"));
    // What the kernel says of the controller's process.
    const rssKiB = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);
    expect(value(m, "process_resident_memory_bytes")).toBeGreaterThan((rssKiB * 1024) / 2);
    expect(value(m, "process_resident_memory_bytes")).toBeLessThan(rssKiB * 1024 * 2);
    expect(Math.abs(value(m, "process_open_fds") - readdirSync(`/proc/${pid}/fd`).length)).toBeLessThanOrEqual(5);
    expect(value(m, "process_max_fds")).toBe(Number(/^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"))![1]));
    expect(value(m, "process_start_time_seconds")).toBeGreaterThan(startedAround - 1);
    expect(value(m, "process_start_time_seconds")).toBeLessThan(Date.now() / 1000);
    expect(value(m, "ebb_event_loop_lag_seconds")).toBeGreaterThanOrEqual(0);
  });

  test("after a known sequence of jobs, every family says what happened", async () => {
    const ok = await c.submit({ argv: ["true"] });
    const bad = await c.submit({ argv: ["false"] });
    await c.waitJob(ok, ["COMPLETED"]);
    await c.waitJob(bad, ["FAILED"]);
    const sleeper = await c.submit({ argv: ["sleep", "600"] });
    await c.waitJob(sleeper, ["RUNNING"]);
    expect((await c.api("DELETE", `/v1/jobs/${sleeper}`)).status).toBe(200);
    await c.waitJob(sleeper, ["CANCELLED"]);
    const held = await c.submit({ argv: ["true"], hold: true });
    await c.waitNodes(3, "IDLE");

    // An elastic job on 2 nodes, grown to 3 and shrunk back to 2.
    const run = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "3", "--", BUN, COUNTER, "1000000", "20"], /pid=\d+ rank=1/);
    const job = run.id;
    expect((await c.resize(job, 3)).state).toBe("COMMITTED");
    let m = await metrics();
    expect(value(m, "ebb_elastic_job_nodes", { job: String(job) })).toBe(3);
    expect(value(m, "ebb_nodes_allocated")).toBe(3);
    expect(value(m, "ebb_nodes_idle")).toBe(0);
    expect(value(m, "ebb_nodes", { state: "ALLOCATED" })).toBe(3);
    expect(value(m, "ebb_adaptations_total", { direction: "grow", outcome: "committed" })).toBe(1);
    const shrink = await c.resize(job, 2);
    expect(shrink.state).toBe("COMMITTED");

    const text = (await scrape()).text;
    m = parseMetrics(text);
    expect(value(m, "ebb_elastic_job_nodes", { job: String(job) })).toBe(2);
    expect(value(m, "ebb_nodes_allocated")).toBe(2);
    expect(value(m, "ebb_nodes_idle")).toBe(1);
    expect(value(m, "ebb_jobs", { state: "RUNNING" })).toBe(1);
    expect(value(m, "ebb_jobs", { state: "PENDING" })).toBe(1);
    expect(value(m, "ebb_queue_length")).toBe(1);
    const heldFor = (Date.now() - Date.parse((await c.job(held)).submitTime)) / 1000;
    expect(value(m, "ebb_oldest_pending_age_seconds")).toBeGreaterThan(0);
    expect(value(m, "ebb_oldest_pending_age_seconds")).toBeLessThanOrEqual(heldFor);
    expect(value(m, "ebb_jobs_started_total")).toBe(4);
    expect(value(m, "ebb_jobs_ended_total", { state: "COMPLETED" })).toBe(1);
    expect(value(m, "ebb_jobs_ended_total", { state: "FAILED" })).toBe(1);
    expect(value(m, "ebb_jobs_ended_total", { state: "CANCELLED" })).toBe(1);
    expect(value(m, "ebb_adaptations_total", { direction: "shrink", outcome: "committed" })).toBe(1);
    expect(value(m, "ebb_adaptations_total", { direction: "grow", outcome: "failed" })).toBe(0);
    const grows = histogram(text, "ebb_adaptation_duration_seconds", { direction: "grow" });
    expect(Number(grows.count)).toBe(1);
    expect(Number(grows.buckets!["+Inf"])).toBe(1);
    expect(Number(grows.sum)).toBeGreaterThan(0);
    expect(Number(histogram(text, "ebb_adaptation_duration_seconds", { direction: "shrink" }).count)).toBe(1);
    expect(Number(sample(m, "ebb_adaptation_blocked_seconds").count)).toBe(2);
    // Five submissions: four through the API, the elastic job's over the launcher's WebSocket.
    expect(Number(sample(m, "ebb_submit_duration_seconds").count)).toBe(5);
    expect(Number(sample(m, "ebb_scheduling_pass_duration_seconds").count)).toBeGreaterThan(0);
    const commits = sample(m, "ebb_sqlite_commit_duration_seconds");
    expect(Number(commits.count)).toBeGreaterThan(0);
    // Buckets are cumulative.
    const counts = Object.entries(commits.buckets!).sort(([a], [b]) => (a === "+Inf" ? 1 : b === "+Inf" ? -1 : Number(a) - Number(b))).map(([, v]) => Number(v));
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts.at(-1)).toBe(Number(commits.count));
    const ages = m.get("ebb_agent_heartbeat_age_seconds")!.metrics;
    expect(ages.map((s) => s.labels!.node).sort()).toEqual(["node01", "node02", "node03"]);
    for (const s of ages) expect(Number(s.value)).toBeGreaterThanOrEqual(0);
    expect(m.get("ebb_elastic_job_mtct")?.type).toBe("GAUGE");

    expect((await c.api("DELETE", `/v1/jobs/${job}`)).status).toBe(200);
    await run.finished;
    await c.waitJob(job, ["CANCELLED"]);
    m = await metrics();
    expect(value(m, "ebb_jobs_ended_total", { state: "CANCELLED" })).toBe(2);
    expect(m.get("ebb_elastic_job_nodes")!.metrics).toHaveLength(0);
  }, 120_000);
});

describe("--log-format json", () => {
  test("the controller and the agents write one JSON object a line, with time, level, role, msg and node/job fields", () => {
    const lines = readdirSync(c.dir)
      .filter((f) => f.endsWith(".err"))
      .flatMap((f) => readFileSync(join(c.dir, f), "utf8").split("\n").filter(Boolean).map((l) => ({ f, l })));
    expect(lines.length).toBeGreaterThan(0);
    const records = lines.map(({ l }) => JSON.parse(l) as Record<string, unknown>);
    for (const r of records) {
      expect(typeof r.time).toBe("string");
      expect(Number.isNaN(Date.parse(r.time as string))).toBe(false);
      expect(["debug", "info", "warn", "error"]).toContain(r.level as string);
      expect(typeof r.role).toBe("string");
      expect(typeof r.msg).toBe("string");
    }
    expect(records.some((r) => r.role === "controller" && r.node === "node02" && String(r.msg).includes("registered"))).toBe(true);
    expect(records.some((r) => r.role === "agent" && r.node === "node01")).toBe(true);
    expect(records.some((r) => r.role === "controller" && typeof r.job === "number" && String(r.msg).includes("adapting"))).toBe(true);
  });

  test("a controller with --metrics-open serves /metrics to anyone; a bad --log-format is refused", async () => {
    const port = await freePort();
    const state = join(scratch, "open-state");
    const proc = Bun.spawn([BUN, join(ROOT, "src/main.ts"), "controller", "--listen", `127.0.0.1:${port}`, "--state-dir", state, "--metrics-open"], { stdout: "ignore", stderr: "pipe" });
    try {
      const r = await waitFor("the controller to serve /metrics", async () => {
        const res = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined);
        return res && { status: res.status, text: await res.text() };
      });
      expect(r.status).toBe(200);
      expect(value(parseMetrics(r.text), "ebb_nodes", { state: "IDLE" })).toBe(0);
      // Text stays the default.
      expect(readFileSync(join(state, "token"), "utf8").length).toBeGreaterThan(0);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
    expect(await new Response(proc.stderr).text()).toMatch(/^\S+Z controller info: /m);
    const bad = await c.ebb(["controller", "--log-format", "xml", "--state-dir", state]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--log-format xml: expected text or json");
    const both = await c.ebb(["controller", "--metrics-open", "--metrics-token", tokenFile, "--state-dir", state]);
    expect(both.code).toBe(2);
  });
});
