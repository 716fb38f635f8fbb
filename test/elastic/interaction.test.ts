/**
 * The dissertation's §14.3 on a local cluster of 9 agents, with the EPOP examples under the
 * elastic scheduler (policy ers, a pass every second):
 * 1. a communication-bound Cannon (tiny matrices, no computation to speak of) and a
 *    computation-bound Gaussian elimination (a pause per pivot) started together: the scheduler
 *    shrinks the first (to 1, its square below the halving's 2) and grows the second into the
 *    nodes it frees (resource filling);
 * 2. three Cannon instances of different lengths on 4 nodes each, the third waiting: time
 *    balancing (rule 1) shrinks the running one nearest its end (to a square) and the third starts
 *    while both still run; the same three under --policy easy: the third starts only once one has
 *    ended. The time limits are set against the programs' lengths, so that rule 1 picks by the
 *    EPOP progress (remaining time) and not by the limits: the scheduler using progress.
 * Everything is asserted on the jobs' adaptation histories and events; the waits have generous
 * ceilings and no timing is asserted.
 *
 * The roles of the two applications are the dissertation's reversed in part 1: ERS lets a job
 * grow to at most double its size, and no square lies between 4 and 8 (or 1 and 2), so a square
 * job cannot grow on 9 nodes; the halving of a square job (4 -> 2) rounds down to 1.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT, startCluster, type TestCluster } from "../support/cluster.ts";

const BUN = process.execPath;
const CANNON = join(ROOT, "examples/epop/cannon.ts");
const GE = join(ROOT, "examples/epop/ge.ts");
const SQUARES = [1, 4, 9];
const ERS = ["--ers-interval", "1", "--settle", "1", "--min-samples", "2", "--sample-interval", "1"];

let c: TestCluster | undefined;
afterAll(async () => {
  await c?.stop();
});

const cluster = (): TestCluster => c!;
const committed = (job: any) => job.adaptations.filter((a: any) => a.state === "COMMITTED").sort((a: any, b: any) => a.id - b.id);

/** What the job's events say, for a failure message. */
async function story(id: number): Promise<string> {
  const j = await c!.job(id);
  return `job ${id} ${j.state} on ${j.allocation.length}; samples ${(j.samples ?? []).map((x: any) => x.mtct.toFixed(4)).join(" ")}\n${j.events.map((e: any) => `  ${e.time} ${e.kind}: ${e.message}`).join("\n")}`;
}

async function until<T>(what: string, ids: number[], probe: () => Promise<T | undefined | false>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let why = `timed out after ${timeoutMs} ms waiting for ${what}`;
  while (Date.now() < deadline) {
    // A job that failed (a node lost under load, a crash) ends the wait at once.
    const failed = [];
    for (const id of ids) if (["FAILED", "NODE_FAIL", "TIMEOUT"].includes((await c!.job(id)).state)) failed.push(id);
    if (failed.length > 0) {
      why = `job(s) ${failed.join(", ")} failed while waiting for ${what}`;
      break;
    }
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    await Bun.sleep(250);
  }
  throw new Error(`${why}\n${(await Promise.all(ids.map(story))).join("\n")}`);
}

/** An elastic Cannon instance: square sizes 1-`max`, `iters` iterations of `sleep` ms each. */
function cannon(nodes: number, iters: number, sleep: number, extra: Record<string, unknown> = {}) {
  return c!.submit({
    argv: [BUN, CANNON, "--n", "36", "--iters", String(iters), "--sleep", String(sleep), "--check", "0"],
    nodes,
    elastic: true,
    minNodes: 1,
    maxNodes: 9,
    sizes: "square",
    sampleInterval: 1,
    ...extra,
  });
}

describe("§14.3: Cannon and Gaussian elimination under the elastic scheduler", () => {
  test("communication-bound Cannon and computation-bound GE started together: Cannon shrinks (to a square), GE grows", async () => {
    c = await startCluster({ agents: 9, heartbeat: 5, controllerArgs: ["--policy", "ers", ...ERS] });
    try {
      await commVersusCompute();
    } finally {
      await c.stop();
      c = undefined;
    }
  }, 400_000);

  async function commVersusCompute() {
    const c = cluster();
    // Cannon on 4x4 blocks of an 8x8 matrix with a 1 ms pause: nearly all of an iteration is the shifts.
    const comm = await c.submit({
      argv: [BUN, CANNON, "--n", "8", "--iters", "100000000", "--sleep", "1", "--check", "0"],
      nodes: 4,
      elastic: true,
      minNodes: 1,
      maxNodes: 9,
      sizes: "square",
      sampleInterval: 1,
      timeLimit: 900,
    });
    // GE with a 400 ms pause per pivot: the broadcasts are a small share. Its own thresholds
    // (within the limits) keep spikes from the neighbours on two cores out of the test.
    const compute = await c.submit({
      argv: [BUN, GE, "--n", "1500", "--sleep", "400", "--check", "0"],
      nodes: 5,
      elastic: true,
      minNodes: 1,
      maxNodes: 9,
      sampleInterval: 1,
      timeLimit: 900,
      elasticSettings: { lower: 0.05, upper: 0.5 },
    });
    const ids = [comm, compute];
    await until("Cannon to shrink to 1 node and GE to grow into the freed nodes", ids, async () => {
      const [a, b] = [await c!.job(comm), await c!.job(compute)];
      return a.state === "RUNNING" && a.allocation.length === 1 && b.state === "RUNNING" && b.allocation.length > 5;
    });
    const [a, b] = [await c.job(comm), await c.job(compute)];
    const shrinks = committed(a);
    expect(shrinks.length).toBeGreaterThanOrEqual(1);
    for (const s of shrinks) {
      expect(s.toNodes).toBeLessThan(s.fromNodes);
      expect(SQUARES).toContain(s.toNodes);
      expect(s.reason).toMatch(/^scheduler, shrink: MTCT avg \S+ trend \S+: above upper 0\.1, halve \(mandatory\)/);
    }
    expect(shrinks[0].reason).toContain("2 rounded to 1, a valid size");
    const grows = committed(b);
    expect(grows.length).toBeGreaterThanOrEqual(1);
    for (const g of grows) {
      expect(g.toNodes).toBeGreaterThan(g.fromNodes);
      expect(g.reason).toMatch(/^scheduler, fill: rule 2 \(resource filling\)/);
    }
    for (const id of ids) await c.api("DELETE", `/v1/jobs/${id}`);
  }

  /**
   * Three Cannons: 4 + 4 nodes running, a third on 4 submitted once both run (1 node idle). The
   * time limits say the opposite of the programs' progress: `quick` has the longer limit (600 s)
   * but few iterations, `slow` the shorter limit (300 s) but twenty times as many.
   */
  async function threeCannons(policy: string) {
    c = await startCluster({ agents: 9, heartbeat: 5, controllerArgs: ["--policy", policy, ...ERS] });
    try {
      return await threeOn(policy);
    } finally {
      await c.stop();
      c = undefined;
    }
  }

  async function threeOn(policy: string) {
    const c = cluster();
    // With lower 0 and upper 1 (within the limits) both are always candidates that hold their
    // size, whatever noise two shared cores add to their MTCT.
    const settings = { elasticSettings: { lower: 0, upper: 1 } };
    // quick's pauses end once `gate` exists (EBB_TEST_PACE, examples/epop/args.ts): see below.
    const gate = join(c.dir, `pace-quick-${policy}`);
    const quick = await cannon(4, 150, 150, { timeLimit: 600, env: { EBB_TEST_PACE: gate }, ...settings });
    const slow = await cannon(4, 3000, 150, { timeLimit: 300, ...settings });
    const ids = [quick, slow];
    // Both have timing samples and have reported progress before the third comes.
    await until("both to have timing samples and progress", ids, async () => {
      for (const id of ids) {
        const j = await c.job(id);
        // A few iterations done: an estimate of the time left from one or two would be noise.
        if (j.state !== "RUNNING" || j.samples.length < 3 || !(j.program?.iteration >= 5) || !(j.program?.remainingSeconds > 0)) return false;
      }
      return true;
    });
    const left = await Promise.all(ids.map(async (id) => (await c.job(id)).program.remainingSeconds as number));
    const third = await cannon(4, 20, 100, { timeLimit: 120, minNodes: 4, maxNodes: 4 });
    const all = [...ids, third];
    if (policy === "easy") {
      // The third waits for quick's end. Once passes have had 5 s to start it early (ers did in
      // well under 1 s), quick runs its remaining iterations at full speed rather than paced.
      const since = Date.now();
      await until("a pass to weigh the third Cannon, and 5 s", all, async () => (await c.job(third)).reason !== null && Date.now() - since > 5000);
      await Bun.write(gate, "");
    }
    const started = await until(`the third Cannon to start under ${policy}`, all, async () => {
      const j = await c.job(third);
      return j.startTime !== null ? j : undefined;
    }, 400_000);
    const [q, s] = [await c.job(quick), await c.job(slow)];
    // For a failure message: what each job went through, and the scheduler's plans with their notes.
    const told = `${(await Promise.all(all.map(story))).join("\n")}\nplans:\n${JSON.stringify((await c.api("GET", "/v1/plans?limit=40")).json, null, 1)}`;
    for (const id of all) await c.api("DELETE", `/v1/jobs/${id}`);
    return { third: started, quick: q, slow: s, left, told };
  }

  test("three Cannons: time balancing shrinks the one its progress says ends first, and the third starts while both still run; under easy it waits", async () => {
    const ers = await threeCannons("ers");
    // Progress says quick ends first, though its time limit is the longer one.
    expect(ers.left[0]).toBeLessThan(ers.left[1]!);
    const start = Date.parse(ers.third.startTime);
    for (const j of [ers.quick, ers.slow]) expect(j.endTime === null || Date.parse(j.endTime) > start).toBe(true);
    // Rule 1 shrank quick (to a square), not slow: by the limits alone slow would have been picked.
    const balanced = [...committed(ers.quick), ...committed(ers.slow)].filter((a: any) => /rule 1 \(time balancing\)/.test(a.reason));
    expect(balanced.length).toBeGreaterThanOrEqual(1);
    if (committed(ers.slow).some((a: any) => a.toNodes < a.fromNodes)) throw new Error(`the slow Cannon was shrunk:\n${ers.told}`);
    for (const a of balanced) {
      expect(a.toNodes).toBeLessThan(a.fromNodes);
      expect(SQUARES).toContain(a.toNodes);
      expect(a.reason).toContain(`job ${ers.third.id} waits`);
    }
    expect(committed(ers.quick)[0].reason).toMatch(/rule 1 \(time balancing\)/);

    const easy = await threeCannons("easy");
    // Under easy nothing shrinks: the third starts only once quick has ended.
    expect([...committed(easy.quick), ...committed(easy.slow)]).toHaveLength(0);
    expect(easy.quick.endTime).not.toBeNull();
    expect(Date.parse(easy.third.startTime)).toBeGreaterThanOrEqual(Date.parse(easy.quick.endTime));
    // The third's wait, for the report (not asserted: two shared cores).
    const wait = (r: typeof ers) => (Date.parse(r.third.startTime) - Date.parse(r.third.submitTime)) / 1000;
    console.log(`§14.3 three Cannons: third waited ${wait(ers).toFixed(1)} s under ers, ${wait(easy).toFixed(1)} s under easy`);
  }, 1_200_000);
});
