/**
 * How an adaptation fails (docs/adaptation.md §7.6, §9, §10.4), with real processes: a probe round
 * that cannot complete is bounded by the adaptation's deadline and lets its held ranks go on; a
 * launcher that never reports is failed by the controller; a grow whose joining ranks fail fails
 * only that grow; a node that goes DOWN while a fault adaptation is open joins it; a rank whose
 * agent speaks another protocol version is refused with what to do.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT, runProcess, startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { COUNTER, elasticRun } from "../support/elastic-run.ts";
import { PROTOCOL_VERSION } from "../../src/proto/version.ts";

const BUN = process.execPath;
const STALL = join(import.meta.dir, "programs/stall.ts");
/** The adaptation time limit of the first cluster (ebb controller --adapt-timeout). */
const ADAPT_TIMEOUT = 4;
/**
 * How long past the deadline its controller waits for a launcher's report (ebb controller
 * --adapt-report-grace; default 10 s, which the launcher that never reports would wait out).
 */
const REPORT_GRACE = 3;

/** The last iteration rank `rank` printed ("rank=R i=I"), or -1. */
function lastIteration(out: string, rank: number): number {
  const all = [...out.matchAll(new RegExp(`^rank=${rank} i=(\\d+)$`, "gm"))];
  return all.length ? Number(all[all.length - 1]![1]) : -1;
}

describe(`adaptations bounded by --adapt-timeout ${ADAPT_TIMEOUT}`, () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startCluster({ agents: 2, controllerArgs: ["--adapt-timeout", String(ADAPT_TIMEOUT), "--adapt-report-grace", String(REPORT_GRACE)] });
  });
  afterAll(async () => {
    await c?.stop();
  });

  test("a rank that stops probing: the probe round fails at the deadline, the ranks held at its target go on, the job stays at its size", async () => {
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "--", BUN, STALL, "20", "1", "10"], /stalled rank=1/);
    try {
      const r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 1 });
      expect(r.status).toBe(202);
      const a = await c.adaptationEnd(job.id, r.json.adaptationId);
      expect(a.state).toBe("FAILED");
      // Round 1 on a quiet machine; a later one when rank 0 ran past a round's target before it saw it
      // (the launcher then aims further), as happens under load.
      expect(a.message).toMatch(/^probe round \d+: not every rank reached probe call \d+ by the adaptation's deadline \(ebb controller --adapt-timeout\)$/);
      // Rank 0 was held at the target; released, it probes on.
      const at = lastIteration(job.output(), 0);
      await waitFor("rank 0 to go on after the failed round", () => lastIteration(job.output(), 0) >= at + 5);
      const detail = await c.job(job.id);
      expect([detail.state, detail.allocation.length]).toEqual(["RUNNING", 2]);
    } finally {
      // A failed check above must not leave the job on the nodes the next tests wait for.
      await c.api("DELETE", `/v1/jobs/${job.id}`);
      await job.finished;
    }
  }, 60_000);

  test("a launcher that never reports: the controller fails the adaptation after the deadline; the late order fails at once and the job resizes later", async () => {
    await c.waitNodes(2, "IDLE");
    const job = await elasticRun(c, ["-N", "2", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "--", BUN, COUNTER, "100000", "20"], /pid=\d+ rank=1/);
    job.run.kill("SIGSTOP");
    try {
      const r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 1 });
      expect(r.status).toBe(202);
      const a = await waitFor("the controller to fail the adaptation", async () => {
        const x = (await c.job(job.id)).adaptations.find((y: any) => y.id === r.json.adaptationId);
        return x.state !== "ADAPTING" ? x : undefined;
      }, 60_000);
      expect(a.state).toBe("FAILED");
      expect(a.message).toBe(`its launcher did not report its end within ${ADAPT_TIMEOUT + REPORT_GRACE} s (ebb controller --adapt-timeout ${ADAPT_TIMEOUT}, and ${REPORT_GRACE} s for the report)`);
      const detail = await c.job(job.id);
      expect([detail.state, detail.allocation.length]).toEqual(["RUNNING", 2]);
    } finally {
      job.run.kill("SIGCONT");
    }
    // The launcher's world is still the job's: the next resize commits.
    const again = await waitFor("a resize the launcher takes", async () => {
      const r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 1 });
      return r.status === 202 ? r : undefined;
    });
    expect((await c.adaptationEnd(job.id, again.json.adaptationId)).state).toBe("COMMITTED");
    await waitFor("rank 0 to see the world of 1", () => /world size=1/.test(job.output()));
    await c.api("DELETE", `/v1/jobs/${job.id}`);
    await job.finished;
  }, 90_000);

  test("a grow whose joining ranks fail: the grow fails, the job goes on at its size and completes", async () => {
    await c.waitNodes(2, "IDLE");
    const job = await elasticRun(c, ["-N", "1", "--elastic", "--min-nodes", "1", "--max-nodes", "2", "--", BUN, COUNTER, "150", "20", "fail-joining"], /pid=\d+ rank=0/);
    const r = await c.api("POST", `/v1/jobs/${job.id}/resize`, { nodes: 2 });
    expect(r.status).toBe(202);
    const a = await c.adaptationEnd(job.id, r.json.adaptationId);
    expect(a.state).toBe("FAILED");
    // Whichever the launcher saw first: the joining step's failure, or the joining ranks' count in adaptBegin.
    expect(a.message).toMatch(/^(the joining ranks' step failed: step \d+\.\d+ failed: rank \d+ on node\d+ exited with code 3|only 0 of 1 joining ranks reached adaptBegin)$/);
    const { out, err, code } = await job.finished;
    if (code !== 0) console.log(out, err);
    expect(code).toBe(0);
    expect(out).not.toMatch(/world size=2/);
    const detail = await c.job(job.id);
    expect(detail.state).toBe("COMPLETED");
    expect(detail.steps.find((s: any) => s.stepId === 1)?.state).toBe("FAILED");
  }, 60_000);
});

describe("a node that goes DOWN while a fault adaptation is open", () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startCluster({ agents: 3, heartbeat: 1 });
  });
  afterAll(async () => {
    for (const a of c?.agents.values() ?? []) a.kill("SIGCONT");
    await c?.stop();
  });

  test("joins it, as the launcher's own report would: 3 -> 1, the job completes", async () => {
    // It counts for up to 10 s, and ends once the fault adaptation has committed (its --end file).
    const end = join(c.dir, "down-end");
    const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "1", "--max-nodes", "3", "--", BUN, COUNTER, "500", "20", "--end", end], /pid=\d+ rank=2/);
    const nodes: string[] = (await c.job(job.id)).allocation;
    // The agent of allocation[1] stops (its links stay open: the launcher sees nothing, the
    // controller misses its heartbeats); the one of allocation[2] dies (the launcher reports it).
    const frozen = c.agents.get(nodes[1]!)!;
    frozen.kill("SIGSTOP");
    await Bun.sleep(300);
    const dead = c.agents.get(nodes[2]!)!;
    dead.kill("SIGKILL");
    await dead.exited;
    await waitFor("the fault adaptation to commit", async () => (await c.job(job.id)).adaptations[0]?.state === "COMMITTED", 60_000).finally(() => Bun.write(end, ""));
    const { out, err, code } = await job.finished;
    if (code !== 0) console.log(out, err, c.daemonLogs().slice(-5000));
    expect(code).toBe(0);
    const detail = await c.job(job.id);
    expect(detail.state).toBe("COMPLETED");
    expect(detail.adaptations.map((a: any) => [a.fromNodes, a.toNodes, a.state, [...a.removed].sort()])).toEqual([[3, 1, "COMMITTED", [nodes[1], nodes[2]].sort()]]);
    expect(out).toMatch(/world size=1/);
  }, 90_000);
});

test("a rank whose agent speaks another protocol version: initAdapt() refuses it and says what to do", async () => {
  const code = `import { initAdapt } from "${join(ROOT, "src/comm/index.ts")}"; await initAdapt();`;
  const run = (protocol: string | undefined) =>
    runProcess([BUN, "-e", code], { env: { ...process.env, EBB_ADAPT_SHM: "/dev/shm/ebb-none", ...(protocol === undefined ? {} : { EBB_ADAPT_PROTOCOL: protocol }) } });
  const older = await run(undefined);
  expect(older.code).not.toBe(0);
  expect(older.stderr).toMatch(new RegExp(`the agent speaks adaptation protocol 0, this program's ebb/comm \\(ebb [^)]+\\) protocol ${PROTOCOL_VERSION}: upgrade the node's ebb`));
  const newer = await run(String(PROTOCOL_VERSION + 1));
  expect(newer.stderr).toMatch(new RegExp(`the agent speaks adaptation protocol ${PROTOCOL_VERSION + 1}, .*: build the program with the agent's newer ebb/comm`));
});
