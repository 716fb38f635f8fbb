/**
 * A cluster a lab shares, seen by its users: two system users (made with useradd; the agents run
 * as root, so jobs run as their users) with their own tokens, on a busy cluster of real processes.
 * Each user's `ebb queue` shows every job (ids, names, users, states, reasons, estimated starts)
 * and `ebb nodes` works, without the other's command, directory, files or environment; the
 * listings a Slurm user reaches for (queue -u/--me/-j/--format/--start, history --format,
 * ebb usage); a controller whose config keeps jobs, nodes and usage private (Slurm's PrivateData);
 * and a GPU partition: Slurm's variables in a GPU job's batch shell and srun step, its GPU time in
 * ebb history and ebb usage.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { ensureUser } from "../support/users.ts";
import { localTime } from "../../src/cli/jobid.ts";
import { formatDuration } from "../../src/util/time.ts";

const USERS = ["ebbt_alice", "ebbt_bob"] as const;
type User = (typeof USERS)[number];
const SECRET = { ebbt_alice: "alice-secret-7f3a", ebbt_bob: "bob-secret-19c2" };
let base: string;
const uid = {} as Record<User, number>;

beforeAll(() => {
  expect(process.getuid!()).toBe(0);
  base = mkdtempSync(join(tmpdir(), "ebb-lab-"));
  Bun.spawnSync(["chmod", "755", base]);
  for (const u of USERS) {
    uid[u] = ensureUser(u);
    mkdirSync(join(base, u), { mode: 0o700 });
    chownSync(join(base, u), uid[u], uid[u]);
  }
});
afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

/** A user's token from `ebb token create`. */
async function tokenFor(c: TestCluster, user: User): Promise<string> {
  const r = await c.ebb(["token", "create", "--user", user]);
  expect(r.code).toBe(0);
  return r.stdout.trim();
}

/** A job of `user`'s, its secret in its environment, command and output path. */
function submitAs(c: TestCluster, token: string, user: User, body: Record<string, unknown>): Promise<number> {
  return c.submit({ cwd: join(base, user), env: { SECRET: SECRET[user] }, output: join(base, user, `${SECRET[user]}-%j.out`), ...body }, token);
}

describe("everyone sees the queue and the nodes", () => {
  let c: TestCluster;
  const tokens = {} as Record<User, string>;
  const jobs = {} as Record<"aliceRun" | "bobRun" | "aliceWide" | "bobNext" | "aliceHeld", number>;
  beforeAll(async () => {
    // Submit order (no fair share): the estimates below follow the queue as submitted.
    const config = join(base, "submit-order.json");
    writeFileSync(config, JSON.stringify({ priority: { type: "submit" } }));
    c = await startCluster({ agents: 2, controllerArgs: ["--config", config] });
    for (const u of USERS) tokens[u] = await tokenFor(c, u);
    // Busy: each user runs a job on a node of its own (whole nodes: exclusive); a 2-node job of alice's and a 1-node job of bob's wait.
    jobs.aliceRun = await submitAs(c, tokens.ebbt_alice, "ebbt_alice", { argv: ["sh", "-c", "sleep 600", SECRET.ebbt_alice], nodes: 1, timeLimit: 600, name: "a-run", exclusive: true });
    jobs.bobRun = await submitAs(c, tokens.ebbt_bob, "ebbt_bob", { argv: ["sh", "-c", "sleep 600", SECRET.ebbt_bob], nodes: 1, timeLimit: 300, name: "b-run", exclusive: true });
    for (const id of [jobs.aliceRun, jobs.bobRun]) await c.waitJob(id, ["RUNNING"]);
    jobs.aliceWide = await submitAs(c, tokens.ebbt_alice, "ebbt_alice", { argv: ["true", SECRET.ebbt_alice], nodes: 2, timeLimit: 60, name: "a-wide", exclusive: true });
    jobs.bobNext = await submitAs(c, tokens.ebbt_bob, "ebbt_bob", { argv: ["true", SECRET.ebbt_bob], nodes: 1, timeLimit: 3600, name: "b-next", exclusive: true });
    jobs.aliceHeld = await submitAs(c, tokens.ebbt_alice, "ebbt_alice", { argv: ["true"], hold: true, name: "a-held" });
    await waitFor("the pending jobs' reasons", async () => (await c.job(jobs.bobNext)).reason !== "None");
  }, 180_000);
  afterAll(async () => {
    await c?.stop();
  });

  const as = (user: User, args: string[]) => c.ebb(args, { env: { EBB_TOKEN: tokens[user] } });

  test("bob's ebb queue lists every job of the busy cluster with its user, state and reason; alice's command, directory, files and environment are not in it", async () => {
    const r = await as("ebbt_bob", ["queue"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]!.split(/\s+/).slice(0, 4)).toEqual(["JOBID", "NAME", "USER", "STATE"]);
    const row = (id: number) => lines.find((l) => l.startsWith(`${id} `))?.split(/\s+/);
    expect(row(jobs.aliceRun)?.slice(0, 7)).toEqual([String(jobs.aliceRun), "a-run", "ebbt_alice", "RUNNING", expect.any(String), "10:00", "1"]);
    expect(row(jobs.aliceRun)?.at(-1)).toMatch(/^node0[12]$/);
    expect(row(jobs.aliceWide)?.slice(1, 4)).toEqual(["a-wide", "ebbt_alice", "PENDING"]);
    expect(row(jobs.aliceWide)?.at(-1)).toBe("(Resources)");
    expect(row(jobs.bobNext)?.slice(1, 4)).toEqual(["b-next", "ebbt_bob", "PENDING"]);
    expect(row(jobs.aliceHeld)?.at(-1)).toBe("(JobHeldUser)");
    const json = await as("ebbt_bob", ["queue", "--json"]);
    expect(json.stdout).not.toContain(SECRET.ebbt_alice);
    expect(json.stdout).toContain(SECRET.ebbt_bob);
    const views = JSON.parse(json.stdout).jobs;
    expect(views.filter((j: any) => j.user === "ebbt_alice").map((j: any) => [j.private, j.argv, j.cwd, j.output])).toEqual(Array(3).fill([true, null, "", null]));
    expect(views.filter((j: any) => j.user === "ebbt_bob").every((j: any) => j.private === false && j.argv.includes(SECRET.ebbt_bob))).toBe(true);
  });

  test("bob's ebb nodes shows both nodes and their jobs; ebb show of alice's job says it is private and holds none of it", async () => {
    const nodes = await as("ebbt_bob", ["nodes"]);
    expect({ code: nodes.code, stderr: nodes.stderr }).toEqual({ code: 0, stderr: "" });
    expect(nodes.stdout).toMatch(new RegExp(`\\nnode0[12] +ALLOCATED .*${jobs.aliceRun}`));
    const show = await as("ebbt_bob", ["show", String(jobs.aliceRun)]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^User {9}ebbt_alice$/m);
    expect(show.stdout).toMatch(/^Private {6}ebbt_alice's job: /m);
    expect(show.stdout).not.toContain(SECRET.ebbt_alice);
    expect(show.stdout).not.toContain(join(base, "ebbt_alice"));
    // The detail and the dashboard's data (the timeline, its live stream) hold none of it either.
    const detail = await c.api("GET", `/v1/jobs/${jobs.aliceRun}`, undefined, tokens.ebbt_bob);
    expect(detail.json).toMatchObject({ private: true, env: {}, script: null, events: [], argv: null });
    const timeline = await c.api("GET", "/v1/timeline", undefined, tokens.ebbt_bob);
    expect(timeline.status).toBe(200);
    expect(timeline.json.jobs.map((j: any) => j.id)).toContain(jobs.aliceRun);
    expect(JSON.stringify(timeline.json)).not.toContain(SECRET.ebbt_alice);
    // Alice sees all of her own.
    const own = await as("ebbt_alice", ["show", String(jobs.aliceRun)]);
    expect(own.stdout).toContain(SECRET.ebbt_alice);
  });

  test("queue -u, --me, -j and --format as squeue's", async () => {
    const mine = await as("ebbt_bob", ["queue", "-u", "ebbt_alice", "--format", "%i|%.10u|%t|%j"]);
    expect(mine.stdout).toBe(
      [`JOBID|      USER|ST|NAME`, `${jobs.aliceRun}|ebbt_alice|R|a-run`, `${jobs.aliceWide}|ebbt_alice|PD|a-wide`, `${jobs.aliceHeld}|ebbt_alice|PD|a-held`, ""].join("\n"),
    );
    // --me is the user running the command: root here, whose jobs are the cluster token's.
    const rootJob = await c.submit({ argv: ["true"], hold: true, name: "root-held" });
    const me = await as("ebbt_bob", ["queue", "--me", "--noheader", "-o", "JobID,Name"]);
    expect(me.stdout).toBe(`${rootJob}  root-held\n`);
    const picked = await as("ebbt_bob", ["queue", "-j", `${jobs.bobRun},${jobs.aliceHeld}`, "-o", "%i %T", "--noheader"]);
    expect(picked.stdout).toBe(`${jobs.bobRun} RUNNING\n${jobs.aliceHeld} PENDING\n`);
    const bad = await as("ebbt_bob", ["queue", "--format", "%i %w"]);
    expect({ code: bad.code, stderr: bad.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(/^ebb queue: --format: %w is not a field code; codes: %i JobID, /) });
    expect((await c.api("DELETE", `/v1/jobs/${rootJob}`)).status).toBe(200);
  });

  test("queue --start: when and where each pending job is expected to start, every running job taken to its limit", async () => {
    const [run, other] = [await c.job(jobs.aliceRun), await c.job(jobs.bobRun)];
    // Alice's 2-node job starts when both running jobs have reached their limits; bob's next after it (its hour would delay it).
    const wide = Math.max(Date.parse(run.startTime) + 600_000, Date.parse(other.startTime) + 300_000);
    const json = JSON.parse((await as("ebbt_bob", ["queue", "--start", "--json"])).stdout);
    expect(json.starts.complete).toBe(true);
    expect(json.starts.jobs).toEqual([
      { id: jobs.aliceWide, start: new Date(wide).toISOString(), nodes: ["node01", "node02"] },
      { id: jobs.bobNext, start: new Date(wide + 60_000).toISOString(), nodes: ["node01"] },
    ]);
    const text = await as("ebbt_bob", ["queue", "--start"]);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[0]!.split(/\s+/)).toEqual(["JOBID", "NAME", "USER", "ST", "START_TIME", "NODES", "SCHEDNODES", "NODELIST(REASON)"]);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 5))).toEqual([
      [String(jobs.aliceWide), "a-wide", "ebbt_alice", "PD", localTime(new Date(wide).toISOString())],
      [String(jobs.bobNext), "b-next", "ebbt_bob", "PD", localTime(new Date(wide + 60_000).toISOString())],
      [String(jobs.aliceHeld), "a-held", "ebbt_alice", "PD", "N/A"],
    ]);
  });

  test("history --format and -u, and ebb usage: each user's jobs, node- and core-hours (the cores held) over the window", async () => {
    const short = await submitAs(c, tokens.ebbt_bob, "ebbt_bob", { argv: ["true"], nodes: 1, nodelist: [(await c.job(jobs.bobRun)).allocation[0]], timeLimit: 60, name: "b-short" });
    // It waits for bob's long job's node; once that is cancelled it backfills before alice's wide job's reservation.
    expect((await c.api("DELETE", `/v1/jobs/${jobs.bobRun}`, undefined, tokens.ebbt_bob)).status).toBe(200);
    await c.waitJob(short, ["COMPLETED"], 60_000);
    const h = await as("ebbt_alice", ["history", "--since", "1 hour ago", "-u", "ebbt_bob", "--format", "JobID,JobName%8,User,State", "-n"]);
    expect(h.code).toBe(0);
    expect(h.stdout).toContain(`${short}  b-short   ebbt_bob  COMPLETED\n`);
    expect(h.stdout).not.toContain("ebbt_alice");
    const u = JSON.parse((await as("ebbt_alice", ["usage", "--since", "1 hour ago", "--json"])).stdout);
    const by = Object.fromEntries(u.users.map((x: any) => [x.user, x]));
    expect(Object.keys(by).sort()).toEqual(["ebbt_alice", "ebbt_bob"]);
    expect(by.ebbt_bob.jobs).toBeGreaterThanOrEqual(2);
    for (const x of u.users) expect(x.nodeSeconds).toBeGreaterThan(0);
    // The test's nodes have 2 CPUs each: alice's jobs held them whole (exclusive), as did bob's but
    // his short job, which held one core of its node for its allocation's time.
    const held = (await c.api("GET", `/v1/jobs/${short}`)).json;
    expect(held.shares.map((s: any) => s.cpus)).toEqual([1]);
    const shortSeconds = held.allocationHistory.reduce((sum: number, a: any) => sum + (Date.parse(a.until) - Date.parse(a.since)) / 1000, 0);
    expect(by.ebbt_alice.coreSeconds).toBeCloseTo(2 * by.ebbt_alice.nodeSeconds, 6);
    expect(by.ebbt_bob.coreSeconds).toBeCloseTo(2 * (by.ebbt_bob.nodeSeconds - shortSeconds) + shortSeconds, 6);
    expect(u.total.coreSeconds).toBeCloseTo(by.ebbt_alice.coreSeconds + by.ebbt_bob.coreSeconds, 6);
    const table = await as("ebbt_alice", ["usage", "--since", "1 hour ago"]);
    expect(table.stdout).toMatch(/\nUSER +JOBS +NODE-HOURS +CORE-HOURS +SHARE\n/);
    expect(table.stdout).toMatch(/\nTOTAL +\d+ +\d+\.\d\d +\d+\.\d\d +100\.0%\n/);
  });
});

describe("a controller that keeps jobs, nodes and usage private (privateData)", () => {
  let c: TestCluster;
  const tokens = {} as Record<User, string>;
  beforeAll(async () => {
    const config = join(base, "private.json");
    writeFileSync(config, JSON.stringify({ privateData: ["jobs", "nodes", "usage"] }));
    c = await startCluster({ agents: 1, controllerArgs: ["--config", config] });
    for (const u of USERS) tokens[u] = await tokenFor(c, u);
  }, 120_000);
  afterAll(async () => {
    await c?.stop();
  });

  test("a user lists, shows and estimates only their own jobs, reads no node, timeline or other's usage; an admin reads all", async () => {
    const run = await submitAs(c, tokens.ebbt_alice, "ebbt_alice", { argv: ["sleep", "600"], nodes: 1, exclusive: true });
    await c.waitJob(run, ["RUNNING"]);
    const waits = await submitAs(c, tokens.ebbt_alice, "ebbt_alice", { argv: ["true"], nodes: 1, exclusive: true });
    const bobs = await submitAs(c, tokens.ebbt_bob, "ebbt_bob", { argv: ["true"], hold: true });
    const bob = (method: string, path: string) => c.api(method, path, undefined, tokens.ebbt_bob);
    expect((await bob("GET", "/v1/jobs")).json.jobs.map((j: any) => j.id)).toEqual([bobs]);
    expect((await bob("GET", `/v1/jobs/${run}`)).status).toBe(403);
    const planned = async (token?: string) => (await c.api("GET", "/v1/plans", undefined, token)).json.plans.flatMap((p: any) => p.items.map((i: any) => i.jobId));
    expect(await planned()).toContain(run);
    expect(await planned(tokens.ebbt_bob)).toEqual([]);
    for (const path of ["/v1/nodes", "/v1/timeline", "/v1/stream"]) expect({ path, status: (await bob("GET", path)).status }).toEqual({ path, status: 403 });
    expect(await waitFor("an estimate for alice's waiting job", async () => (await c.api("GET", "/v1/starts")).json.jobs.some((j: any) => j.id === waits))).toBe(true);
    expect((await bob("GET", "/v1/starts")).json.jobs).toEqual([]);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    expect((await bob("GET", `/v1/usage?since=${since}`)).json.users).toEqual([]);
    expect((await bob("GET", `/v1/usage?since=${since}&user=ebbt_alice`)).status).toBe(403);
    expect((await c.api("GET", `/v1/usage?since=${since}`)).json.users.map((u: any) => u.user)).toEqual(["ebbt_alice"]);
    expect((await c.api("GET", "/v1/jobs")).json.jobs.map((j: any) => j.id)).toEqual([run, waits, bobs]);
    expect((await c.api("GET", "/v1/nodes")).status).toBe(200);
    const queue = await c.ebb(["queue"], { env: { EBB_TOKEN: tokens.ebbt_bob } });
    expect(queue.stdout.trimEnd().split("\n").slice(1).map((l) => Number(l.split(" ")[0]))).toEqual([bobs]);
    // sprio and sshare as Slurm's under PrivateData=jobs,usage (unfixed: every waiting job of hers, with
    // its user, and her usage, to any token; ?job= hers one by one); scontrol update of hers is refused.
    const released = await submitAs(c, tokens.ebbt_bob, "ebbt_bob", { argv: ["true"], nodes: 1, exclusive: true });
    expect((await c.api("GET", "/v1/priority")).json.jobs.map((j: any) => j.jobId).sort()).toEqual([waits, released].sort());
    expect((await bob("GET", "/v1/priority")).json.jobs.map((j: any) => j.jobId)).toEqual([released]);
    expect((await bob("GET", `/v1/priority?job=${waits}`)).json.jobs).toEqual([]);
    expect((await bob("GET", "/v1/shares")).json.users.map((u: any) => u.user)).toEqual(["ebbt_bob"]);
    expect((await c.api("GET", "/v1/shares")).json.users.map((u: any) => u.user).sort()).toEqual(["ebbt_alice", "ebbt_bob"]);
    for (const edit of [{ minNodes: 1, maxNodes: 1 }, { partition: "default" }]) expect((await c.api("PATCH", `/v1/jobs/${waits}`, edit, tokens.ebbt_bob)).status).toBe(403);
    for (const verb of ["hold", "release"]) expect((await c.api("POST", `/v1/jobs/${waits}/${verb}`, undefined, tokens.ebbt_bob)).status).toBe(403);
  });
});

describe("a lab's GPU partition: Slurm's variables in a GPU job and its steps, GPU time in ebb history and ebb usage", () => {
  let c: TestCluster;
  const VARS = ["SLURM_CPUS_PER_TASK", "SLURM_GPUS", "SLURM_GPUS_ON_NODE", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "CUDA_VISIBLE_DEVICES", "SLURM_JOB_PARTITION"];
  beforeAll(async () => {
    const config = join(base, "gpu-partition.json");
    writeFileSync(config, JSON.stringify({ partitions: [{ name: "cpu", nodes: "node01", default: true }, { name: "gpu", nodes: "node02" }] }));
    c = await startCluster({ agents: 0, controllerArgs: ["--config", config] });
    c.startAgent("node01", ["--cpus", "2"]);
    c.startAgent("node02", ["--cpus", "2", "--gres", "gpu:4"]);
    await c.waitNodes(2, "IDLE", 120_000);
    // Prints the variables a Slurm script reads, each line tagged with where it ran.
    writeFileSync(join(base, "probe.sh"), `env | grep -E '^(${VARS.join("|")})=' | LC_ALL=C sort | sed "s/^/$1 /"\n`);
  }, 180_000);
  afterAll(async () => {
    await c?.stop();
  });

  /** The batch script's and its srun step's lines of the probe. */
  const probed = (id: number) => Bun.file(join(base, `probe-${id}.out`)).text();
  const script = () => `#!/bin/sh\nsh ${base}/probe.sh batch\nsrun sh ${base}/probe.sh step\nsleep 1\n`;

  test("sbatch -p gpu -c 1 --gpus=2: SLURM_CPUS_PER_TASK=1 and the GPUs' variables in the batch shell and in srun's ranks; a CPU job without -c has neither", async () => {
    const gpu = await c.submit({ script: script(), partition: "gpu", cpusPerTask: 1, gpus: 2, output: join(base, "probe-%j.out") });
    const cpu = await c.submit({ script: script(), output: join(base, "probe-%j.out") });
    const [g, p] = [await c.waitJob(gpu, ["COMPLETED", "FAILED"], 60_000), await c.waitJob(cpu, ["COMPLETED", "FAILED"], 60_000)];
    expect([g.state, p.state]).toEqual(["COMPLETED", "COMPLETED"]);
    const ids = g.shares[0].gpus.join(",");
    expect(g.shares[0].gpus).toHaveLength(2);
    const lines = (where: string) => [`SLURM_CPUS_PER_TASK=1`, `SLURM_GPUS=2`, `SLURM_GPUS_ON_NODE=2`, `SLURM_JOB_GPUS=${ids}`, `SLURM_JOB_PARTITION=gpu`, ...(where === "step" ? [`SLURM_STEP_GPUS=${ids}`] : []), `CUDA_VISIBLE_DEVICES=${ids}`];
    const sorted = (where: string) => lines(where).sort().map((l) => `${where} ${l}`);
    expect((await probed(gpu)).trimEnd().split("\n")).toEqual([...sorted("batch"), ...sorted("step")]);
    expect(await probed(cpu)).toBe("batch SLURM_JOB_PARTITION=cpu\nstep SLURM_JOB_PARTITION=cpu\n");
  }, 120_000);

  test("ebb history shows each job's GPU time (GPUs times the time held) beside CPU time and peak memory; ebb usage adds GPU-hours", async () => {
    const jobs = (await c.api("GET", "/v1/jobs?state=COMPLETED")).json.jobs;
    const g = jobs.find((j: any) => j.partition === "gpu");
    const p = jobs.find((j: any) => j.partition === "cpu");
    const held = (Date.parse(g.endTime) - Date.parse(g.startTime)) / 1000;
    expect(g.gpuSeconds).toBeCloseTo(2 * held, 0);
    expect(p.gpuSeconds).toBe(0);
    const h = await c.ebb(["history", "-S", "1 hour ago", "-j", `${g.id},${p.id}`]);
    const [head, ...rows] = h.stdout.trimEnd().split("\n");
    expect(head).toMatch(/ CPUTIME +MAXMEM +GPUTIME +SUBMIT /);
    // The column's cells, by its place in the header (an empty cell is blanks).
    const cell = (row: string) => row.slice(head!.indexOf("GPUTIME"), head!.indexOf("SUBMIT")).trim();
    expect(rows.map((r) => [r.split(" ")[0], cell(r)])).toEqual([
      [String(g.id), formatDuration(g.gpuSeconds)],
      [String(p.id), ""],
    ]);
    const f = await c.ebb(["history", "-S", "1 hour ago", "-p", "gpu", "-o", "JobID,Partition,GPUTime", "-n"]);
    expect(f.stdout).toMatch(new RegExp(`^${g.id} +gpu +${formatDuration(g.gpuSeconds)}\n$`));
    // Its stderr too: once (CI, at load 14) its stdout was empty, with no word why.
    const shown = await c.ebb(["show", String(g.id)]);
    expect(`${shown.stdout}${shown.stderr}`).toContain(`\nGpuTime      ${formatDuration(g.gpuSeconds)}\n`);
    const u = JSON.parse((await c.ebb(["usage", "-S", "1 hour ago", "--json"])).stdout);
    expect(u.users.map((x: any) => x.user)).toEqual(["root"]);
    expect(u.total.gpuSeconds).toBeCloseTo(g.gpuSeconds, 3);
    expect((await c.ebb(["usage", "-S", "1 hour ago"])).stdout).toMatch(/\nUSER +JOBS +NODE-HOURS +CORE-HOURS +GPU-HOURS +SHARE\nroot +2 +\d+\.\d\d +\d+\.\d\d +\d+\.\d\d +100\.0%\n/);
  });
});
