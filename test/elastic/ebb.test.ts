/**
 * The default policy `ebb` live, on 8 agents with the synthetic elastic program: a
 * communication-bound job (MTCT about 0.3) alone on the cluster is not shrunk (nobody waits, a
 * freed node would be worth nothing); an efficient job grows into the idle nodes beyond the arrival
 * reserve; a rigid job that
 * needs the lent nodes gets them back from it. Each decision is checked in the adaptation history
 * with its numbers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT, startCluster, waitFor, type TestCluster } from "../support/cluster.ts";

const BUN = process.execPath;
const SYNTHETIC = join(ROOT, "examples/synthetic.ts");

let c: TestCluster;
beforeAll(async () => {
  c = await startCluster({ agents: 8, heartbeat: 3, controllerArgs: ["--ers-interval", "1", "--settle", "1", "--min-samples", "2", "--sample-interval", "1"] });
});
afterAll(async () => {
  await c?.stop();
});

function synthetic(nodes: number, ratio: number, work: number, range: [number, number]) {
  return c.submit({
    argv: [BUN, SYNTHETIC, "--work", String(work), "--phases", `${ratio}:1000000`],
    nodes,
    elastic: true,
    minNodes: range[0],
    maxNodes: range[1],
    sampleInterval: 1,
    timeLimit: 600,
  });
}

const history = (j: any) => j.events.map((x: any) => `${x.time} ${x.kind}: ${x.message}`).join("\n");

async function until<T>(what: string, id: number, probe: (j: any) => T | undefined | false, timeoutMs = 120_000): Promise<T> {
  try {
    return await waitFor(
      what,
      async () => {
        const j = await c.job(id);
        if (!["PENDING", "RUNNING", "ADAPTING"].includes(j.state)) throw new Error(`job ${id} ended ${j.state}`);
        return probe(j);
      },
      timeoutMs,
    );
  } catch (e) {
    const j = await c.job(id);
    throw new Error(`${(e as Error).message}\nstate ${j.state} on ${j.allocation.length}; samples ${j.samples.map((x: any) => x.mtct.toFixed(3)).join(" ")}\n${history(j)}`);
  }
}

describe("ebb live: nodes sized by what they are worth now", () => {
  test("a communication-bound job alone on the cluster is not shrunk", async () => {
    expect((await c.api("GET", "/v1/jobs?state=PENDING,RUNNING,ADAPTING")).json.jobs).toHaveLength(0);
    const id = await synthetic(8, 0.3, 800, [1, 8]);
    // Enough samples for a model (2) many times over, so many passes saw it.
    const j = await until("10 timing samples of the inefficient job", id, (j) => j.state === "RUNNING" && j.samples.length >= 10 && j);
    expect(j.samples.slice(2).every((s: any) => s.mtct > 0.1)).toBe(true);
    expect(j.adaptations).toEqual([]);
    expect(j.allocation).toHaveLength(8);
    await c.api("DELETE", `/v1/jobs/${id}`);
    await c.waitJob(id, ["CANCELLED"]);
  }, 180_000);

  test("an efficient job grows into idle nodes but the arrival reserve; a rigid job that needs them gets them back", async () => {
    await c.waitNodes(8, "IDLE");
    const eff = await synthetic(4, 0.005, 4000, [2, 8]);
    // The arrival reserve (sched/policies/reserve.ts) keeps idle the most the jobs in view asked to
    // start on at once: here the efficient job's own minimum, 2. It grows into the other 2.
    const grown = await until("the efficient job to grow to 6 nodes", eff, (j) => j.state === "RUNNING" && j.allocation.length === 6 && j);
    const grows = grown.adaptations.filter((a: any) => a.state === "COMMITTED");
    expect(grows.length).toBeGreaterThanOrEqual(1);
    expect(grows[0].fromNodes).toBe(4);
    for (const a of grows) {
      expect(a.toNodes).toBeGreaterThan(a.fromNodes);
      expect(a.reason).toMatch(/^scheduler, grow: \d+ idle node\(s\) nothing else can use: remaining \d+ s -> \d+ s at \d nodes, predicted gain \d+ s > 2 adaptations of \d+ s \(grow, and give back\); (MTCT 0\.\d+ at \d nodes \(\d+ samples\)|iteration times at \d and \d nodes)$/);
    }
    const lent = grows.flatMap((a: any) => a.added);
    expect(lent).toHaveLength(2);

    // A rigid job for four nodes: two are idle (the reserve), the two others are lent.
    const rigid = await c.submit({ argv: ["sleep", "120"], nodes: 4, timeLimit: 300 });
    const started = await c.waitJob(rigid, ["RUNNING"], 120_000).catch(async (e) => {
      throw new Error(`${(e as Error).message}\n${history(await c.job(eff))}\n${history(await c.job(rigid))}`);
    });
    const e = await c.job(eff);
    const back = e.adaptations.filter((a: any) => a.state === "COMMITTED" && a.toNodes < a.fromNodes);
    expect(back).toHaveLength(1);
    expect(back[0]).toMatchObject({ fromNodes: 6, toNodes: 4 });
    // It waits alone on a cluster with no real queue: the loans come back for it (ebb.ts loansForHead).
    expect(back[0].reason).toMatch(new RegExp(`^scheduler, admit: waiting job ${rigid} lacks 2 node\\(s\\) and it starts at its 4 nodes after one give-back \\(\\d+ s\\), not at its reservation in \\d+ s: 2 of the 2 node\\(s\\) lent beyond its first size back$`));
    // The nodes given back are lent ones, and the rigid job runs on them and the two kept idle.
    expect(back[0].removed.every((n: string) => lent.includes(n))).toBe(true);
    expect(back[0].removed.every((n: string) => started.allocation.includes(n))).toBe(true);
    expect(started.allocation.filter((n: string) => grown.allocation.includes(n)).sort()).toEqual([...back[0].removed].sort());
    // It started once the shrink committed, not at the grown job's limit.
    expect(Date.parse(started.startTime)).toBeGreaterThanOrEqual(Date.parse(back[0].endedAt));
    expect(Date.parse(started.startTime)).toBeLessThan(Date.parse(e.startTime) + 600_000);
    const waited = (Date.parse(started.startTime) - Date.parse(started.submitTime)) / 1000;
    console.log(`rigid job started ${waited.toFixed(1)} s after its submission (shrink asked ${((Date.parse(back[0].requestedAt) - Date.parse(started.submitTime)) / 1000).toFixed(1)} s after it, committed in ${((Date.parse(back[0].endedAt) - Date.parse(back[0].requestedAt)) / 1000).toFixed(1)} s)`);
    // Every decision was one item of a plan committed to SQLite before it was carried out (sched/plan.ts),
    // shown by GET /v1/plans: the grows with the nodes they took, the shrink with the nodes it gave
    // back, the rigid job's start on them; each carried out (done).
    const planned = async (job: number) => {
      const plans = (await c.api("GET", `/v1/plans?job=${job}&limit=1000`)).json.plans as any[];
      expect(new Set(plans.map((p) => p.policy))).toEqual(new Set(["ebb"]));
      return plans.flatMap((p) => p.items).reverse();
    };
    const resizes = (await planned(eff)).filter((i: any) => i.kind === "resize");
    expect(resizes.filter((r: any) => r.rule === "grow").flatMap((r: any) => r.added).sort()).toEqual([...lent].sort());
    const admit = resizes.find((r: any) => r.rule === "admit");
    expect(admit).toMatchObject({ status: "done", from: 6, to: 4, added: [], removed: back[0].removed });
    expect(admit.reason).toBe(back[0].reason.replace(/^scheduler, admit: /, ""));
    const start = (await planned(rigid)).find((i: any) => i.kind === "start");
    expect(start).toMatchObject({ status: "done", outcome: null });
    expect([...start.nodes].sort()).toEqual([...started.allocation].sort());
    const shown = await c.ebb(["show", String(eff)]);
    expect(shown.stdout).toContain("predicted gain");
    // ebb show lists the job's plan items: the grows with the nodes they took, the shrink with those it gave back.
    expect(shown.stdout).toContain("Scheduler plans:");
    expect(shown.stdout).toMatch(/\(ebb\)  grow \d -> \d \(\+node[^)]*\)  done: /);
    expect(shown.stdout).toMatch(/\(ebb\)  admit 6 -> 4 \(-node[^)]*\)  done: /);
    for (const id of [rigid, eff]) await c.api("DELETE", `/v1/jobs/${id}`);
    for (const id of [rigid, eff]) await c.waitJob(id, ["CANCELLED"]);
  }, 300_000);
});
