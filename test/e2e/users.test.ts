/**
 * Per-user tokens and jobs run as their users: two system users (made here with useradd; the
 * suite runs as root, so the agents do), each with a token from `ebb token create`. Each sees the
 * other's jobs without their private part, and cannot cancel them; a job's files belong to its
 * user; an output path with `../` reaches only what the user may write.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jobToken } from "../../src/proto/credential.ts";
import { ROOT, startCluster, waitFor, type TestCluster } from "../support/cluster.ts";
import { compileMpi } from "../support/mpi.ts";
import { ensureUser } from "../support/users.ts";
import { USER_PROCS } from "../../src/roles/user-procs.ts";

const USERS = ["ebbt_alice", "ebbt_bob"] as const;
let c: TestCluster;
let base: string;
const tokens: Record<string, string> = {};
const uid: Record<string, number> = {};


beforeAll(async () => {
  expect(process.getuid!()).toBe(0); // the agents must run as root for jobs to run as their users
  for (const u of USERS) uid[u] = ensureUser(u);
  base = mkdtempSync(join(tmpdir(), "ebb-users-"));
  Bun.spawnSync(["chmod", "755", base]);
  for (const u of USERS) {
    mkdirSync(join(base, u), { mode: 0o700 });
    chownSync(join(base, u), uid[u]!, uid[u]!);
  }
  c = await startCluster({ agents: 1 });
  for (const u of USERS) {
    const r = await c.ebb(["token", "create", "--user", u]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    tokens[u] = r.stdout.trim();
    expect(tokens[u]).toMatch(/^ebbu_/);
  }
});
afterAll(async () => {
  await c?.stop();
  if (base) rmSync(base, { recursive: true, force: true });
});

const submitAs = (user: string, body: Record<string, unknown>) => c.submit({ cwd: join(base, user), ...body }, tokens[user]!);

test("ebb nodes says whom jobs run as: their users, since the agent runs as root", async () => {
  const r = await c.ebb(["nodes"]);
  expect(r.stdout).toMatch(/RUNS JOBS AS/);
  expect(r.stdout).toMatch(/node01 .*job's user/);
  expect((await c.api("GET", "/v1/nodes")).json.nodes[0].runAs).toBe("job's user");
});

test("only an admin issues tokens; only the token's hash is stored", async () => {
  const r = await c.api("POST", "/v1/tokens", { user: "ebbt_bob", admin: true }, tokens.ebbt_alice!);
  expect(r.status).toBe(403);
  const bad = await c.api("POST", "/v1/tokens", { user: "Not A User" });
  expect(bad.status).toBe(400);
  expect(JSON.stringify(bad.json)).toContain("user");
  const db = readFileSync(join(c.stateDir, "ebb.db")).toString("latin1");
  expect(db.includes(tokens.ebbt_alice!)).toBe(false);
});

test("a user's batch job runs as that user: its output and the files it writes are the user's", async () => {
  const id = await submitAs("ebbt_alice", { script: "#!/bin/sh\nid -un\ntouch made-by-job\n", output: "out.txt" });
  const end = await c.waitJob(id, ["COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED"]);
  if (end.state !== "COMPLETED") console.log(end.reason, c.read(join(base, "ebbt_alice", "out.txt")), c.daemonLogs().slice(-3000));
  expect(end.state).toBe("COMPLETED");
  expect(end.user).toBe("ebbt_alice");
  const dir = join(base, "ebbt_alice");
  expect(readFileSync(join(dir, "out.txt"), "utf8").trim()).toBe("ebbt_alice");
  expect(statSync(join(dir, "out.txt")).uid).toBe(uid.ebbt_alice!);
  expect(statSync(join(dir, "made-by-job")).uid).toBe(uid.ebbt_alice!);
  // A command job's ranks too (a step: cwd entered and output opened as the user).
  const cmd = await submitAs("ebbt_alice", { argv: ["sh", "-c", "id -un; id -u > uid.txt"], output: "cmd.txt" });
  expect((await c.waitJob(cmd, ["COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED"])).state).toBe("COMPLETED");
  expect(readFileSync(join(dir, "cmd.txt"), "utf8").trim()).toBe("ebbt_alice");
  expect(readFileSync(join(dir, "uid.txt"), "utf8").trim()).toBe(String(uid.ebbt_alice));
  expect(statSync(join(dir, "uid.txt")).uid).toBe(uid.ebbt_alice!);
});

test("a job whose PATH has no system tools still runs as its user (the agent finds setpriv in the system's PATH)", async () => {
  const id = await submitAs("ebbt_bob", { argv: ["/bin/sh", "-c", "/usr/bin/id -un; echo PATH=$PATH"], env: { PATH: "/opt/ebbt-nothing" }, output: "bare-path.txt" });
  const end = await c.waitJob(id, ["COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED"]);
  expect({ state: end.state, reason: end.reason }).toEqual({ state: "COMPLETED", reason: end.reason });
  const [user, path] = readFileSync(join(base, "ebbt_bob", "bare-path.txt"), "utf8").trim().split("\n");
  expect(user).toBe("ebbt_bob");
  // The job kept its own PATH (after the agent's directory of the ebb command, before its fallback bun's).
  expect(path).toMatch(/^PATH=\S+:\/opt\/ebbt-nothing:\S+\/fallback$/);
});

test("ebb run's standard input reaches ranks that run as the user, with or without a PMI socket, and nothing else of theirs changes", async () => {
  const input = new TextEncoder().encode("line one\nline two\n");
  const probe = 'echo "rank=$EBB_PROCID user=$(id -un) read=$(wc -c) pmi=${PMI_FD:-none} fds=$(ls /proc/$$/fd | wc -l)"';
  for (const mpi of ["both", "none"]) {
    const r = await c.ebb(["run", "-n", "2", "--input", "all", "--mpi", mpi, "sh", "-c", probe], { env: { EBB_TOKEN: tokens.ebbt_alice! }, cwd: join(base, "ebbt_alice"), stdin: input });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = r.stdout.trim().split("\n").sort();
    // fds: 0, 1, 2, the PMI socket if any, and the shell's end of $(...): the descriptor the input came in on is not left open.
    const fds = mpi === "none" ? 4 : 5;
    expect(lines).toEqual([0, 1].map((k) => `rank=${k} user=ebbt_alice read=18 pmi=${mpi === "none" ? "none" : "3"} fds=${fds}`));
  }
});

test("a user's MPI ranks load the agent's CFG library: a root agent keeps it where they may read it, not in its root-only state dir (the loader said 'cannot be preloaded' on every rank's stderr)", async () => {
  const hello = await compileMpi("users-hello", readFileSync(join(ROOT, "test/mpi/programs/hello.c"), "utf8"));
  const dir = join(base, "ebbt_alice");
  cpSync(hello!, join(dir, "hello"));
  chownSync(join(dir, "hello"), uid.ebbt_alice!, uid.ebbt_alice!);
  const r = await c.ebb(["run", "-n", "2", "./hello"], { env: { EBB_TOKEN: tokens.ebbt_alice! }, cwd: dir });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  expect(r.stdout.trim().split("\n").sort()).toEqual([0, 1].map((k) => `hello rank=${k} size=2 sum=1 node=node01`));
});

test("a job has its user's groups, all and only them: with only the user's own group (the spawn drops to it itself) and with a supplementary one (setpriv)", async () => {
  ensureUser("ebbt_carol", ["ebbt_lab"]);
  const carol = (await c.ebb(["token", "create", "--user", "ebbt_carol"])).stdout.trim();
  const groupsOf = (user: string) => Bun.spawnSync(["id", "-G", user]).stdout.toString().trim().split(" ").sort();
  expect(groupsOf("ebbt_carol").length).toBe(2);
  for (const [user, token] of [["ebbt_alice", tokens.ebbt_alice!], ["ebbt_carol", carol]] as const) {
    const r = await c.ebb(["run", "-n", "1", "sh", "-c", "id -u; id -g; id -G; sed -n 's/^Groups:\\s*//p' /proc/self/status"], { env: { EBB_TOKEN: token }, cwd: base });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const [u, g, all, kernel] = r.stdout.split("\n");
    const id = (flag: string) => Bun.spawnSync(["id", flag, user]).stdout.toString().trim();
    expect([u, g, all!.split(" ").sort()]).toEqual([id("-u"), id("-g"), groupsOf(user)]);
    // The kernel's list holds none of root's (the spawn clears it; setpriv sets the user's).
    expect(kernel!.trim().split(/\s+/).filter(Boolean).every((x) => groupsOf(user).includes(x))).toBe(true);
  }
});

test("a user's program is looked up and executed with the user's rights, by her shell after the drop: one not there is not there (127); one where only root or another user may look, or one she may not execute, is refused (126); hers by a relative path runs", async () => {
  const dir = join(base, "ebbt_alice");
  const run = async (argv: string[], env: Record<string, string> = {}) => {
    const r = await c.ebb(["run", "-n", "1", ...argv], { env: { EBB_TOKEN: tokens.ebbt_alice!, ...env }, cwd: dir });
    return { code: r.code, out: r.stdout.trim(), said: /No such file or directory|Permission denied|not found/.exec(r.stderr)?.[0] };
  };
  // A PATH she may search throughout (this runner's has root's 0700 directories: her shell says Permission denied there, as execvp).
  expect(await run(["ebbt-no-such-program"], { PATH: "/usr/bin:/bin" })).toEqual({ code: 127, out: "", said: "not found" });
  const refused = { code: 126, out: "", said: "Permission denied" };
  // /root is root's alone (0700), Bob's directory his alone: she may not look in them.
  expect(await run(["/root/ebbt-hidden-program"])).toEqual(refused);
  const bobs = join(base, "ebbt_bob", "bobs-program.sh");
  writeFileSync(bobs, "#!/bin/sh\necho bob\n", { mode: 0o755 });
  expect(await run([bobs])).toEqual(refused);
  const own = join(dir, "own-program.sh");
  writeFileSync(own, "#!/bin/sh\necho own $(id -un) $(pwd)\n", { mode: 0o700 });
  chownSync(own, uid.ebbt_alice!, uid.ebbt_alice!);
  expect(await run(["./own-program.sh"])).toEqual({ code: 0, out: `own ebbt_alice ${dir}`, said: undefined });
  // Executable by root, not by her.
  chownSync(own, 0, 0);
  expect(await run(["./own-program.sh"])).toEqual(refused);
});

test("a user's processes may not take the node's process ids: RLIMIT_NPROC, soft and hard, is half of what the kernel numbers", async () => {
  const r = await c.ebb(["run", "-n", "1", "sh", "-c", "grep 'Max processes' /proc/self/limits; ulimit -u 100000 2>&1 || ulimit -p 100000 2>&1 || echo refused"], { env: { EBB_TOKEN: tokens.ebbt_bob! }, cwd: join(base, "ebbt_bob") });
  expect(r.code).toBe(0);
  const [limits, ...raise] = r.stdout.trim().split("\n");
  expect(limits!.split(/\s+/).slice(2, 4)).toEqual([String(USER_PROCS), String(USER_PROCS)]);
  expect(USER_PROCS).toBeLessThanOrEqual(Number(readFileSync("/proc/sys/kernel/pid_max", "utf8")) / 2);
  // The job cannot raise it again.
  expect(raise.at(-1)).toBe("refused");
});

test("an output path with ../ reaches only what the user may write", async () => {
  const id = await submitAs("ebbt_alice", { script: "#!/bin/sh\necho stolen\n", output: "../ebbt_bob/stolen.txt" });
  const end = await c.waitJob(id, ["COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED"]);
  expect(end.state).toBe("FAILED");
  expect(end.reason).toMatch(/cannot create \S*stolen\.txt: Permission denied/);
  expect(existsSync(join(base, "ebbt_bob", "stolen.txt"))).toBe(false);
});

test("each user lists and shows the other's jobs without their private part (a script's arguments too), and cannot cancel or hold them; the cluster's token can", async () => {
  const bobs = await submitAs("ebbt_bob", { argv: ["sh", "-c", "sleep 300", "bob-argv"], env: { BOB_VAR: "bob-env" } });
  const alices = await submitAs("ebbt_alice", { argv: ["sh", "-c", "sleep 300", "alice-argv"], env: { ALICE_VAR: "alice-env" }, nodes: 1 });
  for (const [me, other] of [["ebbt_alice", bobs], ["ebbt_bob", alices]] as const) {
    const read = await c.api("GET", `/v1/jobs/${other}`, undefined, tokens[me]!);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ id: other, private: true, argv: null, cwd: "", output: null, error: null, script: null, env: {}, events: [] });
    expect(JSON.stringify(read.json)).not.toMatch(/-argv|-env/);
    expect((await c.api("DELETE", `/v1/jobs/${other}`, undefined, tokens[me]!)).status).toBe(403);
    expect((await c.api("POST", `/v1/jobs/${other}/hold`, undefined, tokens[me]!)).status).toBe(403);
    const listed = (await c.api("GET", "/v1/jobs?state=PENDING,RUNNING", undefined, tokens[me]!)).json.jobs;
    expect(listed.find((j: any) => j.id === other)).toMatchObject({ private: true, argv: null });
    expect(listed.filter((j: any) => j.user === me).every((j: any) => j.private === false && j.argv !== null)).toBe(true);
    expect((await c.api("GET", "/v1/nodes", undefined, tokens[me]!)).status).toBe(200);
  }
  // Each reads and cancels its own, all of it.
  const own = await c.api("GET", `/v1/jobs/${bobs}`, undefined, tokens.ebbt_bob!);
  expect(own.json).toMatchObject({ private: false, argv: ["sh", "-c", "sleep 300", "bob-argv"], env: { BOB_VAR: "bob-env" } });
  expect((await c.api("DELETE", `/v1/jobs/${bobs}`, undefined, tokens.ebbt_bob!)).status).toBe(200);
  expect((await c.api("DELETE", `/v1/jobs/${alices}`)).status).toBe(200);
  expect((await c.job(alices)).user).toBe("ebbt_alice");
  // A batch script's arguments are private too.
  const script = await submitAs("ebbt_alice", { script: "#!/bin/sh\ntrue\n", args: ["alice-args"], hold: true });
  const seen = await c.api("GET", `/v1/jobs/${script}`, undefined, tokens.ebbt_bob!);
  expect(seen.json).toMatchObject({ private: true, args: null });
  expect(JSON.stringify(seen.json)).not.toContain("alice-args");
  expect((await c.api("GET", `/v1/jobs/${script}`, undefined, tokens.ebbt_alice!)).json.args).toEqual(["alice-args"]);
  expect((await c.api("DELETE", `/v1/jobs/${script}`)).status).toBe(200);
});

test("a job's token for no job the controller knows (one purged from the history) is refused, not taken for the controller's user", async () => {
  const key = readFileSync(join(c.stateDir, "cluster.key"), "utf8").trim();
  const ghost = jobToken(key, 9_999_999);
  const submitted = await c.api("POST", "/v1/jobs", { argv: ["true"], hold: true, cwd: "/tmp" }, ghost);
  expect({ status: submitted.status, code: submitted.json.error?.code }).toEqual({ status: 401, code: "unauthorized" });
  expect((await c.api("GET", "/v1/jobs", undefined, ghost)).status).toBe(401);
  // A known job's token still submits as its job's user.
  const parent = await submitAs("ebbt_bob", { argv: ["true"], hold: true });
  const child = await c.api("POST", "/v1/jobs", { argv: ["true"], hold: true, cwd: "/tmp" }, jobToken(key, parent));
  expect(child.status).toBe(201);
  expect((await c.job(child.json.id)).user).toBe("ebbt_bob");
  for (const id of [parent, child.json.id]) expect((await c.api("DELETE", `/v1/jobs/${id}`)).status).toBe(200);
});

// Last: its node would take other tests' jobs.
test("an agent that is not root runs every job as its own user, and ebb nodes says so", async () => {
  const user = USERS[0];
  const gid = Number(Bun.spawnSync(["id", "-g", user]).stdout.toString().trim());
  const home = join(base, "plain-agent");
  mkdirSync(home, { mode: 0o700 });
  chownSync(home, uid[user]!, gid);
  const key = readFileSync(join(c.stateDir, "cluster.key"), "utf8").trim();
  // setpriv execs the agent: the pid is the agent's, and only this test's.
  const agent = Bun.spawn(
    ["setpriv", `--reuid=${uid[user]}`, `--regid=${gid}`, "--init-groups", "--", process.execPath, join(ROOT, "src/main.ts"), "agent", "--controller", c.url, "--name", "plain", "--cpus", "1", "--state-dir", join(home, "state")],
    { cwd: home, env: { ...c.env, HOME: home, EBB_CLUSTER_KEY: key, EBB_LOG: "warn" }, stdout: "ignore", stderr: "pipe" },
  );
  try {
    await waitFor("node plain to be IDLE", async () => (await c.api("GET", "/v1/nodes")).json.nodes.find((n: any) => n.name === "plain")?.state === "IDLE", 90_000);
    const r = await c.ebb(["nodes"]);
    expect(r.stdout).toMatch(new RegExp(`\\nplain .*agent's user \\(${user}\\)`));
    expect(r.stdout).toMatch(/\nnode01 .*job's user/);
    const view = (await c.api("GET", "/v1/nodes")).json.nodes.find((n: any) => n.name === "plain");
    expect(view.runAs).toBe(`agent's user (${user})`);
    // A job of the cluster's token (its user: root) runs there as the agent's user, files and all.
    const out = join(home, "who.out");
    const id = await c.submit({ argv: ["sh", "-c", "id -un; touch made"], nodes: 1, nodelist: ["plain"], cwd: home, output: out });
    expect((await c.waitJob(id, ["COMPLETED", "FAILED"], 60_000)).state).toBe("COMPLETED");
    expect(readFileSync(out, "utf8").trim()).toBe(user);
    expect(statSync(join(home, "made")).uid).toBe(uid[user]!);
    expect((await c.job(id)).user).toBe("root");
  } finally {
    agent.kill("SIGTERM");
    await agent.exited;
  }
}, 180_000);
