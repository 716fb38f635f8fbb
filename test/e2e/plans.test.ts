/**
 * The scheduler's plans, visible: GET /v1/plans (newest first, ?job, ?limit), a job's plan items in
 * GET /v1/jobs/{id} and `ebb show`, `ebb plans` (table and --json), each item's status; every
 * token sees every job's items, as everyone sees the queue (two system users made with useradd,
 * as in users.test.ts; lab-view.test.ts has a controller that keeps jobs private). A plan item committed but never carried out (the controller
 * stopped in between) is marked abandoned when the controller starts again.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { jobToken } from "../../src/proto/credential.ts";
import { startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { ensureUser } from "../support/users.ts";

const USERS = ["ebbt_alice", "ebbt_bob"] as const;
let c: TestCluster;
const tokens: Record<string, string> = {};
const ENDED = ["COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED", "TIMEOUT"];


beforeAll(async () => {
  expect(process.getuid!()).toBe(0); // the agents run jobs as their users
  for (const u of USERS) ensureUser(u);
  c = await startCluster({ agents: 2 });
  for (const [name, args] of [...USERS.map((u) => [u, ["--user", u]] as const), ["admin", ["--user", "ebbt_alice", "--admin"]] as const]) {
    const r = await c.ebb(["token", "create", ...args]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    tokens[name] = r.stdout.trim();
  }
});
afterAll(async () => {
  await c?.stop();
});

const submitAs = (token: string, body: Record<string, unknown>) => c.submit({ cwd: "/tmp", output: "/dev/null", argv: ["true"], ...body }, token);

const plansOf = async (query = "", token: string = c.token) => {
  const r = await c.api("GET", `/v1/plans${query}`, undefined, token);
  expect(r.status).toBe(200);
  return r.json.plans as any[];
};
const items = (plans: any[]) => plans.flatMap((p) => p.items);

test("each start is a plan item with its nodes, reason and status; ?job, ?limit, GET /v1/jobs/{id}, ebb show and ebb plans show them", async () => {
  const a = await submitAs(tokens.ebbt_alice!, { nodes: 2 });
  expect((await c.waitJob(a, ENDED)).state).toBe("COMPLETED");
  const b = await submitAs(tokens.ebbt_bob!, { nodes: 1 });
  expect((await c.waitJob(b, ENDED)).state).toBe("COMPLETED");

  const all = await plansOf();
  const ofA = items(all).filter((i) => i.jobId === a);
  expect(ofA).toEqual([
    {
      id: expect.any(Number),
      jobId: a,
      kind: "start",
      status: "done",
      reason: expect.any(String),
      outcome: null,
      nodes: ["node01", "node02"],
      tasks: null,
      from: null,
      to: null,
      rule: null,
      added: [],
      removed: [],
      limitRatio: null,
      limitSource: null,
    },
  ]);
  // Newest first; each plan names its policy.
  expect(all.map((p) => p.id)).toEqual([...all.map((p) => p.id)].sort((x, y) => y - x));
  expect(all.every((p) => p.policy === "ebb")).toBe(true);
  // The job's own account: its started event gives the same reason, on the same nodes.
  const detail = (await c.api("GET", `/v1/jobs/${a}`)).json;
  const planA = all.find((p) => p.items.some((i: any) => i.jobId === a));
  expect(detail.plans).toEqual([{ ...ofA[0], planId: planA.id, time: planA.time, policy: "ebb" }]);
  expect(detail.events.find((e: any) => e.kind === "started").message).toContain(ofA[0].reason);

  // ?job: only the plans with an item of that job, and only its items.
  const onlyA = await plansOf(`?job=${a}`);
  expect(onlyA.map((p) => p.id)).toEqual([planA.id]);
  expect(items(onlyA).map((i) => i.jobId)).toEqual([a]);
  // ?limit: the newest N.
  expect((await plansOf("?limit=1")).map((p) => p.id)).toEqual([all[0].id]);
  for (const q of ["?limit=0", "?limit=x", "?job=abc", "?bogus=1"]) expect({ q, status: (await c.api("GET", `/v1/plans${q}`)).status }).toEqual({ q, status: 400 });
  expect((await c.api("GET", "/v1/plans?job=999999")).status).toBe(404);

  // ebb show lists the job's plan items; ebb plans prints a table or the API's JSON.
  const show = await c.ebb(["show", String(a)]);
  expect(show.stdout).toContain("Scheduler plans:");
  expect(show.stdout).toMatch(new RegExp(`plan ${planA.id} \\(ebb\\)  start on node\\[01-02\\]  done: `));
  const table = await c.ebb(["plans", "--job", String(a)]);
  expect(table.code).toBe(0);
  expect(table.stdout.split("\n")[0]).toMatch(/^PLAN\s+TIME\s+POLICY\s+JOB\s+ITEM\s+STATUS\s+REASON/);
  expect(table.stdout).toMatch(new RegExp(`\\n${planA.id}\\s.*\\sebb\\s+${a}\\s+start on node\\[01-02\\]\\s+done\\s`));
  const json = await c.ebb(["plans", "--json", "--limit", "1000"]);
  expect(JSON.parse(json.stdout).plans.slice(0, all.length)).toEqual(all);
  const bad = await c.ebb(["plans", "--limit", "0"]);
  expect({ code: bad.code, stderr: bad.stderr }).toEqual({ code: 2, stderr: "ebb plans: --limit 0: must be at least 1\n" });

  // Every token sees every job's items: a user's, an admin's, a job's.
  const key = readFileSync(join(c.stateDir, "cluster.key"), "utf8").trim();
  for (const token of [tokens.ebbt_alice!, tokens.ebbt_bob!, tokens.admin!, jobToken(key, b)]) expect(items(await plansOf("", token)).map((i) => i.jobId)).toEqual(items(all).map((i) => i.jobId));
  expect((await plansOf(`?job=${b}`, tokens.ebbt_alice!)).map((p) => p.id)).toEqual((await plansOf(`?job=${b}`)).map((p) => p.id));
  const asBob = await c.ebb(["plans"], { env: { EBB_TOKEN: tokens.ebbt_bob! } });
  expect(asBob.stdout).toMatch(new RegExp(`\\s${a}\\s+start on node\\[01-02\\]`));
  expect(asBob.stdout).toMatch(new RegExp(`\\s${b}\\s+start on node0[12]`));
}, 120_000);

test("a plan item committed but not carried out when the controller stopped is abandoned after a restart; a later plan starts the job", async () => {
  const held = await c.submit({ argv: ["true"], output: "/dev/null", hold: true });
  expect((await c.job(held)).state).toBe("PENDING");
  c.controller.kill("SIGKILL");
  await c.controller.exited;
  // What a crash between a plan's commit and its start leaves: the item committed as accepted,
  // the job still pending (the item is marked done only in the start's own transaction).
  const db = new Database(join(c.stateDir, "ebb.db"));
  const planId = Number(db.query("INSERT INTO plans (time, policy, reservations) VALUES (?, 'ebb', '[]') RETURNING id").get(Date.now())!["id" as never]);
  db.query("INSERT INTO plan_items (plan_id, job_id, kind, status, reason, detail) VALUES (?, ?, 'start', 'accepted', 'ebb: EASY start', ?)").run(planId, held, JSON.stringify({ nodes: ["node01"] }));
  db.close();

  await c.startController();
  const abandoned = (await c.job(held)).plans;
  expect(abandoned).toEqual([expect.objectContaining({ planId, kind: "start", status: "abandoned", nodes: ["node01"], outcome: expect.stringContaining("the controller stopped before carrying it out") })]);
  expect(c.daemonLogs()).toContain("1 plan item was committed but not carried out before the controller stopped: marked abandoned");
  await c.waitNodes(2, "IDLE");
  expect((await c.api("POST", `/v1/jobs/${held}/release`)).status).toBe(200);
  expect((await c.waitJob(held, ENDED)).state).toBe("COMPLETED");
  const after = (await c.job(held)).plans;
  expect(after.map((i: any) => i.status)).toEqual(["abandoned", "done"]);
  expect(after[1].planId).toBeGreaterThan(planId);
  // Every start marked done belongs to a job that did start.
  for (const i of items(await plansOf("?limit=1000")).filter((x) => x.kind === "start" && x.status === "done")) expect({ job: i.jobId, started: (await c.job(i.jobId)).startTime !== null }).toEqual({ job: i.jobId, started: true });
}, 120_000);
