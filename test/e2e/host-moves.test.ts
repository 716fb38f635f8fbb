/**
 * Issue 34's two halves together, on a 4-node loopback cluster of real agents with host rules (a
 * config file) and the controller's moves: a real CPU hog outside ebb makes a node overloaded and
 * an elastic Jacobi moves off it to the free node with the fixed-size answer; the same hog switched
 * on and off faster than the dwell changes no state and moves nothing; a node a rule says is busy
 * (a site command whose exit status a file controls) takes no new job.
 *
 * As in host-states.test.ts, each node's cpu.other reads its own cgroup and the hog runs in the
 * loaded node's (test/support/host-rules.ts). cpu.other is not smoothed (smoothing 0):
 * each sample is the hog's CPU in that interval, so the dwell alone stands between the signal and
 * the state. Needs root and a writable cgroup v2 hierarchy.
 */
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { ROOT, type TestCluster, waitFor } from "../support/cluster.ts";
import { elasticRun } from "../support/elastic-run.ts";
import { holdEnd } from "../support/hold-end.ts";
import { HostRulesCluster } from "../support/host-rules.ts";

const BUN = process.execPath;
const JACOBI = join(ROOT, "examples/jacobi.ts");
const NODES = ["node01", "node02", "node03", "node04"];
/** Seconds the rules must say a state before the node takes it. */
const DWELL = 3;
/**
 * The on-off load's cycles: on 0.5 s, off 1.5 s. Together the on-phases last more than the dwell
 * (4 s), so a dwell that added up time over the threshold instead of waiting for it unbroken
 * would change the state.
 */
const CYCLES = 8;

let h: HostRulesCluster;
let c: TestCluster;

beforeAll(async () => {
  h = new HostRulesCluster({ nodes: NODES, controllerArgs: ["--policy", "easy"], hostStates: { interval: 0.5, smoothing: 0, dwell: DWELL }, flags: () => ["busy"] });
  c = h.c;
  await h.start();
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const hold = holdEnd(() => c.dir);

beforeEach(async () => {
  await c.waitNodes(NODES.length, "IDLE", 60_000);
  await waitFor("every node free", async () => Object.values(await h.hosts()).every((n) => n.state === "free" && n.since !== null), 60_000);
});

const events = async (id: number, kind: string) => ((await c.job(id)).events as { kind: string; message: string }[]).filter((e) => e.kind === kind);

test("a node a rule says is busy takes no new job; once free, the job starts there", async () => {
  h.setFlag("node04", "busy", true);
  expect(await h.waitHost("node04", "busy")).toMatchObject({ rule: `cmd.busy >= 1 for ${DWELL} s`, inputs: { "cmd.busy": 1 } });
  const there = await c.submit({ argv: ["true"], nodes: 1, nodelist: ["node04"] });
  // A later job that starts shows a pass has weighed the first one since it was submitted.
  const later = await c.submit({ argv: ["true"], nodes: 1 });
  expect((await c.waitJob(later, ["COMPLETED"], 60_000)).allocation).not.toContain("node04");
  expect((await c.job(there)).state).toBe("PENDING");
  expect((await h.hosts()).node04!.state).toBe("busy");
  h.setFlag("node04", "busy", false);
  expect((await c.waitJob(there, ["COMPLETED"], 90_000)).allocation).toEqual(["node04"]);
}, 240_000);

test("a load switched on and off faster than the dwell changes no state and moves nothing", async () => {
  const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "1", "--max-nodes", "4", "--", BUN, JACOBI, "--iters", "100000", "--sleep", "20", "--every", "50"], /iteration 50 on 3 ranks/);
  const allocation: string[] = (await c.job(job.id)).allocation;
  const loaded = allocation[allocation.length - 1]!;
  const before = (await h.hosts())[loaded]!;
  const hog = h.startHog(loaded);
  // On for 0.5 s, off for 1.5 s: each on-phase is over the threshold, none lasts the dwell. What
  // the agent samples is the group's CPU per interval, read here too (its rule's inputs reach the
  // controller only on a change or every 15 s).
  const usage = () => Number(/^usage_usec (\d+)$/m.exec(readFileSync(join(h.groupDir(loaded), "cpu.stat"), "utf8"))![1]) / 1e6;
  let peak = 0;
  const states = new Set<string>();
  let done = false;
  const watch = (async () => {
    while (!done) {
      states.add((await h.hosts())[loaded]!.state);
      await Bun.sleep(200);
    }
  })();
  try {
    for (let i = 0; i < CYCLES; i++) {
      const [u0, t0] = [usage(), performance.now()];
      hog.kill("SIGCONT");
      await Bun.sleep(500);
      hog.kill("SIGSTOP");
      peak = Math.max(peak, (usage() - u0) / ((performance.now() - t0) / 1000) / cpus().length);
      await Bun.sleep(1500);
    }
  } finally {
    done = true;
    await watch;
    await h.stopHog();
  }
  expect(peak).toBeGreaterThan(0.005); // the signal crossed the overloaded threshold
  expect([...states]).toEqual(["free"]);
  expect((await h.hosts())[loaded]!.since).toBe(before.since);
  const detail = await c.job(job.id);
  expect(detail.adaptations).toEqual([]);
  expect(await events(job.id, "moved")).toEqual([]);
  expect(detail.plans.filter((p: { rule: string }) => p.rule === "move")).toEqual([]);
  expect((await c.ebb(["cancel", String(job.id)])).code).toBe(0);
  await job.finished;
}, 240_000);

test("a CPU hog outside ebb makes a node overloaded within the dwell; an elastic Jacobi there moves to the free node and finishes with the fixed-size answer", async () => {
  // Paced (1000 x 10 ms) for the move to land mid-run on a quiet machine: the dwell alone is 3 s.
  const iters = ["--iters", "1000"];
  const fixed = await c.ebb(["run", "-N", "1", "--", BUN, JACOBI, ...iters]);
  expect(fixed.code).toBe(0);
  const want = /checksum=(\w+) heat=(\S+)/.exec(fixed.stdout)!;
  await c.waitNodes(NODES.length, "IDLE", 60_000);

  const job = await elasticRun(c, ["-N", "3", "--elastic", "--min-nodes", "1", "--max-nodes", "4", "--", BUN, JACOBI, ...iters, "--sleep", "10", "--every", "50", ...hold.args()], /iteration 50 on 3 ranks/);
  const before: string[] = (await c.job(job.id)).allocation;
  const spare = NODES.find((n) => !before.includes(n))!;
  const loaded = before[before.length - 1]!; // its last node: the move is one swap
  h.startHog(loaded);
  try {
    const over = await h.waitHost(loaded, "overloaded");
    expect(over).toMatchObject({ rule: `cpu.other >= 0.005 for ${DWELL} s` });
    expect(over.inputs["cpu.other"]).toBeGreaterThan(0.005);
    const moved = await waitFor("the move to commit", async () => (await events(job.id, "moved"))[0], 90_000);
    expect(moved.message).toMatch(new RegExp(`^moved off ${loaded} onto ${spare} at 3 nodes in \\d+ ms \\(request to commit\\)$`));
    const detail = await c.job(job.id);
    expect(detail.allocation).toEqual([...before.slice(0, -1), spare]);
    const item = detail.plans.find((p: { rule: string; status: string }) => p.rule === "move" && p.status === "done");
    expect(item.reason).toContain(`move off ${loaded} (overloaded: cpu.other >= 0.005 for ${DWELL} s): to ${spare}`);
    // `ebb nodes --json` says why the node was left.
    const listed = JSON.parse((await c.ebb(["nodes", "--json"])).stdout).nodes.find((n: { name: string }) => n.name === loaded);
    expect(listed.host).toMatchObject({ state: "overloaded", rule: `cpu.other >= 0.005 for ${DWELL} s` });
    expect(listed.host.inputs["cpu.other"]).toBeGreaterThan(0);
  } finally {
    await h.stopHog();
  }
  hold.release();
  const { out, code } = await job.finished;
  expect(code).toBe(0);
  const got = /checksum=(\w+) heat=(\S+)/.exec(out)!;
  expect([got[1], got[2]]).toEqual([want[1], want[2]]);
  expect(out).toContain("now 3 ranks (was 3)");
  expect(await h.waitHost(loaded, "free")).toMatchObject({ rule: "" });
}, 300_000);
