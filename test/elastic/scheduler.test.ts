/**
 * The elastic scheduler in a live controller: real agents, real synthetic elastic programs whose
 * communication share is known, scheduling passes every second. The scheduler must halve the
 * communication-bound job, lend the nodes it frees to the computation-bound one (rule 2), take
 * them back for a waiting job (rule 1), and leave a job alone when its own settings say so.
 * Every decision is checked in the adaptation history and the job's events, with its reason.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, startCluster, waitFor, type TestCluster } from "../support/cluster.ts";

const BUN = process.execPath;
const SYNTHETIC = join(ROOT, "examples/synthetic.ts");

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({
    agents: 8,
    heartbeat: 3,
    controllerArgs: ["--policy", "ers", "--ers-interval", "1", "--settle", "1", "--min-samples", "2", "--sample-interval", "1"],
  });
});
afterAll(async () => {
  await c?.stop();
});

/** A synthetic elastic job: `ratio` communication per unit of computation, forever (until cancelled). */
function synthetic(nodes: number, ratio: number, work: number, extra: Record<string, unknown> = {}) {
  return c.submit({
    argv: [BUN, SYNTHETIC, "--work", String(work), "--phases", `${ratio}:1000000`],
    nodes,
    elastic: true,
    minNodes: 1,
    maxNodes: 8,
    sampleInterval: 1,
    timeLimit: 600,
    ...extra,
  });
}

const committed = (job: any) => job.adaptations.filter((a: any) => a.state === "COMMITTED");

/** Waits for the job to hold `nodes` nodes; on a timeout the error carries what the scheduler said. */
async function waitSize(id: number, nodes: number, timeoutMs = 60_000): Promise<any> {
  try {
    return await waitFor(
      `job ${id} to run on ${nodes} nodes`,
      async () => {
        const j = await c.job(id);
        return j.state === "RUNNING" && j.allocation.length === nodes ? j : undefined;
      },
      timeoutMs,
    );
  } catch (e) {
    const j = await c.job(id);
    const said = j.events.map((x: any) => `${x.time} ${x.kind}: ${x.message}`).join("\n");
    throw new Error(`${(e as Error).message}\nstate ${j.state} on ${j.allocation.length}; samples ${j.samples.map((x: any) => x.mtct.toFixed(4)).join(" ")}\n${said}`);
  }
}

describe("the elastic scheduler resizes running jobs by their measured efficiency", () => {
  let high = 0;
  let low = 0;

  test("two jobs at 4 nodes: the communication-bound one is halved to its minimum, the other grows into the freed nodes", async () => {
    // The dissertation's experiment (§14.3) with the synthetic app: MTCT 0.3 against 0.005.
    high = await synthetic(4, 0.3, 800);
    // Two cores run all eight nodes here, so busy neighbours put spikes into the samples of the
    // efficient job: its own thresholds (within the default limits) keep the test about the rules.
    low = await synthetic(4, 0.005, 4000, { elasticSettings: { lower: 0.05, upper: 0.5 } });
    await c.waitJob(high, ["RUNNING"]);
    await c.waitJob(low, ["RUNNING"]);

    // 4 -> 2 -> 1 (each halving waits for new samples and the settle time); 4 -> 6 -> 7.
    const h = await waitSize(high, 1, 90_000);
    const l = await waitSize(low, 7, 90_000);
    const shrinks = committed(h);
    expect(shrinks.map((a: any) => [a.fromNodes, a.toNodes])).toEqual([
      [4, 2],
      [2, 1],
    ]);
    for (const a of shrinks) expect(a.reason).toMatch(/^scheduler, shrink: MTCT avg 0\.\d+ trend 0\.\d+: above upper 0\.1, halve \(mandatory\)/);
    const grows = committed(l);
    expect(grows.length).toBeGreaterThanOrEqual(1);
    expect(grows[0].fromNodes).toBe(4);
    expect(grows.at(-1).toNodes).toBe(7);
    for (const a of grows) expect(a.reason).toMatch(/^scheduler, fill: rule 2 \(resource filling\): \d idle node\(s\); MTCT avg .*below lower 0\.05, may double: .*gain .* > cost/);
    // Exactly the nodes the first job gave up.
    const released = shrinks.flatMap((a: any) => a.removed).sort();
    expect(grows.flatMap((a: any) => a.added).sort()).toEqual(released);
    expect(h.events.some((e: any) => e.kind === "adapting" && /above upper/.test(e.message))).toBe(true);
    expect(h.samples.length).toBeGreaterThanOrEqual(4);
    const nodes = (await c.api("GET", "/v1/nodes")).json.nodes;
    expect(nodes.filter((n: any) => n.jobId === null)).toHaveLength(0);

    // With every node busy the scheduler says why each keeps its size.
    await waitFor("both jobs to be told why they keep their size", async () => {
      const [hj, lj] = [await c.job(high), await c.job(low)];
      const said = (j: any, re: RegExp) => j.events.some((e: any) => e.kind === "scheduler" && re.test(e.message));
      return said(hj, /^kept at 1: .*above upper 0\.1, halve \(mandatory\), but already at its minimum$/) && said(lj, /^kept at 7: MTCT avg /);
    });
  }, 150_000);

  test("a waiting job gets nodes back from the job that grew (rule 1, time balancing)", async () => {
    expect(high).toBeGreaterThan(0);
    const rigid = await c.submit({ argv: ["sleep", "60"], nodes: 2 });
    const started = await c.waitJob(rigid, ["RUNNING"], 60_000);
    expect(started.allocation).toHaveLength(2);
    const l = await waitSize(low, 5);
    const last = committed(l).at(-1);
    expect(last).toMatchObject({ fromNodes: 7, toNodes: 5 });
    expect(last.reason).toContain(`rule 1 (time balancing): job ${rigid} waits for 2 more nodes`);
    expect(started.allocation.sort()).toEqual([...last.removed].sort());
    // The job at its minimum gave nothing.
    expect((await c.job(high)).allocation).toHaveLength(1);
    for (const id of [rigid, high, low]) await c.api("DELETE", `/v1/jobs/${id}`);
    for (const id of [rigid, high, low]) await c.waitJob(id, ["CANCELLED"]);
  }, 90_000);

  test("a batch job's own settings (#EBB --elastic-settings) are clamped to the limits and followed", async () => {
    // Whatever an earlier test left running goes first.
    for (const j of (await c.api("GET", "/v1/jobs?state=PENDING,RUNNING,ADAPTING")).json.jobs) await c.api("DELETE", `/v1/jobs/${j.id}`);
    await c.waitNodes(8, "IDLE");
    // Communication-bound, but its owner tolerates more than the limits allow (upper at most 1):
    // it must be kept at its size, and told about the clamp.
    writeFileSync(
      join(c.dir, "tolerant.sh"),
      `#!/bin/sh\n#EBB --elastic --min-nodes 1 --max-nodes 8 --sample-interval 1\n#EBB --elastic-settings upper=2,settle=30\nebb run -- ${BUN} ${SYNTHETIC} --work 400 --phases 0.3:1000000\n`,
    );
    const submitted = await c.ebb(["submit", "--parsable", "-N", "2", "-t", "10:00", "tolerant.sh"]);
    expect(submitted.stderr).toBe("");
    const tolerant = Number(submitted.stdout.trim());
    const j = await waitFor(
      "the scheduler to explain why it keeps the job",
      async () => {
        const j = await c.job(tolerant);
        return j.events.some((e: any) => /^upper 2 clamped to 1 \(allowed 0\.02-1\); kept at 2: MTCT avg 0\.\d+ trend 0\.\d+: within \[0\.01, 1\], hold$/.test(e.message)) ? j : undefined;
      },
      60_000,
    );
    expect(j.elasticSettings).toEqual({ upper: 2, settle: 30 });
    expect(j.adaptations).toHaveLength(0);
    expect(j.allocation).toHaveLength(2);
    const shown = await c.ebb(["show", String(tolerant)]);
    expect(shown.stdout).toContain("Settings     upper=2,settle=30");
    await c.api("DELETE", `/v1/jobs/${tolerant}`);
    await c.waitJob(tolerant, ["CANCELLED"]);
  }, 90_000);
});
