/**
 * A lab's cluster: fair share, partitions and limits with real processes. Two system users (made
 * with useradd; the suite runs as root) with their own tokens; two agents of one core each; the
 * controller's config file defines partitions (one of them limited to node02, one with a per-user
 * running-jobs limit) and keeps the default multifactor priority.
 * - fair share: one user's big array does not hold the other's job until it drains (first: both
 *   users have used nothing before it);
 * - a partition's jobs run on its nodes only, and wait for them while other nodes are free;
 * - a per-user running-jobs limit keeps a job waiting with Slurm's reason while a core is free;
 * - unknown and forbidden partitions, MaxSubmitJobs and a partition's time limit are refused or
 *   waited on with clear reasons; ebb partitions, ebb priority and ebb share show it all;
 * - ebb queue -p and ebb history -p list the jobs of the partitions named.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { ensureUser } from "../support/users.ts";

const USERS = ["ebbt_alice", "ebbt_bob"] as const;
type User = (typeof USERS)[number];
let c: TestCluster;
let base: string;
const tokens: Record<string, string> = {};

const CONFIG = {
  partitions: [
    { name: "main", nodes: "ALL", default: true },
    { name: "second", nodes: "node02", maxTime: 600, tier: 0 },
    { name: "limited", nodes: "ALL", limits: { maxJobs: 1, maxSubmitJobs: 2 } },
    { name: "alices", nodes: "ALL", allowUsers: ["ebbt_alice"] },
  ],
};

beforeAll(async () => {
  expect(process.getuid!()).toBe(0);
  base = mkdtempSync(join(tmpdir(), "ebb-queue-"));
  Bun.spawnSync(["chmod", "755", base]);
  for (const u of USERS) {
    const uid = ensureUser(u);
    mkdirSync(join(base, u), { mode: 0o700 });
    chownSync(join(base, u), uid, uid);
  }
  writeFileSync(join(base, "controller.json"), JSON.stringify(CONFIG));
  c = await startCluster({ agents: 2, cpus: 1, controllerArgs: ["--config", join(base, "controller.json")] });
  for (const u of USERS) {
    const r = await c.ebb(["token", "create", "--user", u]);
    expect(r.code).toBe(0);
    tokens[u] = r.stdout.trim();
  }
});
afterAll(async () => {
  await c?.stop();
  if (base) rmSync(base, { recursive: true, force: true });
});

const submitAs = (user: User, body: Record<string, unknown>) => c.submit({ cwd: join(base, user), output: "/dev/null", ...body }, tokens[user]!);
const tryAs = (user: User, body: Record<string, unknown>) => c.api("POST", "/v1/jobs", { cwd: join(base, user), output: "/dev/null", ...body }, tokens[user]!);
const cancelAll = async (ids: number[]) => {
  for (const id of ids) await c.api("DELETE", `/v1/jobs/${id}`);
  for (const id of ids) await c.waitJob(id, ["CANCELLED", "COMPLETED", "FAILED"]);
};

test("fair share: bob's job starts when a core frees, before alice's array drains; ebb priority and ebb share say why", async () => {
  // Alice's array of 8 one-core tasks fills both cores; bob's job comes after all of them.
  const array = await submitAs("ebbt_alice", { argv: ["sleep", "4"], array: "0-7", timeLimit: 60 });
  await waitFor("two of alice's tasks running", async () => {
    const { json } = await c.api("GET", `/v1/jobs?array=${array}`);
    return json.jobs.filter((j: { state: string }) => j.state === "RUNNING").length === 2;
  });
  const bob = await submitAs("ebbt_bob", { argv: ["sleep", "1"], timeLimit: 60 });
  const bobSubmit = Date.parse((await c.job(bob)).submitTime);
  // While it waits, bob's job is first in priority order: alice used the cores, bob did not.
  const prio = await waitFor("bob's job in ebb priority", async () => {
    const r = await c.ebb(["priority", "--json"]);
    const jobs = JSON.parse(r.stdout).jobs as { jobId: number; user: string; fairshare: number; priority: number }[];
    return jobs.some((j) => j.jobId === bob) ? jobs : undefined;
  });
  expect(prio[0]!.jobId).toBe(bob);
  const aliceRow = prio.find((j) => j.user === "ebbt_alice")!;
  expect(prio[0]!.fairshare).toBeGreaterThan(aliceRow.fairshare);
  // One job's alone (sprio -j, scontrol show job's Priority=): the same factors, nothing else listed.
  // (bob's may have started by now: then none.)
  const one = JSON.parse((await c.ebb(["priority", "-j", String(bob), "--json"])).stdout).jobs as { jobId: number }[];
  expect(one.length <= 1 && one.every((j) => j.jobId === bob)).toBe(true);
  const alices = (await c.api("GET", `/v1/priority?job=${array + 7}`)).json.jobs as { jobId: number; user: string }[];
  expect(alices.map((j) => [j.jobId, j.user])).toEqual([[array + 7, "ebbt_alice"]]);
  const text = await c.ebb(["priority"]);
  expect(text.stdout).toMatch(/JOBID +USER +PARTITION +TIER +PRIORITY +AGE +FAIRSHARE +JOBSIZE/);
  const share = JSON.parse((await c.ebb(["share", "--json"])).stdout).users as { user: string; fairShare: number; rawUsage: number }[];
  const alice = share.find((u) => u.user === "ebbt_alice")!;
  const bobShare = share.find((u) => u.user === "ebbt_bob")!;
  expect(alice.rawUsage).toBeGreaterThan(bobShare.rawUsage);
  expect(alice.fairShare).toBeLessThan(bobShare.fairShare);
  expect((await c.ebb(["share"])).stdout).toMatch(/USER +RAWSHARES +NORMSHARES +RAWUSAGE +DECAYED +EFFECTVUSAGE +FAIRSHARE/);

  const bobJob = await c.waitJob(bob, ["COMPLETED"], 120_000);
  const bobStart = Date.parse(bobJob.startTime);
  const { json } = await c.api("GET", `/v1/jobs?array=${array}`);
  // Under submit order all six waiting tasks would start before bob's job; under fair share none does.
  const passed = json.jobs.filter((j: { startTime: string | null }) => j.startTime !== null && Date.parse(j.startTime) > bobSubmit && Date.parse(j.startTime) < bobStart);
  expect(passed.map((j: { id: number }) => j.id)).toEqual([]);
  const pendingAtBobStart = json.jobs.filter((j: { startTime: string | null }) => j.startTime === null || Date.parse(j.startTime) >= bobStart);
  expect(pendingAtBobStart.length).toBeGreaterThanOrEqual(5);
  await cancelAll(json.jobs.map((j: { id: number }) => j.id));
});

test("ebb partitions lists them like sinfo: the default starred, node02 alone in second, its time limit", async () => {
  const r = await c.ebb(["partitions"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^PARTITION +TIMELIMIT/);
  expect(r.stdout).toMatch(/\nmain\* +infinite .* 0\/2\/0\/2 .*node\[01-02\]\n/);
  expect(r.stdout).toMatch(/\nsecond +10:00 .* 0\/1\/0\/1 .*node02\n/);
  expect(r.stdout).toMatch(/\nlimited .* jobs 1,submitted 2 /);
  const json = JSON.parse((await c.ebb(["partitions", "--json"])).stdout);
  expect(json.partitions.map((p: { name: string; default: boolean; nodes: string[] }) => [p.name, p.default, p.nodes])).toEqual([
    ["main", true, ["node01", "node02"]],
    ["second", false, ["node02"]],
    ["limited", false, ["node01", "node02"]],
    ["alices", false, ["node01", "node02"]],
  ]);
});

test("a partition that does not exist, or is not the user's, is refused with the reason; a job names its partition", async () => {
  const unknown = await tryAs("ebbt_bob", { argv: ["true"], partition: "gpu" });
  expect(unknown.status).toBe(400);
  expect(unknown.json.error).toMatchObject({ field: "partition" });
  expect(unknown.json.error.message).toContain("partition gpu does not exist; the partitions are main, second, limited, alices");
  const forbidden = await tryAs("ebbt_bob", { argv: ["true"], partition: "alices" });
  expect(forbidden.status).toBe(403);
  expect(forbidden.json.error.message).toContain("user ebbt_bob may not use partition alices: only users ebbt_alice may");
  const id = await submitAs("ebbt_alice", { argv: ["true"], partition: "alices" });
  const done = await c.waitJob(id, ["COMPLETED", "FAILED"]);
  expect([done.state, done.partition]).toEqual(["COMPLETED", "alices"]);
  const plain = await submitAs("ebbt_bob", { argv: ["true"] });
  expect((await c.waitJob(plain, ["COMPLETED", "FAILED"])).partition).toBe("main");
});

test("a script's partition list (-p gpu,second: Slurm's whichever starts it first) runs in the first of them the cluster has; a list of none is refused", async () => {
  writeFileSync(join(c.dir, "list.sh"), "#!/bin/sh\n#SBATCH -p gpu,second,main\n#SBATCH -o list.out\ntrue\n");
  const r = await c.ebb(["submit", "--parsable", "list.sh"], { cwd: c.dir });
  expect(r.stderr).toBe("ebb submit: warning: --partition=gpu,second,main: ebb runs a job in one partition, second (the first of them this cluster has)\n");
  expect((await c.waitJob(Number(r.stdout.trim()), ["COMPLETED", "FAILED"], 60_000)).partition).toBe("second");
  const none = await c.ebb(["submit", "-p", "gpu,cpu", "list.sh"], { cwd: c.dir });
  expect(none.code).not.toBe(0);
  expect(none.stderr).toBe("ebb submit: --partition=gpu,cpu: none of them is a partition of this cluster; its partitions are main, second, limited, alices (ebb partitions)\n");
});

test("--time=0 (timeLimit UNLIMITED or INFINITE), Slurm's no limit of the job's own: the partition's maxTime, or the longest limit where it has none", async () => {
  const bounded = await submitAs("ebbt_bob", { argv: ["true"], partition: "second", timeLimit: "UNLIMITED", hold: true });
  const unbounded = await submitAs("ebbt_bob", { argv: ["true"], timeLimit: "INFINITE", hold: true });
  expect([(await c.job(bounded)).timeLimit, (await c.job(unbounded)).timeLimit]).toEqual([600, 365 * 86400]);
  await cancelAll([bounded, unbounded]);
});

test("a partition's jobs run on its nodes only: the second waits for node02 while node01 is free", async () => {
  const first = await submitAs("ebbt_bob", { argv: ["sleep", "60"], partition: "second", timeLimit: 300 });
  const running = await c.waitJob(first, ["RUNNING"]);
  expect(running.allocation).toEqual(["node02"]);
  const second = await submitAs("ebbt_bob", { argv: ["sleep", "60"], partition: "second", timeLimit: 300 });
  const waiting = await waitFor("the second job's reason", async () => {
    const j = await c.job(second);
    return j.state === "PENDING" && j.reason !== "None" ? j : undefined;
  });
  expect(waiting.reason).toBe("Resources");
  // The dashboard's pending list says where it waits.
  const pending = (await c.api("GET", "/v1/timeline")).json.pending.find((p: { id: number }) => p.id === second);
  expect(pending).toMatchObject({ partition: "second", reason: "Resources" });
  expect((await c.api("GET", "/v1/nodes")).json.nodes.find((n: { name: string }) => n.name === "node01").state).toBe("IDLE");
  // Over the partition's time limit: it waits with Slurm's reason (PartitionTimeLimit).
  const long = await submitAs("ebbt_bob", { argv: ["sleep", "1"], partition: "second", timeLimit: 3600 });
  const held = await waitFor("PartitionTimeLimit", async () => {
    const j = await c.job(long);
    return j.reason === "PartitionTimeLimit" ? j : undefined;
  });
  expect(held.reasonDetail).toContain("above partition second's 600 s");
  await cancelAll([first, second, long]);
});

test("a per-user running-jobs limit: the second job waits (QOSMaxJobsPerUserLimit) while a core is free; MaxSubmitJobs refuses a third", async () => {
  const a = await submitAs("ebbt_bob", { argv: ["sleep", "60"], partition: "limited" });
  await c.waitJob(a, ["RUNNING"]);
  const b = await submitAs("ebbt_bob", { argv: ["sleep", "60"], partition: "limited" });
  const j = await waitFor("the limit's reason", async () => {
    const x = await c.job(b);
    return x.reason === "QOSMaxJobsPerUserLimit" ? x : undefined;
  });
  expect(j.reasonDetail).toContain("user ebbt_bob in partition limited runs 1 job(s), the limit is 1 (MaxJobs)");
  const q = await c.ebb(["queue"]);
  expect(q.stdout).toMatch(new RegExp(`\\b${b}\\b.*QOSMaxJobsPerUserLimit`));
  expect((await c.api("GET", "/v1/nodes")).json.nodes.filter((n: { state: string }) => n.state === "IDLE")).toHaveLength(1);
  const third = await tryAs("ebbt_bob", { argv: ["true"], partition: "limited" });
  expect(third.status).toBe(409);
  expect(third.json.error).toMatchObject({ code: "max_submit_jobs" });
  expect(third.json.error.message).toContain("user ebbt_bob has 2 job(s) pending or running in partition limited, this one would pass the limit of 2 (MaxSubmitJobs)");
  // The other user is not limited by bob's jobs.
  const other = await submitAs("ebbt_alice", { argv: ["sleep", "60"], partition: "limited" });
  await c.waitJob(other, ["RUNNING"]);
  await cancelAll([a, b, other]);
  // Once the first ends, the second runs.
});


test("queue -p and history -p (or sacct's -r): the jobs of those partitions only; a name that is none is refused", async () => {
  const held = {
    second: await submitAs("ebbt_bob", { argv: ["true"], partition: "second", hold: true, name: "p-second" }),
    alices: await submitAs("ebbt_alice", { argv: ["true"], partition: "alices", hold: true, name: "p-alices" }),
    main: await submitAs("ebbt_bob", { argv: ["true"], hold: true, name: "p-main" }),
  };
  expect(await c.ebb(["queue", "-p", "second,alices", "-o", "%i %P %j", "--noheader"])).toEqual({ code: 0, stdout: `${held.second} second p-second\n${held.alices} alices p-alices\n`, stderr: "" });
  expect((await c.ebb(["queue", "--partition", "main", "-o", "%i", "--noheader"])).stdout).toBe(`${held.main}\n`);
  await cancelAll(Object.values(held));
  // Ended jobs too (any alices job of the tests above and this one), nothing of the other partitions.
  const h = await c.ebb(["history", "--since", "1 hour ago", "-r", "alices", "--format", "JobID,Partition,State", "-n"]);
  expect(h.code).toBe(0);
  const lines = h.stdout.trimEnd().split("\n").map((l) => l.split(/\s+/));
  expect(lines.every((l) => l[1] === "alices")).toBe(true);
  expect(lines.at(-1)).toEqual([String(held.alices), "alices", "CANCELLED"]);
  expect((await c.ebb(["history", "-S", "1 hour ago", "-p", "second", "-j", `${held.second},${held.main}`, "-o", "JobID", "-n"])).stdout).toBe(`${held.second}\n`);
  const bad = await c.ebb(["queue", "-p", "gpu nodes"]);
  expect({ code: bad.code, stderr: bad.stderr }).toEqual({ code: 2, stderr: `ebb queue: --partition: "gpu nodes" is not a partition name (letters, digits, '_', '.' or '-', at most 64); ebb partitions lists them\n` });
  const api = await c.api("GET", "/v1/jobs?partition=main,a%20b");
  expect(api.status).toBe(400);
  expect(api.json.error.message).toContain("a partition name is letters, digits");
});
