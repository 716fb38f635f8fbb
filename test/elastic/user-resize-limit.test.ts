/**
 * Time limits are the user's to lower, not to raise, live: a user's elastic command job (real
 * agents, ranks of test/elastic/programs/counter.ts running as that user) shrunk by its user
 * through the API keeps its limit (it used to scale what was left by 2/1, and more), while the
 * cluster's token shrinking it scales the limit as the scheduler's resizes do; with the
 * controller's config `userResizeScalesLimit: true`, a user's shrink scales it too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { COUNTER } from "../support/elastic-run.ts";
import { ensureUser } from "../support/users.ts";
import { KEPT_LIMIT } from "../../src/sched/limits.ts";

const USER = "ebbt_alice";
let base: string;
let uid: number;

beforeAll(() => {
  expect(process.getuid!()).toBe(0); // jobs run as their users
  uid = ensureUser(USER);
  base = mkdtempSync(join(tmpdir(), "ebb-user-resize-"));
  Bun.spawnSync(["chmod", "755", base]);
  mkdirSync(join(base, USER), { mode: 0o700 });
  chownSync(join(base, USER), uid, uid);
});
afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

/** A cluster of 2 nodes, the user's token, and the user's elastic job running on both with a one-hour limit. */
async function setUp(controllerArgs: string[] = []) {
  const c = await startCluster({ agents: 2, controllerArgs });
  const token = (await c.ebb(["token", "create", "--user", USER])).stdout.trim();
  const id = await c.submit({ argv: [process.execPath, COUNTER, "100000", "20"], nodes: 2, elastic: true, minNodes: 1, maxNodes: 2, timeLimit: 3600, cwd: join(base, USER), output: join(base, USER, "counter-%j.out") }, token);
  const job = await c.waitJob(id, ["RUNNING"], 60_000);
  await waitFor("both ranks", () => /pid=\d+ rank=1/.test(c.read(job.output)), 60_000);
  return { c, token, id };
}

/**
 * A resize with `token` to its commit, once the job's elastic step can take it: it has attached,
 * and its ranks' business cards have reached the step's root (a resize just before fails, and
 * leaves the job as it was).
 */
async function resize(c: TestCluster, id: number, nodes: number, token: string) {
  const a = await waitFor("the elastic step to take a resize", async () => {
    const r = await c.api("POST", `/v1/jobs/${id}/resize`, { nodes }, token);
    if (r.status === 409 && r.json.error.code === "no_elastic_step") return undefined;
    expect(r.status).toBe(202);
    const a = await c.adaptationEnd(id, r.json.adaptationId);
    return a.state === "FAILED" && /has no business card/.test(a.message) ? undefined : a;
  }, 60_000);
  expect({ state: a.state, message: a.message }).toEqual({ state: "COMMITTED", message: null });
  return { adaptation: a, job: await c.job(id) };
}

describe("a user's own shrink", () => {
  let c: TestCluster;
  let token: string;
  let id: number;
  beforeAll(async () => {
    ({ c, token, id } = await setUp());
  }, 120_000);
  afterAll(async () => {
    await c?.stop();
  });

  test("keeps the limit (2 -> 1 nodes: still 1:00:00), and its grow back does not raise it; the cluster's token's shrink scales it", async () => {
    const shrunk = await resize(c, id, 1, token);
    expect(shrunk.adaptation.reason).toBe(`requested by user ${USER}`);
    expect({ timeLimit: shrunk.job.timeLimit, history: shrunk.job.limitHistory }).toEqual({ timeLimit: 3600, history: [] });
    expect(shrunk.job.plans.at(-1)).toMatchObject({ kind: "resize", from: 2, to: 1, limitRatio: 1, limitSource: KEPT_LIMIT });
    const grown = await resize(c, id, 2, token);
    expect(grown.job.timeLimit).toBe(3600);
    // An admin's shrink is the scheduler's kind: what is left of the limit doubles, plus the adaptation.
    const admin = await resize(c, id, 1, c.token);
    expect(admin.adaptation.reason).toBe("requested by the cluster's token");
    expect(admin.job.timeLimit).toBeGreaterThan(3600 + 3000);
    expect(admin.job.limitHistory).toEqual([{ time: expect.any(String), from: 3600, to: admin.job.timeLimit, reason: expect.stringMatching(/^resized 2 -> 1 nodes: \d+ s left x 2\.000 \(no measured model: at most 2\/1 slower\)/) }]);
  }, 120_000);
});

describe("with the controller's userResizeScalesLimit", () => {
  let c: TestCluster;
  let token: string;
  let id: number;
  beforeAll(async () => {
    const config = join(base, "scales.json");
    writeFileSync(config, JSON.stringify({ userResizeScalesLimit: true }));
    ({ c, token, id } = await setUp(["--config", config]));
  }, 120_000);
  afterAll(async () => {
    await c?.stop();
  });

  test("a user's shrink scales the limit as an admin's does", async () => {
    const shrunk = await resize(c, id, 1, token);
    expect(shrunk.job.timeLimit).toBeGreaterThan(3600 + 3000);
    expect(shrunk.job.limitHistory[0].reason).toMatch(/^resized 2 -> 1 nodes: \d+ s left x 2\.000 /);
  }, 120_000);
});
